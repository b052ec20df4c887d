// What the audit log and the policy check cost on notes/get: the same
// server code with the audit log and without it, and a token without a
// policy beside one with a policy of its own (checked on every call, and
// passing). Target: each costs under 5% of notes/get's rate.
//
//   bun bench/policy.ts         prints the table (BENCH_SECONDS per scenario, default 10, in BENCH_ROUNDS interleaved rounds, default 5)
//   import { benchPolicy }      returns the rows, for `bun run bench`
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, interleaved, loadGenerator, table, type Row } from "./lib.ts";

export interface PolicyBenchResult {
  rows: Row[];
  /** Share of notes/get's rate the audit log costs (1 - with / without), and the policy check (1 - with a policy / without). */
  auditCost: number;
  policyCost: number;
  /** The same from server CPU per request (with / without - 1): steadier on a shared machine. */
  auditCpuCost: number | null;
  policyCpuCost: number | null;
}

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
  const rounds = o.rounds ?? Number(process.env.BENCH_ROUNDS ?? 5);
  const each = Math.max(1, Math.round(seconds / rounds));
  const dir = mkdtempSync(join(tmpdir(), "hearth-bench-policy-"));
  loadGenerator();
  const on = await start(join(dir, "on"), true);
  const off = await start(join(dir, "off"), false);
  try {
    const get = (s: typeof on, token: string) => ({ url: `${s.base}/api/v1/notes/get?title=bench`, headers: { authorization: `Bearer ${token}` }, seconds: each, pid: s.proc.pid });
    const rows = await interleaved(
      [
        ["notes/get, audit log off", get(off, off.plain)],
        ["notes/get, audit log on", get(on, on.plain)],
        ["notes/get, audit log on, token with a policy", get(on, on.ruled)],
      ],
      rounds,
    );
    const [bare, audited, ruled] = rows;
    const cpu = (a?: number, b?: number) => (a && b ? Math.round((a / b - 1) * 1000) / 1000 : null);
    return {
      rows,
      auditCost: Math.round((1 - audited.rps / bare.rps) * 1000) / 1000,
      policyCost: Math.round((1 - ruled.rps / audited.rps) * 1000) / 1000,
      auditCpuCost: cpu(audited.cpu, bare.cpu),
      policyCpuCost: cpu(ruled.cpu, audited.cpu),
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
  `audit log: ${pct(r.auditCost)} of notes/get's rate (CPU per request ${pct(r.auditCpuCost)}); policy check: ${pct(r.policyCost)} (CPU ${pct(r.policyCpuCost)}); target < 5% each`;

if (import.meta.main) {
  const r = await benchPolicy();
  console.log(`${table(r.rows)}\n${policySummary(r)}`);
}
