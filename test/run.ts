// The whole suite, both passes at once: on the embedded defaults (SQLite,
// blobs on disk) and on PostgreSQL with blobs in S3. A few `bun test`
// processes are kept busy from one queue holding both passes' files, the
// longest first: a long file runs in a process of its own, short ones a
// handful at a time, and a process that ends takes the next piece, whichever
// pass it is of. So no process sits idle while another still has a long
// list, however far the recorded times are from this machine's, and the pass
// with more to do does not finish alone on a machine the other left idle. Pieces share nothing: each test process makes its own
// temp folders, its own PostgreSQL cluster and S3 server, and listens on
// ports the system hands out.
//
// Each failed test is told as it fails; each piece's output is printed whole
// once it ends, ending with bun's summary lines; then one line for the whole
// run, `N passed, N failed` (and `, N skipped`). The exit status is non-zero
// when any piece failed.
//
// `bun test/run.ts [--workers N] [--timeout MS] [--piece S] [--only sqlite|pg] [--record] [--shots] [path ...]`
// `--record` writes each file's time in this run to test/durations.json;
// `--shots` writes the browser tests' screenshots in a whole run too.
//
// A file whose first line is `// one store: <why>` runs in the SQLite pass
// only: its subject (a page, a command, a protocol) does not change with the
// store, and what it touches of the store is checked on both by the files
// its reason names; or it chooses its stores itself (a PostgreSQL cluster of
// its own), so the PostgreSQL pass would only run it again the same. The
// reason is required, so each such file says why.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";

const ROOT = join(import.meta.dir, "..");

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1] : fallback;
}
const flag = (name: string) => process.argv.includes(`--${name}`);

/**
 * Test processes at once, both passes together. A piece keeps a core a quarter busy on average (most tests wait on
 * servers, browsers and timers): three per pass left two cores a third idle, eight keep them busy.
 */
const WORKERS = Math.max(1, Number(option("workers", option("groups", "8"))));
/**
 * Per test, in ms. Generous on purpose: the passes run side by side on a
 * machine that may be busy with other work, and a test that is only slow
 * must not fail. A test stuck for good still fails, after this long.
 */
const TIMEOUT = option("timeout", "600000");
const ONLY = option("only", "");
const RECORD = flag("record");

const ALL_PASSES: { name: string; env: Record<string, string> }[] = [
  { name: "sqlite", env: {} },
  { name: "pg", env: { HEARTH_TEST_DB: "pg", HEARTH_TEST_BLOBS: "s3" } },
];
const PASSES = ALL_PASSES.filter((p) => !ONLY || p.name === ONLY);

/**
 * Seconds each file took in a recorded run (`--record`; on a busy machine,
 * only their proportions matter), to start the long ones first; a file not
 * listed counts as a middling one, so a new file is never left for last.
 * Only the order depends on these numbers, never a result.
 */
const DURATIONS = join(import.meta.dir, "durations.json");
const seconds: Record<string, number> = JSON.parse(readFileSync(DURATIONS, "utf8"));
const UNKNOWN = 5;
/**
 * Files shorter than this share a process, up to this many seconds of them. A process costs a second or more of CPU
 * before its first test (bun, the app's modules, its first instance, a PostgreSQL cluster and an S3 server), and the
 * browser files in one process share its Chromium (test/browser.ts): pieces of three minutes rather than one made 170
 * processes 93, and with one queue for both passes the longest files, alone, still set how long the run takes (the
 * eight processes' loads, by the recorded times, end within 4% of each other either way).
 */
const PIECE = Number(option("piece", "180"));

/** Paths named on the command line (`bun test/run.ts test/notes test/auth`) keep the run to the files under them. */
const FLAGS = ["--record", "--shots"];
const wanted = process.argv.slice(2).filter((a, i, all) => !a.startsWith("--") && !(all[i - 1]?.startsWith("--") && !FLAGS.includes(all[i - 1])));
/**
 * Screenshots are for a person looking at a page: a run of the files named on the command line writes them, a whole
 * run (no paths) does not unless `--shots` is given (test/browser.ts).
 */
