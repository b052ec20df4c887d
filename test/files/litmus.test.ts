// The drive against Debian's litmus, the WebDAV server compliance suite:
// basic, copymove, props, locks and http, each run as its own program on a
// real instance with an app password, as a file manager would mount it. Every
// test must pass: one that fails, warns or is skipped is named.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startHearth, type Hearth } from "../harness.ts";
import { prepareLitmus } from "../prepare.ts";

const SUITES = ["basic", "copymove", "props", "locks", "http"];
const ready = prepareLitmus();
if (!ready.ok) console.log(`skipping the litmus WebDAV suite: ${ready.reason}`);

let h: Hearth;
let token: string;
let cwd: string;

beforeAll(async () => {
  if (!ready.ok) return;
  h = await startHearth();
  token = await h.token("alice", { scopes: ["files"] });
  // litmus writes its trace (debug.log) where it runs.
  cwd = mkdtempSync(join(tmpdir(), "hearth-litmus-"));
});
afterAll(async () => {
  if (!ready.ok) return;
  await h.stop();
  rmSync(cwd, { recursive: true, force: true });
});

interface Outcome {
  name: string;
  passed: boolean;
  text: string;
}

/** Each test litmus ran, from its report: ` 3. propset......... pass`, with any warning or failure written on the lines that follow. */
function outcomes(out: string): Outcome[] {
  const found: Outcome[] = [];
  // A test's name is written, then written again after a carriage return with its result.
  for (const line of out.split("\n").map((l) => l.split("\r").filter((part) => part.trim()).pop() ?? "")) {
    const numbered = /^\s*\d+\.\s+(\S+?)\.{2,}\s*(.*)$/.exec(line);
    if (numbered) {
      found.push({ name: numbered[1], passed: false, text: numbered[2] });
    } else if (found.length && /^\s+\S/.test(line) && !line.startsWith("<-") && !line.startsWith("->")) {
      found[found.length - 1].text += `\n${line.trim()}`;
    } else continue;
    const last = found[found.length - 1];
    last.passed = /(^|\n)(\.+ )?pass$/.test(last.text.trim()) && !/WARNING|FAIL|SKIPPED/.test(last.text);
  }
  return found;
}

describe.skipIf(!ready.ok)("litmus against /files/dav/", () => {
  test.each(SUITES)(
    "%s: every test passes",
    async (suite) => {
      const url = `${h.url}/files/dav/`;
      const p = Bun.spawn([`/usr/libexec/litmus/${suite}`, "--htdocs", "/usr/share/litmus/htdocs", url, "alice", token], { cwd, stdout: "pipe", stderr: "pipe" });
      const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
      await p.exited;
      const ran = outcomes(out);
      expect(ran.length, `litmus ${suite} reported no tests:\n${out}\n${err}`).toBeGreaterThan(0);
      const bad = ran.filter((o) => !o.passed).map((o) => `${o.name}: ${o.text}`);
      expect(bad, `litmus ${suite}:\n${out}`).toEqual([]);
      expect(p.exitCode, `litmus ${suite}:\n${out}\n${err}`).toBe(0);
    },
  );
});
