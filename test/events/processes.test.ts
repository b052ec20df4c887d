// Exactly once across processes: two instances racing on one database file,
// and an instance killed in the middle of a firing.
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startHearth, TestClock } from "../harness.ts";
import { pluginPaths } from "./instance.ts";

const script = join(import.meta.dir, "fixtures", "process.ts");
const T0 = Date.parse("2026-07-01T09:00:00Z");

type Opts = { dataDir: string; start: number; step: number; steps: number; plugins?: string[]; env?: Record<string, string>; wait?: boolean };

function spawn(o: Opts) {
  return Bun.spawn(["bun", script, JSON.stringify(o)], { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
}

/** Reads stdout line by line. */
function lines(p: ReturnType<typeof spawn>) {
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
    const procs = [spawn(opts), spawn(opts)];
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
    const rows = check.rt.store.reader.query<{ status: string; n: number }, []>("SELECT status, count(*) AS n FROM schedule_firings GROUP BY status").all();
    expect(rows).toEqual([{ status: "done", n: expected.length }]);
    await check.stop();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test("a process killed mid-firing never fires that firing again", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "hearth-events-crash-"));
  const clock = new TestClock(T0);
  try {
    const h = await startHearth({ clock, dataDir });
    const token = await h.token("alice");
    const id = (await h.call("events/create", { title: "Pills", when: new Date(T0 + 60_000).toISOString(), repeat: "daily" }, { token })).body.result.id;
    await h.stop();

    // The stand-in mail service kills the process while it sends the reminder.
    const plugins = [pluginPaths.events, pluginPaths.mail];
    const crash = spawn({ dataDir, start: T0, step: 60_000, steps: 1, plugins, env: { MAIL_FIXTURE_CRASH: "1" } });
    expect(await crash.exited).toBe(3);
    expect(await new Response(crash.stdout).text()).toBe("");

    // Restarted, with mail that works: the interrupted firing is not run again.
    const again = spawn({ dataDir, start: T0 + 60_000, step: 1_000, steps: 5, plugins });
    expect(await again.exited).toBe(0);
    expect(JSON.parse(await new Response(again.stdout).text())).toEqual({ fired: [] });

    clock.set(new Date(T0 + 120_000));
    const after = await startHearth({ clock, dataDir });
    const ev = (await after.call("events/list", {}, { token })).body.result.find((e: { id: string }) => e.id === id);
    expect(ev.history).toMatchObject([{ at: new Date(T0 + 60_000).toISOString().replace(".000Z", "Z"), status: "claimed", note: expect.stringMatching(/never run twice/) }]);
    // The next day's firing is still scheduled.
    expect(after.rt.store.reader.query<{ next_due: number }, [string]>("SELECT next_due FROM schedule_jobs WHERE ref = ?").get(id)!.next_due).toBe(T0 + 60_000 + 86_400_000);
    await after.stop();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
