// Scheduler figures, on the real clock and the real croner timer:
//  1. 10,000 events due within one minute: all fire once; p50/p99 lateness
//     (claimed and finished, against the due time).
//  2. 100,000 future events: RSS growth and CPU while idle.
// `bun bench/events.ts` prints a table; benchEvents() returns the numbers.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureAccount } from "../core/auth/tokens.ts";
import { dispatch } from "../core/dispatch.ts";
import type { Caller } from "../core/plugin.ts";
import { createRuntime } from "../core/instance.ts";
import { schedulerOf } from "../core/scheduler/index.ts";

export interface EventsBench {
  firing: {
    events: number;
    windowSec: number;
    firedOnce: number;
    duplicates: number;
    notFired: number;
    claimLatenessMs: { p50: number; p99: number; max: number };
    doneLatenessMs: { p50: number; p99: number; max: number };
  };
  idle: {
    events: number;
    createSec: number;
    rssBeforeMB: number;
    rssAfterMB: number;
    rssGrowthMB: number;
    idleSec: number;
    /** CPU of this process while idle with the events held, and before any were created. */
    idleCpuMsPerSec: number;
    baselineCpuMsPerSec: number;
    timerWakes: number;
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mb = (n: number) => Math.round((n / 1048576) * 10) / 10;

function pct(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function instance() {
  const dir = mkdtempSync(join(tmpdir(), "hearth-bench-events-"));
  const rt = await createRuntime({ env: { HEARTH_DATA: dir, HEARTH_LOG: "off", HEARTH_COLLECTORS: "off" } });
  await rt.start();
  const account = await ensureAccount(rt.store, "bench");
  const caller: Caller = { account, scopes: "*", via: "local" };
  return {
    rt,
    caller,
    /** Creates events through dispatch, a thousand to a transaction. */
    async create(whens: number[]) {
      for (let i = 0; i < whens.length; i += 1000) {
        await rt.store.write(async () => {
          for (const when of whens.slice(i, i + 1000))
            await dispatch(rt, { service: "events", method: "create", args: { title: "bench", when: new Date(when).toISOString() }, caller, requestId: "bench" });
        });
      }
    },
    async close() {
      schedulerOf(rt).stop();
      await rt.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function firingBench(events: number, windowSec: number): Promise<EventsBench["firing"]> {
  const inst = await instance();
  try {
    // Due times start after creation has surely finished, and are spread over the window on whole seconds.
    const lead = 3000 + events * 0.5;
    const start = Math.ceil((Date.now() + lead) / 1000) * 1000;
    const whens = Array.from({ length: events }, (_, i) => start + Math.floor((i * windowSec * 1000) / events));
    await inst.create(whens);
    if (Date.now() >= start) throw new Error("creating the events took longer than the lead time; the lateness figures would be wrong");
    const deadline = start + windowSec * 1000 + 30_000;
    const count = () => inst.rt.store.reader.query<{ n: number }, []>("SELECT count(*) AS n FROM schedule_firings WHERE status != 'claimed'").get()!.n;
    while (Date.now() < deadline && count() < events) await sleep(250);
    const rows = inst.rt.store.reader
      .query<{ ref: string; due: number; claimed: number; finished: number | null; status: string }, []>("SELECT ref, due, claimed, finished, status FROM schedule_firings")
      .all();
    const perRef = new Map<string, number>();
    for (const r of rows) perRef.set(r.ref, (perRef.get(r.ref) ?? 0) + 1);
    const claim = rows.map((r) => r.claimed - r.due).sort((a, b) => a - b);
    const done = rows.filter((r) => r.finished !== null).map((r) => r.finished! - r.due).sort((a, b) => a - b);
    return {
      events,
      windowSec,
      firedOnce: rows.filter((r) => r.status === "done").length,
      duplicates: [...perRef.values()].filter((n) => n > 1).length,
      notFired: events - perRef.size,
      claimLatenessMs: { p50: pct(claim, 50), p99: pct(claim, 99), max: claim[claim.length - 1] ?? NaN },
      doneLatenessMs: { p50: pct(done, 50), p99: pct(done, 99), max: done[done.length - 1] ?? NaN },
    };
  } finally {
    await inst.close();
  }
}

/** CPU milliseconds per second this process uses while it waits. */
async function idleCpu(seconds: number): Promise<number> {
  const cpu0 = process.cpuUsage();
  await sleep(seconds * 1000);
  const cpu = process.cpuUsage(cpu0);
  return Math.round(((cpu.user + cpu.system) / 1000 / seconds) * 100) / 100;
}

async function idleBench(events: number, idleSec: number): Promise<EventsBench["idle"]> {
  const inst = await instance();
  try {
    const baselineCpu = await idleCpu(idleSec);
    Bun.gc(true);
    const rssBefore = process.memoryUsage().rss;
    const now = Date.now();
    const t0 = performance.now();
    // Spread over the coming year, none due during the measurement.
    await inst.create(Array.from({ length: events }, (_, i) => now + 86_400_000 + Math.floor((i * 364 * 86_400_000) / events)));
    const createSec = (performance.now() - t0) / 1000;
    Bun.gc(true);
    await sleep(500);
    Bun.gc(true);
    const rssAfter = process.memoryUsage().rss;
    // Count the scheduler's runs while idle by watching its ledger queries' entry point.
    const sch = schedulerOf(inst.rt);
    let wakes = 0;
    const runDue = sch.runDue.bind(sch);
    sch.runDue = (at?: Date) => (wakes++, runDue(at));
    // Let the collector and SQLite finish with the creation burst before measuring quiet.
    await sleep(2000);
    const cpu = await idleCpu(idleSec);
    return {
      events,
      createSec: Math.round(createSec * 10) / 10,
      rssBeforeMB: mb(rssBefore),
      rssAfterMB: mb(rssAfter),
      rssGrowthMB: mb(rssAfter - rssBefore),
      idleSec,
      idleCpuMsPerSec: cpu,
      baselineCpuMsPerSec: baselineCpu,
      timerWakes: wakes,
    };
  } finally {
    await inst.close();
  }
}

export async function benchEvents(o: { events?: number; windowSec?: number; idleEvents?: number; idleSec?: number } = {}): Promise<EventsBench> {
  const firing = await firingBench(o.events ?? 10_000, o.windowSec ?? 60);
  const idle = await idleBench(o.idleEvents ?? 100_000, o.idleSec ?? 10);
  return { firing, idle };
}

export function eventsTable(b: EventsBench): string {
  const f = b.firing;
  const i = b.idle;
  const rows: [string, string, string][] = [
    [`events due within ${f.windowSec} s`, String(f.events), ""],
    ["fired exactly once", `${f.firedOnce} (duplicates ${f.duplicates}, never fired ${f.notFired})`, `all ${f.events}`],
    ["lateness to claim p50 / p99 / max", `${f.claimLatenessMs.p50} / ${f.claimLatenessMs.p99} / ${f.claimLatenessMs.max} ms`, "p99 < 1000 ms"],
    ["lateness to done p50 / p99 / max", `${f.doneLatenessMs.p50} / ${f.doneLatenessMs.p99} / ${f.doneLatenessMs.max} ms`, "p99 < 1000 ms"],
    ["future events held", `${i.events} (created in ${i.createSec} s)`, ""],
    ["RSS before / after", `${i.rssBeforeMB} / ${i.rssAfterMB} MB`, ""],
    ["idle RSS growth", `${i.rssGrowthMB} MB`, "< 50 MB"],
    [`idle CPU over ${i.idleSec} s, held / none`, `${i.idleCpuMsPerSec} / ${i.baselineCpuMsPerSec} ms/s (${i.timerWakes} timer wakes)`, ""],
  ];
  const w = [0, 1, 2].map((c) => Math.max(...rows.map((r) => r[c].length), ["scheduler", "result", "target"][c].length));
  const line = (r: string[]) => `| ${r.map((v, c) => v.padEnd(w[c])).join(" | ")} |`;
  return [line(["scheduler", "result", "target"]), `|${w.map((n) => "-".repeat(n + 2)).join("|")}|`, ...rows.map(line)].join("\n");
}

if (import.meta.main) {
  const arg = (name: string) => {
    const a = process.argv.find((x) => x.startsWith(`--${name}=`));
    return a ? Number(a.split("=")[1]) : undefined;
  };
  const b = await benchEvents({ events: arg("events"), windowSec: arg("window"), idleEvents: arg("idle-events"), idleSec: arg("idle") });
  console.log(eventsTable(b));
}
