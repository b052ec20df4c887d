// A firing's effect happens once even when the instance running it stalls
// past its lease. Two schedulers on one database stand for two instances:
// instance A claims a firing and its handler is held (a paused process: its
// lease is not renewed either), B finds the lease run out, takes the firing
// over and runs it, then A wakes. What A would write is dropped whole.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { Scheduler, type FiringHandler } from "../../core/scheduler/index.ts";
import { schedulerOf } from "../../core/scheduler/index.ts";
import { HearthError } from "../../core/errors.ts";
import type { Caller } from "../../core/plugin.ts";
import { agentAgents } from "../../plugins/agent/schema.ts";
import { fireEvent } from "../../plugins/events/fire.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";

const T0 = Date.parse("2026-05-04T08:00:00Z");
const LEASE_MS = 1_000;

let h: Hearth;
let alice: string;
const clock = new TestClock(T0);
const made: Scheduler[] = [];

beforeAll(async () => {
  h = await startHearth({ clock, env: { HEARTH_SCHEDULE_LEASE_SECONDS: String(LEASE_MS / 1000) } });
  alice = await h.token("alice");
  // The instance's own scheduler would run the firings on its timer: only the two below run them here.
  schedulerOf(h.rt).stop();
});

afterAll(async () => {
  for (const s of made) s.stop();
  await h.stop();
});

/** A handler that waits at its start until let go, saying when it got there. */
function held(fn: FiringHandler) {
  let release!: () => void;
  let entered!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const reached = new Promise<void>((r) => (entered = r));
  const handler: FiringHandler = async (f, ctx) => {
    entered();
    await gate;
    return fn(f, ctx);
  };
  return { handler, release, reached };
}

/** A handler that runs fn to its end, then waits until let go before its outcome is recorded, saying when it got there. */
function heldAfter(fn: FiringHandler) {
  let release!: () => void;
  let entered!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const reached = new Promise<void>((r) => (entered = r));
  const handler: FiringHandler = async (f, ctx) => {
    const out = await fn(f, ctx);
    entered();
    await gate;
    return out;
  };
  return { handler, release, reached };
}

/** A scheduler of its own on the instance's database: another instance, as far as the ledger can tell. */
async function instance(service: string, fn: FiringHandler, on: Hearth = h): Promise<Scheduler> {
  const s = new Scheduler(on.rt);
  made.push(s);
  // As the events plugin registers it: a firing taken over after it acted is run again, told so, and skips its reminder.
  await s.handle(service, fn, { grace: 3_600_000, resume: service === "events" });
  // Driven by hand (runDue), never by its timer.
  s.stop();
  return s;
}

const ledger = (service: string, ref: string, on: Hearth = h) =>
  on.row<{ status: string; owner: string; fence: number; lease: number | null; detail: string }>("SELECT status, owner, fence, lease, detail FROM schedule_firings WHERE service = ? AND ref = ?", service, ref);

/** Waits, however long a busy machine takes, until the claim's lease has run out on the wall clock. */
async function leaseRunsOut(service: string, ref: string, on: Hearth = h) {
  for (;;) {
    const row = await ledger(service, ref, on);
    if (row?.lease != null && row.lease < Date.now()) return;
    await Bun.sleep(50);
  }
}

/**
 * A's firing, held once it has claimed, with its renewals stopped as a paused process's would be; B takes it over
 * once the lease ran out and runs it to the end; then A is let go.
 */
async function stallAndTakeOver(service: string, ref: string, a: Scheduler, b: Scheduler, hold: ReturnType<typeof held>, on: Hearth = h) {
  const aRun = a.runDue();
  await hold.reached;
  expect(await ledger(service, ref, on)).toMatchObject({ status: "claimed", owner: a.owner });
  a.stop();
  // A renewal A sent before it stopped may still land on a loaded machine: B looks again once that lease runs out too.
  let bRun;
  do {
    await leaseRunsOut(service, ref, on);
    bRun = await b.runDue();
  } while (bRun.fired.length === 0);
  expect(bRun.fired).toMatchObject([{ service, ref, status: "done" }]);
  expect(await ledger(service, ref, on)).toMatchObject({ status: "done", owner: b.owner });
  hold.release();
  return aRun;
}

test("a reminder is mailed once when the instance that claimed its firing stalls past its lease and another runs it", async () => {
  clock.set(new Date(T0));
  const created = await h.call("events/create", { title: "Stalled tea", when: new Date(T0 + 60_000).toISOString() }, { token: alice });
  expect(created.status).toBe(200);
  const id = created.body.result.id as string;
  const hold = held(fireEvent);
  const a = await instance("events", hold.handler);
  const b = await instance("events", fireEvent);
  clock.set(new Date(T0 + 60_000));

  const aRun = await stallAndTakeOver("events", id, a, b, hold);
  // A ran its handler to the end: the mail it tried to send was refused, inside the transaction that would have stored it.
  expect(aRun.fired).toMatchObject([{ ref: id, status: "done" }]);
  const inbox = await h.rows<{ n: number }>("SELECT count(*) AS n FROM mail_messages WHERE subject = ?", "Reminder: Stalled tea");
  expect(Number(inbox[0].n)).toBe(1);
  // The ledger keeps B's outcome, not the one A came back with.
  const row = (await ledger("events", id))!;
  expect(row).toMatchObject({ status: "done", owner: b.owner });
  expect(JSON.parse(row.detail).reminder).toMatchObject({ sent: true });
});