const SHOTS = flag("shots") || wanted.length > 0;
const files = Array.from(new Bun.Glob("**/*.test.ts").scanSync({ cwd: import.meta.dir }))
  .filter((f) => !f.split("/").includes("node_modules"))
  .map((f) => relative(ROOT, join(import.meta.dir, f)))
  .filter((f) => !wanted.length || wanted.some((w) => f === w.replace(/^\.\//, "") || f.startsWith(`${w.replace(/^\.\//, "").replace(/\/$/, "")}/`)))
  .sort();

const weight = (f: string) => seconds[f] ?? UNKNOWN;

/** `// one store: <why>` on a file's first line: the file runs in the SQLite pass only (see above). */
const ONE_STORE = /^\/\/ one store: \S/;
const oneStore = new Set(files.filter((f) => ONE_STORE.test(readFileSync(join(ROOT, f), "utf8").split("\n", 1)[0])));
const filesFor = (pass: string) => (pass === "sqlite" ? files : files.filter((f) => !oneStore.has(f)));

/** The files in pieces, longest first: a long file alone, short ones together. */
function pieces(all: string[]): string[][] {
  const out: string[][] = [];
  let short: string[] = [];
  let load = 0;
  for (const f of [...all].sort((a, b) => weight(b) - weight(a) || a.localeCompare(b))) {
    if (weight(f) >= PIECE) {
      out.push([f]);
      continue;
    }
    short.push(f);
    load += weight(f);
    if (load >= PIECE) {
      out.push(short);
      short = [];
      load = 0;
    }
  }
  if (short.length) out.push(short);
  return out;
}

interface Outcome {
  label: string;
  files: string[];
  code: number;
  pass: number;
  fail: number;
  skip: number;
  summary: string[];
  /** What bun printed for each failed test: the lines after the test before it, up to its `(fail)` line. */
  failures: string[][];
  /** Seconds per file: the piece's wall time, shared out by the time its tests reported. */
  took: Record<string, number>;
  /** CPU seconds the piece's process and the children it waited for used (a server a test started as a daemon is not counted). */
  cpu: number;
  /** CPU seconds of the PostgreSQL clusters the piece started (daemons, so not in `cpu`), once each has stopped. */
  cluster: Promise<number>;
  /** CPU seconds of its browsers' renderers, which no process the piece waited for reaps, so not in `cpu` either (test/browser.ts). */
  chromium: number;
}

/**
 * A file per piece where each PostgreSQL cluster it starts notes that it did and, as it stops, the CPU it used
 * (test/pg.ts): a cluster is a daemon, stopped a moment after its test process ends, so its CPU is read from
 * there, without holding up the next piece.
 */
const CPU_DIR = mkdtempSync(join(tmpdir(), "hearth-run-cpu-"));
async function clusterCpu(file: string): Promise<number> {
  const read = () => (existsSync(file) ? readFileSync(file, "utf8").split("\n") : []);
  // A watcher notices its process is gone within a second or so; one that never reports (killed) is left out after two minutes.
  for (let i = 0; i < 600; i++) {
    const lines = read();
    if (lines.filter((l) => l.startsWith("cpu ")).length >= lines.filter((l) => l === "started").length) break;
    await Bun.sleep(200);
  }
  return read().reduce((n, l) => n + (l.startsWith("cpu ") ? Number(l.slice(4)) : 0), 0);
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

/**
 * Each failed test's own output: bun prints a test's errors and its code frame before its `(fail)` line, after the
 * line that ended the test before it. Kept to its last lines, so a run's end says why it failed even when only the
 * tail of the output is kept.
 */
function failuresOf(text: string, keep = 30): string[][] {
  const lines = text.split("\n");
  const out: string[][] = [];
  let from = 0;
  for (let i = 0; i < lines.length; i++) {
    if (/^\((?:pass|skip|todo)\) |^\S+\.test\.ts:$/.test(lines[i])) from = i + 1;
    else if (lines[i].startsWith("(fail) ")) {
      out.push(lines.slice(Math.max(from, i + 1 - keep), i + 1));
      from = i + 1;
    }
  }
  return out;
}

/** Each file's share of a piece's wall time, by the milliseconds its tests reported under its heading (at least a little each). */
function shares(text: string, group: string[], wall: number): Record<string, number> {
  if (group.length === 1) return { [group[0]]: wall };
  const ms: Record<string, number> = Object.fromEntries(group.map((f) => [f, 50]));
  let current: string | null = null;
  for (const line of text.split("\n")) {
    const heading = line.match(/^(\S+\.test\.ts):$/);
    if (heading) current = group.find((f) => heading[1].endsWith(f)) ?? null;
    const t = line.match(/^\((?:pass|fail)\) .* \[([\d.]+)(ms|s)\]$/);
    if (t && current) ms[current] += Number(t[1]) * (t[2] === "s" ? 1000 : 1);
  }
  const total = Object.values(ms).reduce((a, b) => a + b, 0);
  return Object.fromEntries(group.map((f) => [f, (wall * ms[f]) / total]));
}

async function runPiece(label: string, env: Record<string, string>, group: string[]): Promise<Outcome> {
  const base = { ...process.env };
  delete base.HEARTH_TEST_DB;
  delete base.HEARTH_TEST_BLOBS;
  const began = Date.now();
  const cpuFile = join(CPU_DIR, label.replace(/\W+/g, "-"));
  const proc = Bun.spawn(["bun", "test", "--timeout", TIMEOUT, ...group.map((f) => `./${f}`)], {
    cwd: ROOT,
    env: { ...base, ...shared, ...env, HEARTH_TEST_CLUSTER_CPU: cpuFile, ...(SHOTS ? {} : { HEARTH_TEST_SHOTS: "off" }) },
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
  const usage = proc.resourceUsage();
  const cpu = usage ? Number(usage.cpuTime.user + usage.cpuTime.system) / 1e6 : 0;
  const chromium = existsSync(cpuFile) ? readFileSync(cpuFile, "utf8").split("\n").reduce((n, l) => n + (l.startsWith("chromium ") ? Number(l.slice(9)) : 0), 0) : 0;
  const s = summaryOf(text);
  const header = `==== ${label}: ${group.join(" ")} ====`;
  process.stdout.write(`\n${header}\n${text.trimEnd()}\n==== ${label} exited ${code}, ${cpu.toFixed(1)} s of CPU${chromium ? ` (and ${chromium.toFixed(1)} s of its browsers' renderers)` : ""} ====\n`);
  // A piece that stopped before bun's summary (a crash) counts as a failure.
  const fail = s.lines.length ? s.fail : Math.max(1, s.fail);
  const failures = failuresOf(text);
  // A process that ended without a summary has no (fail) line to show; its last lines say why.
  if (!s.lines.length) failures.push(["the process ended before bun's summary; its last lines:", ...text.trimEnd().split("\n").slice(-30)]);
  const cluster = clusterCpu(cpuFile);
  void cluster.then((c) => {
    if (c > 0) console.log(`==== ${label} cluster: ${c.toFixed(1)} s of CPU ====`);
  });
  return { label, files: group, code, pass: s.pass, fail, skip: s.skip, summary: s.lines, failures, took: shares(text, group, (Date.now() - began) / 1000), cpu, cluster, chromium };
}

const started = Date.now();
/**
 * The PostgreSQL pass starts a cluster in each test process: one made here, with the built-in tables' database
 * migrated in it, is copied by each instead of running initdb and the migrations again (test/pg.ts), which cost
 * two seconds of CPU in every piece. Each process still has a cluster of its own.
 */
const shared: Record<string, string> = {};
if (PASSES.some((p) => p.name === "pg")) {
  const { pgBin, snapshotPg } = await import("./pg.ts");
  if (pgBin("initdb")) {
    const { makeTemplate } = await import("./harness.ts");
    shared.HEARTH_TEST_PG_SNAPSHOT = await snapshotPg(makeTemplate);
  }
}
const outcomes: Outcome[] = [];
/** Both passes' pieces in one queue, the longest first (on a tie, the passes take turns). */
const queue = PASSES.flatMap((pass) => {
  const own = pieces(filesFor(pass.name));
  return own.map((group, i) => ({ label: `${pass.name} ${i + 1}/${own.length}`, env: pass.env, group, i, load: group.reduce((n, f) => n + weight(f), 0) }));
}).sort((a, b) => b.load - a.load || a.i - b.i);
let next = 0;
await Promise.all(
  Array.from({ length: Math.min(WORKERS, queue.length) }, async () => {
    while (next < queue.length) {
      const p = queue[next++];
      outcomes.push(await runPiece(p.label, p.env, p.group));
    }
  }),
);
const clusters = await Promise.all(outcomes.map((o) => o.cluster));
rmSync(CPU_DIR, { recursive: true, force: true });

console.log("");
// Why each failure failed, once more at the very end: the whole output is long, and often only its tail is kept.
for (const o of outcomes)
  for (const f of o.failures) console.log(`---- ${o.label} (${o.files.join(" ")}) ----\n${f.join("\n")}`);
for (const o of outcomes) if (o.code !== 0 || o.fail > 0) console.log(`${o.label} (${o.files.join(" ")}): ${o.pass} passed, ${o.fail} failed (exit ${o.code}) ${o.summary.at(-1) ?? "no summary: the process ended early"}`);
const slowest = outcomes.flatMap((o) => Object.entries(o.took).map(([f, s]) => ({ f, s, pass: o.label.split(" ")[0] }))).sort((a, b) => b.s - a.s);
console.log(`slowest: ${slowest.slice(0, 8).map((x) => `${x.f} (${x.pass}) ${Math.round(x.s)} s`).join(", ")}`);
// A piece's CPU counts its clusters' and its browsers' renderers'.
const spent = outcomes.map((o, i) => ({ o, cpu: o.cpu + clusters[i] + o.chromium })).sort((a, b) => b.cpu - a.cpu);
console.log(`most CPU: ${spent.slice(0, 8).map(({ o, cpu }) => `${o.files.join(" ")} (${o.label.split(" ")[0]}) ${Math.round(cpu)} s`).join(", ")}`);
const clusterTotal = clusters.reduce((n, c) => n + c, 0);
const chromiumTotal = outcomes.reduce((n, o) => n + o.chromium, 0);
console.log(
  `${Math.round((Date.now() - started) / 1000)} s in all, ${Math.round(spent.reduce((n, x) => n + x.cpu, 0))} s of CPU (${Math.round(clusterTotal)} of it PostgreSQL clusters', ${Math.round(chromiumTotal)} Chromium's renderers'), ${outcomes.length} processes`,
);
const total = (k: "pass" | "fail" | "skip") => outcomes.reduce((n, o) => n + o[k], 0);
const failed = outcomes.some((o) => o.code !== 0 || o.fail > 0);
console.log(`${total("pass")} passed, ${total("fail")} failed${total("skip") ? `, ${total("skip")} skipped` : ""}`);

if (RECORD) {
  // The longer of the two passes' times, per file: the order that matters is the slower pass's.
  const exists = new Set(Array.from(new Bun.Glob("**/*.test.ts").scanSync({ cwd: import.meta.dir })).map((f) => relative(ROOT, join(import.meta.dir, f))));
  const took: Record<string, number> = Object.fromEntries(Object.entries(seconds).filter(([f]) => exists.has(f) && !files.includes(f)));
  for (const x of slowest) took[x.f] = Math.max(took[x.f] ?? 0, Math.round(x.s * 10) / 10);
  const sorted = Object.fromEntries(Object.entries(took).sort(([a], [b]) => a.localeCompare(b)));
  writeFileSync(DURATIONS, `${JSON.stringify(sorted, null, 2)}\n`);
  console.log(`recorded ${Object.keys(took).length} files' times in test/durations.json`);
}
process.exit(failed ? 1 : 0);
