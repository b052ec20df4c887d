// No test sets a time limit of its own: the runner's (test/run.ts, ten
// minutes) is the only one, so a busy machine makes a test slower, not red.
// Waits are on conditions; a browser action waits as long as test/browser.ts
// lets every action wait.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const TEST = join(import.meta.dir, "..");

test("no test file sets a per-test timeout or a shorter wait for a browser condition", () => {
  const found: string[] = [];
  for (const f of new Bun.Glob("**/*.test.ts").scanSync({ cwd: TEST })) {
    if (f.includes("node_modules")) continue;
    const lines = readFileSync(join(TEST, f), "utf8").split("\n");
    lines.forEach((line, i) => {
      const closes = lines[i + 1]?.trim() === ");";
      if ((closes && /^\s+\d[\d_]*,$/.test(line)) || /^\s*\}, \d[\d_]*\);$/.test(line) || /\.waitFor\(\{[^}]*timeout:/.test(line))
        found.push(`test/${f}:${i + 1}: ${line.trim()}`);
    });
  }
  expect(found).toEqual([]);
});
