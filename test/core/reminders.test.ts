// ctx.schedule and ctx.index as a drop-in author meets them: the docs'
// reminders plugin, loaded from HEARTH_PLUGINS, sets a schedule from a write
// method and records the ring from its handler. With the handler's default
// grace a firing that falls due while the instance runs is run, on the live
// timer and however late it is claimed; one that fell due while the instance
// was stopped is recorded missed, and the log says why. Its search finds the
// same words on either store (HEARTH_TEST_DB=pg for PostgreSQL).
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { writePgMigration } from "../../core/cli/plugin.ts";
import { schedulerOf } from "../../core/scheduler/index.ts";
import { startHearth as startPluginHearth } from "../../core/testing.ts";
import { startHearth, storeEnv, TestClock } from "../harness.ts";
import { writeDocsExample } from "./docs-plugin.ts";

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

/** The docs' reminders plugin in a temp folder, with its PostgreSQL migrations when the suite runs there. */
async function reminders(): Promise<string> {
  const folder = writeDocsExample("reminders");
  made.push(dirname(folder));
  if ((await storeEnv()).HEARTH_DATABASE_URL) await writePgMigration(folder);
  return folder;
}

test("a reminder due while the instance runs rings on the live timer, recorded by its handler, with the default grace", async () => {
  const folder = await reminders();
  // Grace 0: the handler's default.
  const h = await startPluginHearth({ plugins: folder, env: { ...(await storeEnv()), REMINDERS_GRACE_MINUTES: "0" } });
  try {
    const token = await h.token("alice");
    const add = await h.call("reminders/add", { text: "Water the tomatoes", at: new Date(Date.now() + 1500).toISOString() }, { token });
    expect(add.status).toBe(200);
    const id = add.body.result.id;
    // Wait for the ledger to hold an outcome, whatever it is.
    let got = await h.call("reminders/get", { id }, { token });
    while (!got.body.result.firings.some((f: { status: string }) => f.status !== "claimed")) {
      await Bun.sleep(100);
      got = await h.call("reminders/get", { id }, { token });
    }
    expect(got.body.result.firings).toMatchObject([{ status: "done", count: 1 }]);
    expect(got.body.result.rang).toBeNumber();
    expect(got.body.result.firings[0].detail.late_ms).toBeGreaterThanOrEqual(0);
  } finally {
    await h.stop();
  }
});

test("a firing claimed late while the instance runs still runs; one due while it was stopped is recorded missed and logged with why", async () => {
  const folder = await reminders();
  const dataDir = mkdtempSync(join(tmpdir(), "hearth-reminders-"));
  made.push(dataDir);
  const T0 = Date.parse("2026-06-01T09:00:00Z");
  const clock = new TestClock(T0);
  const warned: Record<string, unknown>[] = [];
  const logger = { info: () => {}, warn: (msg: string, data?: Record<string, unknown>) => void warned.push({ msg, ...data }), error: () => {}, line: () => {} };
  const env = { HEARTH_PLUGINS: folder, REMINDERS_GRACE_MINUTES: "0" };
  const a = await startHearth({ clock, dataDir, env, logger });
  let token: string;
  let later: string;
  try {
    token = await a.token("alice");
    const soon = (await a.call("reminders/add", { text: "Stretch", at: new Date(T0 + 60_000).toISOString() }, { token })).body.result.id;
    // The machine was busy: the run for 09:01 comes ninety seconds late.
    clock.set(new Date(T0 + 150_000));
    await schedulerOf(a.rt).runDue();
    const got = (await a.call("reminders/get", { id: soon }, { token })).body.result;
    expect(got.firings).toMatchObject([{ due: T0 + 60_000, status: "done", detail: { late_ms: 90_000 } }]);
    expect(got.rang).toBe(T0 + 150_000);
    expect(warned.filter((w) => String(w.msg).includes("missed"))).toEqual([]);
    later = (await a.call("reminders/add", { text: "Call the plumber", at: new Date(T0 + 3_600_000).toISOString() }, { token })).body.result.id;
  } finally {
    await a.stop();
  }
  // Stopped across 10:00; started again at 11:00.
  clock.set(new Date(T0 + 2 * 3_600_000));
  const b = await startHearth({ clock, dataDir, env, logger });
  try {
    await schedulerOf(b.rt).settle();
    const got = (await b.call("reminders/get", { id: later }, { token })).body.result;
    expect(got.rang).toBeNull();
    expect(got.firings).toMatchObject([{ due: T0 + 3_600_000, status: "missed", count: 1 }]);
    expect(warned).toContainEqual(
      expect.objectContaining({ msg: expect.stringMatching(/missed: it fell due while the instance was not running.*grace \(0 ms\)/), service: "reminders", ref: later, count: 1 }),
    );
  } finally {
    await b.stop();
  }
});

test("the words of a URL are found on either store, as the docs say", async () => {
  const folder = await reminders();
  const h = await startPluginHearth({ plugins: folder, env: await storeEnv() });
  try {
    const token = await h.token("alice");
    const at = new Date(Date.now() + 86_400_000).toISOString();
    const id = (await h.call("reminders/add", { text: "Read https://pg.example/two before the meeting", at }, { token })).body.result.id;
    await h.call("reminders/add", { text: "Buy bread", at }, { token });
    for (const q of ["two", "example", "https", "pg", "pg.example/two", "example two", "meet", "https://pg.example/two"]) {
      const r = await h.call("reminders/find", { q }, { token });
      expect({ q, found: r.body.result }).toEqual({ q, found: [{ id, text: "Read https://pg.example/two before the meeting" }] });
    }
    expect((await h.call("reminders/find", { q: "three" }, { token })).body.result).toEqual([]);
    // Another account finds none of them.
    expect((await h.call("reminders/find", { q: "two" }, { token: await h.token("bob") })).body.result).toEqual([]);
  } finally {
    await h.stop();
  }
});
