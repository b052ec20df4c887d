// one store: the docs' helper examples, loaded as a drop-in's files; starts no instance of the pass's store
// docs/plugins.md's "Helpers, by example" as an author would copy it: each
// block is a file of a drop-in's folder, loaded the way the instance loads a
// drop-in (importing "hearth" and its sub-entries, nothing else), and each
// line ending `// → value` gives that value. The blocks type-check against
// the SDK as an author's editor checks them.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeTsconfig } from "../../core/cli/plugin.ts";
import { serveSdk } from "../../core/registry.ts";
import { docs } from "./docs-plugin.ts";

const section = /^## Helpers, by example\n([\s\S]*?)^## /m.exec(readFileSync(docs, "utf8"))?.[1] ?? "";
const blocks = [...section.matchAll(/^```ts\n([\s\S]*?)^```/gm)].map((m) => m[1]);
const folder = mkdtempSync(join(tmpdir(), "hearth-docs-helpers-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** A block with each `expr; // → value` line made a check that expr equals value. */
function checked(block: string): string {
  const lines = block.split("\n").map((line, i) => {
    const m = /^(.*?);\s*\/\/ → (.*)$/.exec(line);
    return m ? `__same(${m[1]}, ${m[2]}, ${JSON.stringify(`line ${i + 1}: ${line}`)});` : line;
  });
  return `${lines.join("\n")}\nfunction __same(got: unknown, want: unknown, where: string) {\n  if (!Bun.deepEquals(got, want, true)) throw new Error(\`\${where}: got \${JSON.stringify(got)}\`);\n}\n`;
}

test("the docs show helpers at work, in blocks with checked results", () => {
  expect(blocks.length).toBeGreaterThanOrEqual(8);
  expect(blocks.filter((b) => b.includes("// → ")).length).toBeGreaterThanOrEqual(6);
});

test("each block loads as a drop-in's file and gives the values the docs show", async () => {
  await serveSdk();
  for (const [i, block] of blocks.entries()) {
    const file = join(folder, `helpers${i + 1}.ts`);
    writeFileSync(file, checked(block));
    await import(file);
  }
});

test("each block type-checks against the SDK in a plugin's folder", async () => {
  blocks.forEach((b, i) => writeFileSync(join(folder, `helpers${i + 1}.ts`), checked(b)));
  expect(writeTsconfig(folder)).toBe(true);
  // On one thread: the same check, without tsc's parallel checkers each going through the core's types again.
  const p = Bun.spawn(["bun", join(import.meta.dir, "../../node_modules/typescript/bin/tsc"), "--noEmit", "--singleThreaded", "-p", folder], { cwd: folder, stdout: "pipe", stderr: "pipe" });
  const [out, code] = await Promise.all([new Response(p.stdout).text(), p.exited]);
  expect(out).toBe("");
  expect(code).toBe(0);
});
