// Firing: on the second, repeats across month ends and leap years, what a
// firing sends, and a restart within and past the grace window. Time is the
// injected clock; the tests move it and run what is due.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { formatTime } from "../../core/scheduler/recurrence.ts";
import { schedulerOf } from "../../core/scheduler/index.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { sqlAll, sqlGet } from "../sql.ts";

const at = (iso: string) => Date.parse(iso);

describe("firing on one instance", () => {
  let h: Hearth;
  let alice: string;
  const clock = new TestClock(at("2026-03-01T12:00:00Z"));
  beforeAll(async () => {
    h = await startHearth({ clock });
    alice = await h.token("alice");
  });
  afterAll(() => h.stop());
  const run = () => schedulerOf(h.rt).runDue();
  // The live timer may run a firing before the test's own run does, so assertions read the ledger, not a run's report.
  const ledger = async (ref: string) =>
    (await sqlAll<{ due: number; status: string; late: number }>(h.rt, "SELECT due, status, claimed - due AS late FROM schedule_firings WHERE ref = ? ORDER BY due", ref));
  const history = async (id: string) => (await h.call("events/list", {}, { token: alice })).body.result.find((e: { id: string }) => e.id === id)?.history;

  test("fires at its second, not a millisecond before, and only once", async () => {
    clock.set("2026-03-01T12:00:00Z");
    const ev = (await h.call("events/create", { title: "Tea", when: "2026-03-01T13:00:10+01:00", note: "green", prompt: "Which tea?" }, { token: alice })).body.result;
    clock.set(new Date(at("2026-03-01T12:00:10Z") - 1));
    await run();
    expect(await ledger(ev.id)).toEqual([]);
    clock.set("2026-03-01T12:00:10Z");
    await run();
    expect(await ledger(ev.id)).toEqual([{ due: at("2026-03-01T12:00:10Z"), status: "done", late: 0 }]);
    await run();
    clock.advance(60_000);
    await run();
    expect(await ledger(ev.id)).toHaveLength(1);

    // The reminder is mailed to the owner's inbox on this instance. The prompt could not run here
    // (no credits, no model): the record says so and why.
    clock.set("2026-03-01T12:00:20Z");
    const [fired] = await history(ev.id);
    expect(fired).toMatchObject({ at: "2026-03-01T13:00:10+01:00", status: "done" });
    expect(fired.outcome.reminder).toMatchObject({ to: "alice", subject: "Reminder: Tea", sent: true, result: { delivery: "local", to: "alice" } });
    expect(fired.outcome.reminder.body).toContain("green");
    const inbox = (await h.call("mail/inbox", {}, { token: alice })).body.result;
    expect(JSON.stringify(inbox)).toContain("Reminder: Tea");
    expect(fired.outcome.prompt).toMatchObject({ prompt: "Which tea?", ran: false });
    expect(fired.outcome.prompt.reason).toBeString();
    expect(fired.outcome.prompt.reason.length).toBeGreaterThan(10);
  });

  test("a firing writes nothing to the public activity stream", async () => {
    const n = (await sqlGet<{ n: number }>(h.rt, "SELECT count(*) AS n FROM activity WHERE service = 'events'"))!;
    expect(n.n).toBe(0);
  });

  test("one timer, armed for the earliest due firing and re-armed on create", async () => {
    clock.set("2026-03-02T08:00:00Z");
    await run();
    const sch = schedulerOf(h.rt);
    const a = (await h.call("events/create", { title: "A", when: "2026-03-02T08:00:50Z" }, { token: alice })).body.result.id;
    expect(sch.nextWake).toBe(at("2026-03-02T08:00:50Z"));
    const b = (await h.call("events/create", { title: "B", when: "2026-03-02T08:00:20Z" }, { token: alice })).body.result.id;
    expect(sch.nextWake).toBe(at("2026-03-02T08:00:20Z"));
    // A later one leaves the timer where it is.
    await h.call("events/create", { title: "C", when: "2026-03-02T08:00:40Z" }, { token: alice });
    expect(sch.nextWake).toBe(at("2026-03-02T08:00:20Z"));
    // Deleting the earliest: the timer finds nothing due and re-arms for the next.
    await h.call("events/delete", { id: b }, { token: alice });
    expect((await run()).fired).toEqual([]);
    expect(sch.nextWake).toBe(at("2026-03-02T08:00:40Z"));
    clock.set("2026-03-02T08:00:50Z");
    await run();
    expect(await ledger(a)).toMatchObject([{ status: "done" }]);
  });

  test("a reminder for a moment ago (within the grace window) still fires", async () => {
    clock.set("2026-03-03T10:00:00Z");
    const r = await h.call("events/create", { title: "Now", when: "2026-03-03T09:58:00Z" }, { token: alice });
    expect(r.body.result.next).toBe("2026-03-03T09:58:00Z");
    await run();
    expect(await ledger(r.body.result.id)).toEqual([{ due: at("2026-03-03T09:58:00Z"), status: "done", late: 120_000 }]);
  });

  const series: [string, { when: string; repeat: string }, string[]][] = [
    ["monthly on the 31st in a leap year", { when: "2028-01-31T09:00:00+02:00", repeat: "monthly" }, ["2028-01-31T09:00:00+02:00", "2028-02-29T09:00:00+02:00", "2028-03-31T09:00:00+02:00", "2028-04-30T09:00:00+02:00", "2028-05-31T09:00:00+02:00"]],
    ["monthly on the 31st in a common year", { when: "2027-01-31T23:30:00-04:00", repeat: "monthly" }, ["2027-01-31T23:30:00-04:00", "2027-02-28T23:30:00-04:00", "2027-03-31T23:30:00-04:00"]],
    ["monthly on the 30th", { when: "2028-12-30T00:15:00+05:30", repeat: "monthly" }, ["2028-12-30T00:15:00+05:30", "2029-01-30T00:15:00+05:30", "2029-02-28T00:15:00+05:30", "2029-03-30T00:15:00+05:30"]],
    ["daily across a leap day", { when: "2028-02-28T23:30:00-08:00", repeat: "daily" }, ["2028-02-28T23:30:00-08:00", "2028-02-29T23:30:00-08:00", "2028-03-01T23:30:00-08:00"]],
    ["hourly across a year end", { when: "2026-12-31T22:30:00+05:45", repeat: "hourly" }, ["2026-12-31T22:30:00+05:45", "2026-12-31T23:30:00+05:45", "2027-01-01T00:30:00+05:45"]],
    ["weekly across a year end", { when: "2026-12-29T10:00:00Z", repeat: "weekly" }, ["2026-12-29T10:00:00Z", "2027-01-05T10:00:00Z", "2027-01-12T10:00:00Z"]],
  ];
  for (const [what, args, expected] of series) {
    test(`repeats: ${what}`, async () => {
      clock.set(new Date(at(expected[0]) - 3_600_000));
      await run();
      const id = (await h.call("events/create", { title: what, ...args }, { token: alice })).body.result.id;
      for (const [i, due] of expected.entries()) {
        clock.set(new Date(at(due) - 1000));
        await run();
        expect(await ledger(id)).toHaveLength(i);
        const list = (await h.call("events/list", {}, { token: alice })).body.result.find((e: { id: string }) => e.id === id);
        expect(list.next).toBe(due);
        clock.set(due);
        await run();
      }
      expect((await ledger(id)).map((f) => formatTime(f.due, offsetOf(expected[0])))).toEqual(expected);
      expect((await ledger(id)).every((f) => f.status === "done" && f.late === 0)).toBe(true);
      await h.call("events/delete", { id }, { token: alice });
    });
  }
});

