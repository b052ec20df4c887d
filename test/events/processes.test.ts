// Exactly once across processes: two instances racing on one database file,
// and an instance killed in the middle of a firing, whose firing another
// instance runs once the dead one's lease on it runs out.
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dbEnv, startHearth, TestClock } from "../harness.ts";
import { schedulerOf } from "../../core/scheduler/index.ts";
import { asked } from "./fixtures/agent/index.ts";
import { pluginPaths, startInstance } from "./instance.ts";
import { sqlAll, sqlGet } from "../sql.ts";

const script = join(import.meta.dir, "fixtures", "process.ts");
const T0 = Date.parse("2026-07-01T09:00:00Z");

type Opts = { dataDir: string; start: number; step: number; steps: number; plugins?: string[]; env?: Record<string, string>; wait?: boolean };

/** A process on the data folder's database: on PostgreSQL, the one this process's instances on that folder use. */
async function spawn(o: Opts) {
  const opts = { ...o, env: { ...(await dbEnv(o.dataDir)), ...o.env } };
  return Bun.spawn(["bun", script, JSON.stringify(opts)], { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
}

/** Reads stdout line by line. */
function lines(p: Awaited<ReturnType<typeof spawn>>) {
  const reader = p.stdout.getReader();
  let buf = "";
  return async function next(): Promise<string | null> {
    for (;;) {
      const nl = buf.indexOf("\n");
      if (nl >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        return line;
      }
      const { value, done } = await reader.read();
      if (done) {
        const rest = buf;
        buf = "";
        return rest || null;
      }
      buf += new TextDecoder().decode(value);
    }
  };
}

test("two processes on one database file fire every firing exactly once between them", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "hearth-events-race-"));
  const clock = new TestClock(T0);
  try {
    const h = await startHearth({ clock, dataDir });
    const token = await h.token("alice");
    const expected: string[] = [];
    const end = T0 + 250 * 30_000;
    for (let i = 0; i < 200; i++) {
      const when = T0 + 15_000 + i * 30_000;
      const r = await h.call("events/create", { title: `once ${i}`, when: new Date(when).toISOString() }, { token });
      expected.push(`${r.body.result.id}@${when}`);
    }
    for (let j = 0; j < 20; j++) {
      const when = T0 + j * 60_000 + 5_000;
      const r = await h.call("events/create", { title: `hourly ${j}`, when: new Date(when).toISOString(), repeat: "hourly" }, { token });
      for (let t = when; t <= end; t += 3_600_000) expected.push(`${r.body.result.id}@${t}`);
    }
    await h.stop();

    const opts: Opts = { dataDir, start: T0, step: 30_000, steps: 250, wait: true };
    const procs = [await spawn(opts), await spawn(opts)];
    const readers = procs.map(lines);
    for (const next of readers) expect(await next()).toBe("ready");
    for (const p of procs) {
      p.stdin.write("go\n");
      p.stdin.flush();
    }
    const results: string[][] = [];
    for (const [i, p] of procs.entries()) {
      const out = await readers[i]();
      expect(await p.exited).toBe(0);
      results.push(JSON.parse(out!).fired);
    }
    const all = results.flat();
    expect(all.length).toBe(expected.length);
    expect(new Set(all).size).toBe(all.length);
    expect(all.sort()).toEqual(expected.sort());

    const check = await startHearth({ clock, dataDir });
    const rows = (await sqlAll<{ status: string; n: number }>(check.rt, "SELECT status, count(*) AS n FROM schedule_firings GROUP BY status"));
    expect(rows).toEqual([{ status: "done", n: expected.length }]);
    await check.stop();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test("a process killed (kill -9) mid-firing keeps its claim while alive, and another instance runs that firing once its lease runs out", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "hearth-events-crash-"));
  const clock = new TestClock(T0);
  // Long enough that a busy machine's pause in renewing it does not pass for a death.
  const LEASE = { HEARTH_SCHEDULE_LEASE_SECONDS: "3" };
  try {
    const h = await startHearth({ clock, dataDir });
    const token = await h.token("alice");
    const id = (await h.call("events/create", { title: "Plan", when: new Date(T0 + 60_000).toISOString(), repeat: "daily", prompt: "What should I plant?" }, { token })).body.result.id;
    await h.stop();

    // The stand-in agent never answers, so the firing stays under way until the process is killed.
    const plugins = [pluginPaths.events, pluginPaths.mail, pluginPaths.agent];
    const child = await spawn({ dataDir, start: T0, step: 60_000, steps: 1, plugins, env: { AGENT_FIXTURE_HANG: "1", ...LEASE } });
    expect(await lines(child)()).toBe("asking");

    clock.set(new Date(T0 + 60_000));
    // Other tests in this run may have asked the stand-in agent before.
    const before = asked.length;
    const other = await startInstance({ plugins, clock, dataDir, env: LEASE });
    try {
      const sch = schedulerOf(other.rt);
      const firing = async () =>
        (await sqlGet<{ status: string; owner: string; n: number }>(other.rt, "SELECT status, owner, count(*) OVER () AS n FROM schedule_firings WHERE ref = ?", id))!;
      expect(await firing()).toMatchObject({ status: "claimed", n: 1 });
      const holder = (await firing()).owner;
      expect(holder).not.toBe(sch.owner);
      // Alive, the process renews its lease: after three leases' time the claim is still its own and nothing ran here.
      const alive = Date.now() + 3 * 3_000;
      while (Date.now() < alive) {
        expect((await sch.runDue()).fired).toEqual([]);
        await Bun.sleep(200);
      }
      expect(await firing()).toMatchObject({ status: "claimed", owner: holder });
      expect(asked.slice(before)).toEqual([]);

      child.kill(9);
      expect(await child.exited).not.toBe(0);
      // Dead, its lease runs out and this instance takes the firing over (its timer wakes for that) and runs it, once.
      // Waited for until it has asked: the claim changes hands a moment before the firing starts running, and settle() waits only for one that has started.
      while (asked.length === before) await Bun.sleep(100);
      await sch.settle();
      expect(asked.slice(before)).toEqual(["What should I plant?"]);
      expect(await firing()).toMatchObject({ status: "done", owner: sch.owner, n: 1 });
      // The dead process had mailed the reminder (a write of the firing, committed): this instance ran only the prompt.
      const detail = JSON.parse((await sqlGet<{ detail: string }>(other.rt, "SELECT detail FROM schedule_firings WHERE ref = ?", id))!.detail);
      expect(detail.reminder).toMatchObject({ sent: false, reason: expect.stringMatching(/took over/) });
      expect(detail.prompt).toMatchObject({ ran: true, mail: { sent: true } });
      expect((await sch.runDue()).fired).toEqual([]);
      // The next day's firing is still scheduled.
      expect((await sqlGet<{ next_due: number }>(other.rt, "SELECT next_due FROM schedule_jobs WHERE ref = ?", id))!.next_due).toBe(T0 + 60_000 + 86_400_000);
    } finally {
      await other.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test("a firing whose instance died is not run again later than the grace window: it is recorded missed, saying so", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "hearth-events-crash-late-"));
  const clock = new TestClock(T0);
  // No grace: a firing is run on time or not at all.
  const env = { HEARTH_SCHEDULE_LEASE_SECONDS: "1", EVENTS_GRACE_MINUTES: "0" };
  try {
    const h = await startHearth({ clock, dataDir, env });
    const token = await h.token("alice");
    const id = (await h.call("events/create", { title: "Plan", when: new Date(T0 + 60_000).toISOString(), prompt: "What should I plant?" }, { token })).body.result.id;
    await h.stop();

    const plugins = [pluginPaths.events, pluginPaths.mail, pluginPaths.agent];
    const child = await spawn({ dataDir, start: T0, step: 60_000, steps: 1, plugins, env: { AGENT_FIXTURE_HANG: "1", ...env } });
    expect(await lines(child)()).toBe("asking");
    child.kill(9);
    await child.exited;

    clock.set(new Date(T0 + 60_000));
    const before = asked.length;
    const other = await startInstance({ plugins, clock, dataDir, env });
    try {
      const sch = schedulerOf(other.rt);
      const status = async () => (await sqlGet<{ status: string }>(other.rt, "SELECT status FROM schedule_firings WHERE ref = ?", id))!.status;
      while ((await status()) === "claimed") await Bun.sleep(100);
      await sch.settle();
      expect(await status()).toBe("missed");
      expect(asked.slice(before)).toEqual([]);
      const ev = (await other.call("events/list", {}, token)).body.result.find((e: { id: string }) => e.id === id);
      expect(ev.history).toMatchObject([{ status: "missed", count: 1, reason: expect.stringMatching(/stopped mid-firing/) }]);
    } finally {
      await other.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
