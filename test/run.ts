// The whole suite, both passes at once: on the embedded defaults (SQLite,
// blobs on disk) and on PostgreSQL with blobs in S3. Each pass is split into
// groups of test files, and every group is a `bun test` process of its own,
// so a group waiting on a server, a subprocess or a timer leaves the cores to
// the others. Groups share nothing: each test process makes its own temp
// folders, its own PostgreSQL cluster and S3 server, and listens on ports the
// system hands out.
//
// Each failed test is told as it fails; each group's output is printed whole
// once it ends, ending with bun's summary lines; then one line for the whole
// run, `N passed, N failed` (and `, N skipped`). The exit status is non-zero
// when any group failed.
//
// `bun test/run.ts [--groups N] [--timeout MS] [--only sqlite|pg] [path ...]`
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";

const ROOT = join(import.meta.dir, "..");

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1] : fallback;
}

/** Test files per pass. Two passes of three groups keep two cores busy while most tests wait on servers, browsers and timers. */
const GROUPS = Math.max(1, Number(option("groups", "3")));
/**
 * Per test, in ms. Generous on purpose: the passes run side by side on a
 * machine that may be busy with other work, and a test that is only slow
 * must not fail. A test stuck for good still fails, after this long.
 */
const TIMEOUT = option("timeout", "600000");
const ONLY = option("only", "");

const ALL_PASSES: { name: string; env: Record<string, string> }[] = [
  { name: "sqlite", env: {} },
  { name: "pg", env: { HEARTH_TEST_DB: "pg", HEARTH_TEST_BLOBS: "s3" } },
];
const PASSES = ALL_PASSES.filter((p) => !ONLY || p.name === ONLY);

/**
 * Seconds each file's tests took in one SQLite pass (on a busy machine: only
 * their proportions matter), to balance the groups; a file not listed counts
 * as a short one. Only the balance depends on these numbers, never a result.
 */
const seconds: Record<string, number> = JSON.parse(readFileSync(join(import.meta.dir, "durations.json"), "utf8"));
const TYPICAL = 1;

/** Paths named on the command line (`bun test/run.ts test/notes test/auth`) keep the run to the files under them. */
const wanted = process.argv.slice(2).filter((a, i, all) => !a.startsWith("--") && !all[i - 1]?.startsWith("--"));
const files = Array.from(new Bun.Glob("**/*.test.ts").scanSync({ cwd: import.meta.dir }))
  .filter((f) => !f.split("/").includes("node_modules"))
  .map((f) => relative(ROOT, join(import.meta.dir, f)))
  .filter((f) => !wanted.length || wanted.some((w) => f === w.replace(/^\.\//, "") || f.startsWith(`${w.replace(/^\.\//, "").replace(/\/$/, "")}/`)))
  .sort();

/** Longest first, each to the group with the least so far. */
function split(all: string[], n: number): string[][] {
  const groups = Array.from({ length: n }, () => ({ files: [] as string[], load: 0 }));
  const weight = (f: string) => seconds[f] ?? TYPICAL;
  for (const f of [...all].sort((a, b) => weight(b) - weight(a) || a.localeCompare(b))) {
    const g = groups.reduce((least, x) => (x.load < least.load ? x : least));
    g.files.push(f);
    g.load += weight(f);
  }
  return groups.map((g) => g.files.sort()).filter((g) => g.length > 0);
}

interface Outcome {
  label: string;
  code: number;
  pass: number;
  fail: number;
  skip: number;
  summary: string[];
}

/** bun's closing lines: ` N pass`, ` N skip`, ` N fail`, ..., `Ran N tests across N files. [time]`. */
function summaryOf(text: string): { pass: number; fail: number; skip: number; lines: string[] } {
  const lines = text.split("\n");
  const count = (word: string) => {
    const m = lines.map((l) => l.match(new RegExp(`^\\s*(\\d+) ${word}$`))).filter(Boolean).at(-1);
    return m ? Number(m[1]) : 0;
  };
  const ran = lines.findLastIndex((l) => /^Ran \d+ tests? across/.test(l));
  let from = ran;
  while (from > 0 && /^\s*\d+ [a-z]/.test(lines[from - 1])) from--;
  return { pass: count("pass"), fail: count("fail"), skip: count("skip"), lines: ran >= 0 ? lines.slice(from, ran + 1) : [] };
}

async function runGroup(label: string, env: Record<string, string>, group: string[]): Promise<Outcome> {
  const base = { ...process.env };
  delete base.HEARTH_TEST_DB;
  delete base.HEARTH_TEST_BLOBS;
  const proc = Bun.spawn(["bun", "test", "--timeout", TIMEOUT, ...group.map((f) => `./${f}`)], {
    cwd: ROOT,
    env: { ...base, ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  // bun writes results to stderr and what tests print to stdout; both are kept, in the order each came. A failure is
  // also told at once, so a long run says early that it will fail.
  let text = "";
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    let line = "";
    for await (const chunk of stream) {
      const part = decoder.decode(chunk, { stream: true });
      text += part;
      const lines = (line + part).split("\n");
      line = lines.pop()!;
      for (const l of lines) if (l.startsWith("(fail)")) console.log(`[${label}] ${l}`);
    }
  };
  await Promise.all([drain(proc.stdout), drain(proc.stderr), proc.exited]);
  const code = proc.exitCode ?? 1;
  const s = summaryOf(text);
  const header = `==== ${label}: ${group.length} files ====`;
  process.stdout.write(`\n${header}\n${text.trimEnd()}\n==== ${label} exited ${code} ====\n`);
  // A group that stopped before bun's summary (a crash) counts as a failure.
  const fail = s.lines.length ? s.fail : Math.max(1, s.fail);
  return { label, code, pass: s.pass, fail, skip: s.skip, summary: s.lines };
}

const started = Date.now();
const jobs: Promise<Outcome>[] = [];
for (const pass of PASSES) {
  const groups = split(files, GROUPS);
  groups.forEach((g, i) => jobs.push(runGroup(`${pass.name} ${i + 1}/${groups.length}`, pass.env, g)));
}
const outcomes = await Promise.all(jobs);

console.log("");
for (const o of outcomes) console.log(`${o.label}: ${o.pass} passed, ${o.fail} failed, ${o.skip} skipped (exit ${o.code}) ${o.summary.at(-1) ?? "no summary: the process ended early"}`);
console.log(`${Math.round((Date.now() - started) / 1000)} s in all`);
const total = (k: "pass" | "fail" | "skip") => outcomes.reduce((n, o) => n + o[k], 0);
const failed = outcomes.some((o) => o.code !== 0 || o.fail > 0);
console.log(`${total("pass")} passed, ${total("fail")} failed${total("skip") ? `, ${total("skip")} skipped` : ""}`);
process.exit(failed ? 1 : 0);