function offsetOf(iso: string): number {
  const m = /([+-])(\d{2}):(\d{2})$/.exec(iso);
  return m ? (m[1] === "-" ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : 0;
}

describe("restart", () => {
  test("firings missed by less than the grace window run once on start; older ones are recorded as missed", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "hearth-events-restart-"));
    const clock = new TestClock(at("2026-06-01T10:00:00Z"));
    try {
      const a = await startHearth({ clock, dataDir });
      const token = await a.token("alice");
      const mk = async (title: string, when: string, repeat?: string) => (await a.call("events/create", { title, when, repeat }, { token })).body.result.id as string;
      const early = await mk("early", "2026-06-01T12:00:00Z");
      const late = await mk("late", "2026-06-01T12:10:00Z");
      const hourly = await mk("hourly", "2026-06-01T10:15:00Z", "hourly");
      clock.set("2026-06-01T10:15:00Z");
      expect((await schedulerOf(a.rt).runDue()).fired.map((f) => f.ref)).toEqual([hourly]);
      clock.set("2026-06-01T10:20:00Z");
      await a.stop();

      // Down from 10:20 to 12:19: "late" is 9 minutes late, "early" 19, the hourly one missed 11:15 and is 4 minutes late for 12:15.
      clock.set("2026-06-01T12:19:00Z");
      const b = await startHearth({ clock, dataDir });
      // What start claimed runs in the background; wait for it before reading the record.
      await schedulerOf(b.rt).settle();
      const list = (await b.call("events/list", {}, { token })).body.result as { id: string; history: { at: string; status: string; count?: number; until?: string; outcome?: { late_ms: number } }[] }[];
      const byId = Object.fromEntries(list.map((e) => [e.id, e]));
      expect(byId[late].history).toMatchObject([{ at: "2026-06-01T12:10:00Z", status: "done", outcome: { late_ms: 9 * 60_000 } }]);
      expect(byId[hourly].history).toMatchObject([
        { at: "2026-06-01T12:15:00Z", status: "done", outcome: { late_ms: 4 * 60_000 } },
        { at: "2026-06-01T11:15:00Z", status: "missed", count: 1, until: "2026-06-01T11:15:00Z" },
        { at: "2026-06-01T10:15:00Z", status: "done" },
      ]);
      // "early" (12:00-12:30) is still on, so still listed, with the reason it did not fire.
      expect(byId[early].history).toMatchObject([{ at: "2026-06-01T12:00:00Z", status: "missed", count: 1, reason: expect.stringMatching(/grace/) }]);
      const ledger = (await sqlAll<{ status: string; due: number }>(b.rt, "SELECT status, due FROM schedule_firings WHERE ref = ?", early));
      expect(ledger).toEqual([{ status: "missed", due: at("2026-06-01T12:00:00Z") }]);
      // Nothing is replayed by a second start or a later run.
      expect((await schedulerOf(b.rt).runDue()).fired).toEqual([]);
      await b.stop();
      const c = await startHearth({ clock, dataDir });
      expect((await schedulerOf(c.rt).runDue()).fired).toEqual([]);
      await c.stop();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test("a long outage records a run of missed repeats as one entry, not a burst", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "hearth-events-restart-"));
    const clock = new TestClock(at("2026-06-01T00:00:00Z"));
    try {
      const a = await startHearth({ clock, dataDir });
      const token = await a.token("alice");
      const id = (await a.call("events/create", { title: "hourly", when: "2026-06-01T00:30:00Z", repeat: "hourly" }, { token })).body.result.id;
      await a.stop();
      clock.set("2026-06-08T00:45:00Z"); // a week later, 15 minutes after the last occurrence
      const b = await startHearth({ clock, dataDir });
      // What start claimed runs in the background; wait for it before reading the record.
      await schedulerOf(b.rt).settle();
      const [entry] = (await b.call("events/list", {}, { token })).body.result.find((e: { id: string }) => e.id === id).history;
      expect(entry).toMatchObject({ at: "2026-06-01T00:30:00Z", status: "missed", count: 7 * 24 + 1, until: "2026-06-08T00:30:00Z" });
      // The 00:30 occurrence (missed) is still on until 01:00; the next firing is 01:30.
      expect((await b.call("events/list", {}, { token })).body.result.find((e: { id: string }) => e.id === id).next).toBe("2026-06-08T00:30:00Z");
      expect((await sqlGet<{ next_due: number }>(b.rt, "SELECT next_due FROM schedule_jobs WHERE ref = ?", id))!.next_due).toBe(at("2026-06-08T01:30:00Z"));
      await b.stop();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test("EVENTS_GRACE_MINUTES widens the window", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "hearth-events-restart-"));
    const clock = new TestClock(at("2026-06-01T10:00:00Z"));
    try {
      const a = await startHearth({ clock, dataDir });
      const token = await a.token("alice");
      const id = (await a.call("events/create", { title: "x", when: "2026-06-01T12:00:00Z" }, { token })).body.result.id;
      await a.stop();
      clock.set("2026-06-01T12:19:00Z");
      const b = await startHearth({ clock, dataDir, env: { EVENTS_GRACE_MINUTES: "30" } });
      // What start claimed runs in the background; wait for it before reading the record.
      await schedulerOf(b.rt).settle();
      const rows = (await sqlAll<{ status: string }>(b.rt, "SELECT status FROM schedule_firings WHERE ref = ?", id));
      expect(rows).toEqual([{ status: "done" }]);
      await b.stop();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe("the timer", () => {
  test("fires a reminder due now by itself, outside the transaction that created it", async () => {
    const clock = new TestClock(at("2026-09-01T08:00:00Z"));
    const h = await startHearth({ clock });
    try {
      const token = await h.token("alice");
      // Watch every write transaction: the creating call's, then the timer's claim, the reminder's
      // delivery and the record of the outcome. None may run nested inside another.
      const store = h.rt.store;
      const write = store.write.bind(store);
      const nested: boolean[] = [];
      store.write = <T>(fn: () => T | Promise<T>) => {
        nested.push(store.inWrite());
        return write(fn);
      };
      // No runDue here: the croner timer, armed at creation for "now", is what runs it.
      const id = (await h.call("events/create", { title: "now", when: "2026-09-01T08:00:00Z" }, { token })).body.result.id;
      const status = async () => (await sqlAll<{ status: string }>(h.rt, "SELECT status FROM schedule_firings WHERE ref = ?", id));
      while ((await status())[0]?.status !== "done") await Bun.sleep(10);
      expect(await status()).toEqual([{ status: "done" }]);
      expect(nested.length).toBeGreaterThanOrEqual(3);
      expect(nested.every((n) => n === false)).toBe(true);
    } finally {
      await h.stop();
    }
  });
});