test("a reminder mailed by an instance that then stalls past its lease, before its outcome is recorded, is not mailed again by the one taking the firing over", async () => {
  clock.set(new Date(T0 + 7_200_000));
  const created = await h.call("events/create", { title: "Acted tea", when: new Date(T0 + 7_260_000).toISOString() }, { token: alice });
  expect(created.status).toBe(200);
  const id = created.body.result.id as string;
  const hold = heldAfter(fireEvent);
  const a = await instance("events", hold.handler);
  const b = await instance("events", fireEvent);
  clock.set(new Date(T0 + 7_260_000));

  const aRun = await stallAndTakeOver("events", id, a, b, hold);
  expect(aRun.fired).toMatchObject([{ ref: id, status: "done" }]);
  const inbox = await h.rows<{ n: number }>("SELECT count(*) AS n FROM mail_messages WHERE subject = ?", "Reminder: Acted tea");
  expect(Number(inbox[0].n)).toBe(1);
  // B ran it told that it had acted, so it skipped the reminder; its outcome is kept, under a token of its own, and A's dropped.
  const row = (await ledger("events", id))!;
  expect(row).toMatchObject({ status: "done", owner: b.owner, fence: 2, lease: null });
  expect(JSON.parse(row.detail).reminder).toMatchObject({ sent: false, reason: expect.stringMatching(/took over/) });
});

test("a plugin's own schedule through ctx.writes: the stalled instance's write is dropped whole, the other's kept", async () => {
  const account = (await h.row<{ id: string }>("SELECT id FROM accounts WHERE username = ?", "alice"))!.id;
  // Each instance writes a row of its own, so one left by the stalled instance would show.
  const writer =
    (name: string): FiringHandler =>
    async (_f, ctx) => {
      const at = ctx.clock.now().getTime();
      await ctx.writes(async (db) => {
        await db.insert(agentAgents).values({ owner: account, name, instruction: "set by a firing", created: at, updated: at }).run();
        await db.insert(agentAgents).values({ owner: account, name: `${name}-2`, instruction: "set by a firing", created: at, updated: at }).run();
      });
      return { wrote: name };
    };
  const hold = held(writer("stalled"));
  const a = await instance("agent", hold.handler);
  const b = await instance("agent", writer("taker"));
  const ref = "fence-plugin";
  await h.rt.store.write(() => a.set("agent", { account: { id: account, username: "alice", admin: false }, scopes: "*", via: "local" }, { ref, start: clock.now().getTime() + 1_000, offset: 0, repeat: null }));
  clock.advance(1_000);

  const aRun = await stallAndTakeOver("agent", ref, a, b, hold);
  // A's write failed at its fence: its handler's failure is what A would have recorded, and that too is dropped.
  expect(aRun.fired).toMatchObject([{ ref, status: "failed" }]);
  const names = (await h.rt.store.rdb.select({ name: agentAgents.name }).from(agentAgents).where(and(eq(agentAgents.owner, account))).all()).map((r) => r.name).sort();
  expect(names).toEqual(["taker", "taker-2"]);
  expect(JSON.parse((await ledger("agent", ref))!.detail)).toEqual({ wrote: "taker" });
});

test("an instance that stalls past its lease but wakes before any other takes its firing keeps it, and its write renews the lease", async () => {
  clock.set(new Date(T0 + 3_600_000));
  const created = await h.call("events/create", { title: "Late tea", when: new Date(T0 + 3_660_000).toISOString() }, { token: alice });
  const id = created.body.result.id as string;
  const hold = held(fireEvent);
  const a = await instance("events", hold.handler);
  const b = await instance("events", fireEvent);
  clock.set(new Date(T0 + 3_660_000));
  const aRun = a.runDue();
  await hold.reached;
  a.stop();
  await leaseRunsOut("events", id);
  hold.release();
  expect((await aRun).fired).toMatchObject([{ ref: id, status: "done" }]);
  // Nothing is left for B: A's write renewed the lease it checked, and A recorded the outcome.
  expect((await b.runDue()).fired).toEqual([]);
  expect(await ledger("events", id)).toMatchObject({ status: "done", owner: a.owner });
  const inbox = await h.rows<{ n: number }>("SELECT count(*) AS n FROM mail_messages WHERE subject = ?", "Reminder: Late tea");
  expect(Number(inbox[0].n)).toBe(1);
});

