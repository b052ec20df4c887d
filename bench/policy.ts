// What the audit log and the policy check cost on notes/get: the same
// server code with the audit log and without it, and a token without a
// policy beside one with a policy of its own (checked on every call, and
// passing). Target: each costs under 5% of notes/get's rate.
//
// On a machine others share, the rate moves from second to second by more
// than the few percent measured here. So both servers are first loaded alike
// and unmeasured (their code compiled, their caches warm), then each round
// loads the scenarios one after another, in turn forwards and backwards, and
// a cost is the median of each round's own ratio (with / without, measured a
// moment apart) rather than the ratio of two medians taken from different
// moments.
//
//   bun bench/policy.ts         prints the table (BENCH_SECONDS per scenario, default 10, in BENCH_ROUNDS interleaved rounds, default 5, at least MIN_ROUNDS)
//   import { benchPolicy }      returns the rows, for `bun run bench`
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eachRound, freePort, load, loadGenerator, median, medianRows, table, type Row } from "./lib.ts";

export interface PolicyBenchResult {
  rows: Row[];
  /** Share of notes/get's rate the audit log costs (1 - with / without), and the policy check (1 - with a policy / without). */
  auditCost: number;
  policyCost: number;
  /** The same from server CPU per request (with / without - 1): steadier on a shared machine. */
  auditCpuCost: number | null;
  policyCpuCost: number | null;
  /** Each round's audit cost on the rate, and on CPU per request, in the order run: how far one round's figure strays from the median. */
  auditRounds: number[];
  auditCpuRounds: number[] | null;
}

/** Rounds run at least: the median of each round's ratio needs several to hold still. */
const MIN_ROUNDS = 9;
/** Seconds of load in a run, at least: a second's server CPU is read in ticks of 10 ms. */
const MIN_SECONDS = 2;

async function start(dir: string, audit: boolean) {
  const port = freePort();
  const proc = Bun.spawn(["bun", join(import.meta.dir, "policy-server.ts")], {
    env: { ...process.env, HEARTH_DATA: dir, HEARTH_LOG: "off", HEARTH_METERING: "off", HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0", HEARTH_RATE_PRICED: "0", PORT: String(port), BENCH_AUDIT: audit ? "on" : "off" },
    stdout: "pipe",
    stderr: "inherit",
  });
  const lines: string[] = [];
  const reader = proc.stdout.getReader();
  let text = "";
  while (lines.length < 3) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the bench server ended before it was ready");
    text += new TextDecoder().decode(value);
    const parts = text.split("\n");
    text = parts.pop()!;
    lines.push(...parts.filter(Boolean));
  }
  reader.releaseLock();
  return { proc, base: lines[0], plain: lines[1], ruled: lines[2] };
}

export async function benchPolicy(o: { seconds?: number; rounds?: number } = {}): Promise<PolicyBenchResult> {
  const seconds = o.seconds ?? Number(process.env.BENCH_SECONDS ?? 10);
  const rounds = Math.max(MIN_ROUNDS, o.rounds ?? Number(process.env.BENCH_ROUNDS ?? 5));
  const each = Math.max(MIN_SECONDS, Math.round(seconds / rounds));
  const dir = mkdtempSync(join(tmpdir(), "hearth-bench-policy-"));
  loadGenerator();
  const on = await start(join(dir, "on"), true);
  const off = await start(join(dir, "off"), false);
  try {
    const get = (s: typeof on, token: string) => ({ url: `${s.base}/api/v1/notes/get?title=bench`, headers: { authorization: `Bearer ${token}` }, seconds: each, pid: s.proc.pid });
    const scenarios: [string, ReturnType<typeof get>][] = [
      ["notes/get, audit log off", get(off, off.plain)],
      ["notes/get, audit log on", get(on, on.plain)],
      ["notes/get, audit log on, token with a policy", get(on, on.ruled)],
    ];
    // Warmed alike, each for as long as a run, unmeasured.
    for (const [name, opts] of scenarios) await load(name, opts);
    const runs = await eachRound(scenarios, rounds, { alternate: true });
    const [bare, audited, ruled] = runs;
    const round = (x: number) => Math.round(x * 1000) / 1000;
    const rate = (a: Row[], b: Row[]) => a.map((x, r) => 1 - x.rps / b[r].rps);
    const cpuRounds = (a: Row[], b: Row[]) => (a.every((x, r) => x.cpu && b[r].cpu) ? a.map((x, r) => round(x.cpu! / b[r].cpu! - 1)) : null);
    const cpu = (a: Row[], b: Row[]) => {
      const each = cpuRounds(a, b);
      return each && median(each);
    };
    const auditRounds = rate(audited, bare).map(round);
    return {
      rows: medianRows(scenarios, runs),
      auditCost: round(median(auditRounds)),
      policyCost: round(median(rate(ruled, audited))),
      auditCpuCost: cpu(audited, bare),
      policyCpuCost: cpu(ruled, audited),
      auditRounds,
      auditCpuRounds: cpuRounds(audited, bare),
    };
  } finally {
    on.proc.kill();
    off.proc.kill();
    await Promise.all([on.proc.exited, off.proc.exited]);
    rmSync(dir, { recursive: true, force: true });
  }
}

const pct = (x: number | null) => (x === null ? "n/a" : `${(x * 100).toFixed(1)}%`);
export const policySummary = (r: PolicyBenchResult) =>
  `audit log: ${pct(r.auditCost)} of notes/get's rate (CPU per request ${pct(r.auditCpuCost)}; by round, rate ${r.auditRounds.map(pct).join(" ")}, CPU ${r.auditCpuRounds?.map(pct).join(" ") ?? "n/a"}); policy check: ${pct(r.policyCost)} (CPU ${pct(r.policyCpuCost)}); target < 5% each, each the median of the rounds' own ratios`;

if (import.meta.main) {
  const r = await benchPolicy();
  console.log(`${table(r.rows)}\n${policySummary(r)}`);
}