test("an outcome the database refuses for a moment is written again, so its firing does not stay claimed", async () => {
  const account = (await h.row<{ id: string }>("SELECT id FROM accounts WHERE username = ?", "alice"))!.id;
  const store = h.rt.store;
  const write = store.write;
  let refuse = 0;
  // The next two writes asked for once the handler has returned (its outcome's, and that again) meet a busy database.
  store.write = ((fn: Parameters<typeof write>[0], opts?: Parameters<typeof write>[1]) => {
    if (refuse > 0) {
      refuse--;
      return Promise.reject(new HearthError("storage_unavailable", "the database was busy with another write for too long: nothing was written; send it again", { retry: true }));
    }
    return write.call(store, fn, opts);
  }) as typeof write;
  try {
    const a = await instance("agent", async () => {
      refuse = 2;
      return { rang: true };
    });
    const ref = "outcome-busy";
    await store.write(() => a.set("agent", { account: { id: account, username: "alice", admin: false }, scopes: "*", via: "local" }, { ref, start: clock.now().getTime() + 1_000, offset: 0, repeat: null }));
    clock.advance(1_000);
    expect((await a.runDue()).fired).toMatchObject([{ ref, status: "done" }]);
    expect(refuse).toBe(0);
    const row = (await ledger("agent", ref))!;
    expect(row).toMatchObject({ status: "done", owner: a.owner, lease: null });
    expect(JSON.parse(row.detail)).toEqual({ rang: true });
  } finally {
    store.write = write;
  }
});

describe("a firing whose call costs credits is charged for what ran, once, across a takeover", () => {
  let m: Hearth;
  let owner: Caller;
  const mclock = new TestClock(T0);

  beforeAll(async () => {
    m = await startHearth({
      clock: mclock,
      env: {
        HEARTH_SCHEDULE_LEASE_SECONDS: String(LEASE_MS / 1000),
        HEARTH_METER_ACCOUNTS: "all",
        HEARTH_PLUGINS: `${import.meta.dir}/../pay/plugins`,
        HEARTH_RATE_PRICED: "0",
        HEARTH_RATE_WRITES: "0",
      },
    });
    await m.token("alice");
    await m.grant("alice", 100);
    schedulerOf(m.rt).stop();
    const id = (await m.row<{ id: string }>("SELECT id FROM accounts WHERE username = ?", "alice"))!.id;
    owner = { account: { id, username: "alice", admin: false }, scopes: "*", via: "local" };
  });
  afterAll(() => m?.stop());

  /** A firing whose handler makes one priced write (meter/record: an activity line, 2 credits). */
  const record =
    (text: string): FiringHandler =>
    (_f, ctx) =>
      ctx.call("meter", "record", { text });

  /** What alice was charged in all, and how many lines with this text were recorded. */
  async function state(text: string) {
    const charged = await m.rows<{ delta: number }>("SELECT l.delta FROM pay_ledger l JOIN accounts a ON a.id = l.account WHERE a.username = 'alice' AND l.reason = 'charge'");
    const lines = await m.rows<{ n: number }>("SELECT count(*) AS n FROM activity WHERE type = 'meter.recorded' AND text = ?", text);
    return { charged: charged.reduce((n, r) => n - Number(r.delta), 0), ran: Number(lines[0].n) };
  }

  async function scheduled(ref: string, a: Scheduler) {
    await m.rt.store.write(() => a.set("meter", owner, { ref, start: mclock.now().getTime() + 1_000, offset: 0, repeat: null }));
    mclock.advance(1_000);
  }

  test("its call committed, then its instance stalled: the one taking it over records it done without running it, so it is neither charged nor run again", async () => {
    const before = await state("paid-acted");
    const hold = heldAfter(record("paid-acted"));
    const a = await instance("meter", hold.handler, m);
    const b = await instance("meter", record("paid-acted"), m);
    await scheduled("paid-acted", a);
    const aRun = await stallAndTakeOver("meter", "paid-acted", a, b, hold, m);
    expect(aRun.fired).toMatchObject([{ ref: "paid-acted", status: "done" }]);
    expect(JSON.parse((await ledger("meter", "paid-acted", m))!.detail)).toMatchObject({ taken_over: true, acted: true });
    const after = await state("paid-acted");
    expect(after.ran - before.ran).toBe(1);
    expect(after.charged - before.charged).toBe(2);
  });

  test("its instance stalled before the call: the stalled call is refused and not charged, the takeover's is run and charged", async () => {
    const before = await state("paid-taken");
    const hold = held(record("paid-taken"));
    const a = await instance("meter", hold.handler, m);
    const b = await instance("meter", record("paid-taken"), m);
    await scheduled("paid-taken", a);
    const aRun = await stallAndTakeOver("meter", "paid-taken", a, b, hold, m);
    expect(aRun.fired).toMatchObject([{ ref: "paid-taken", status: "failed" }]);
    const after = await state("paid-taken");
    expect(after.ran - before.ran).toBe(1);
    expect(after.charged - before.charged).toBe(2);
  });
});
