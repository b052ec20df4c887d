// One scheduler per running instance. Every service's schedules live in one
// table; a single croner timer is armed for the earliest unclaimed firing
// across all of them (never a job per schedule), so 100,000 future events
// cost one timer and one index.
//
// A firing is claimed before it runs: inside one write transaction the job's
// next due time moves on and a (service, ref, due) row is inserted into the
// ledger, naming this instance and a lease. That row's primary key is the
// exactly-once guarantee between live instances: a second process on the same
// database finds the firing claimed and leaves it. The owner renews the lease
// while the firing runs and clears it when the outcome is recorded; a lease
// that runs out means its instance died mid-firing, and any instance then
// claims that firing again and runs it (it may have done part of its work).
//
// An instance may also only seem dead: stalled (a paused process, a loaded
// machine) past its lease, it wakes while another runs the firing. So each
// claim carries a fencing token, one more at every takeover, and the firing's
// call carries a fence (core/call.ts): every write transaction opened for it
// or a call made from it (a reminder mailed, an agent's answer stored) first
// checks, inside that transaction, that the ledger row still names this
// instance and this token. If not, the write is dropped whole and logged, and
// the outcome too: the instance that took the firing over runs it once.
//
// The same check marks the firing as having acted, in the transaction of the
// write it guards, so the mark commits with that effect and only with it. An
// instance that stalls after an effect committed and before its outcome is
// recorded would otherwise have the firing run, and the effect made, twice:
// a takeover that finds the mark records the firing done (its detail says it
// was taken over after it acted, the log says so too) and does not run it.
// Past its first effect a firing is thus run at most once: a handler whose
// later effects a stall may cut off makes them in one write, or registers
// with `resume`, and is then run again told that the firing acted, to skip
// what it knows was done and finish the rest (docs/plugins.md).
import { AsyncLocalStorage } from "node:async_hooks";
import { Cron } from "croner";
import { and, asc, desc, eq, inArray, isNotNull, lt, lte, min, ne, sql } from "drizzle-orm";
import { answered, mapAnswer } from "../answer.ts";
import { applyMigrations } from "../db/migrate.ts";
import { isPg, skipLocked } from "../db/store.ts";
import { accounts } from "../db/schema.ts";
import { newCall } from "../call.ts";
import { asHearthError, HearthError } from "../errors.ts";
import type { Caller, Ctx } from "../plugin.ts";
import type { Runtime } from "../runtime.ts";
import { schedulerMigrations } from "./migrations.ts";
import { scheduleCollections, scheduleFirings, scheduleJobs } from "./schema.ts";
import { indexAtOrAfter, indexAtOrBefore, nextAtOrAfter, occurrence, occurrenceOrNull, type Recurrence, type Repeat } from "./recurrence.ts";

/** What a handler is told about the firing it runs. */
export interface Firing {
  service: string;
  ref: string;
  due: Date;
  /** Milliseconds between the due time and the claim. */
  late: number;
  /** Whether this instance offers a method ("mail/send"), so a handler uses a service once it is installed. */
  offers(path: string): boolean;
  /**
   * A run of this firing before this one (on an instance that stalled or died
   * before recording its outcome) committed at least one write of it. Only a
   * handler registered with `resume` is run in that case; it skips what it
   * knows that run did first.
   */
  acted: boolean;
}

/**
 * Runs one firing, outside any transaction: it reads through ctx.db and
 * changes things through ctx.call, so a slow provider never holds the write
 * lock. What it returns (JSON) is kept in the ledger as the firing's outcome.
 */
export type FiringHandler = (firing: Firing, ctx: Ctx) => unknown;

export interface FiringRecord {
  due: number;
  status: "claimed" | "done" | "failed" | "missed";
  count: number;
  claimed: number;
  finished: number | null;
  detail: unknown;
}

export interface RunReport {
  fired: { service: string; ref: string; due: number; late: number; status: "done" | "failed" }[];
  missed: { service: string; ref: string; first: number; last: number; count: number; reason: string }[];
}

/** One round of a collector: how many sources it asked and which of them failed. */
export interface CollectionRound {
  sources: number;
  failed: { source: string; error: string }[];
}

/** How a service's collector has fared (times in ms). */
export interface Collection {
  /** When the last round finished. */
  attempted: number;
  /** When a round last reached at least one source; null while none has. */
  succeeded: number | null;
  /** Rounds in a row in which no source answered. */
  failures: number;
  /** Why the last round failed; null when it worked. */
  error: string | null;
}

/** Why a round in which no source answered failed: the first failure names its source and provider. */
function roundError(round: CollectionRound): string {
  const [first] = round.failed;
  const more = round.failed.length - 1;
  return `no source answered: ${first.source}: ${first.error}${more > 0 ? ` (and ${more} more failed)` : ""}`;
}

interface JobRow {
  service: string;
  ref: string;
  owner: string | null;
  scopes: string;
  start: number;
  offset: number;
  repeat: Repeat | null;
  tz: string | null;
  rule: string | null;
  next_due: number;
}

/** A job's row as the scheduler reads it. */
const JOB = {
  service: scheduleJobs.service,
  ref: scheduleJobs.ref,
  owner: scheduleJobs.owner,
  scopes: scheduleJobs.scopes,
  start: scheduleJobs.start,
  offset: scheduleJobs.offset,
  repeat: scheduleJobs.repeat,
  tz: scheduleJobs.tz,
  rule: scheduleJobs.rule,
  next_due: scheduleJobs.nextDue,
};

interface Claim {
  job: JobRow;
  due: number;
  claimed: number;
  /** The claim's fencing token (schedule_firings.fence). */
  fence: number;
  /** Taken over after a write of the firing had committed (schedule_firings.acted). */
  acted: boolean;
}

/** What a takeover records for a firing whose effect the instance it took it from had committed. */
const ACTED_DETAIL = JSON.stringify({
  taken_over: true,
  acted: true,
  reason: "the instance running it stalled or stopped past its lease after a write of the firing had committed: it was not run again, and what its handler returned is not known",
});

/**
 * How long a claim holds without renewal (HEARTH_SCHEDULE_LEASE_SECONDS): an
 * instance silent this long is taken for dead and its firings are run again.
 * Leases are on the wall clock, not the instance clock firings are due by:
 * they measure whether a process is alive, and a test moving its clock a day
 * on must not make a live instance look dead.
 */
function leaseMs(config: Readonly<Record<string, string>>): number {
  const s = Number(config.HEARTH_SCHEDULE_LEASE_SECONDS);
  return Number.isFinite(s) && s > 0 ? s * 1000 : 120_000;
}

/**
 * Runs a function in the empty async context of module load. A timer armed
 * inside a write transaction would otherwise inherit that transaction's
 * context, and its run would take itself for part of a transaction that has
 * long committed.
 */
const detached: <R>(fn: () => R) => R = AsyncLocalStorage.snapshot();

/** Jobs claimed per transaction; a burst of due firings is taken in slices this big. */
const BATCH = 500;
/** Handlers running at once; the rest wait their turn, already claimed. */
const MAX_RUNNING = 32;
/** The timer never sleeps longer than this, so jobs another process added are noticed. */
const MAX_SLEEP_MS = 60_000;

export class Scheduler {
  /** since: when (instance clock) the handler was registered; a firing due from then on fell due while the instance ran. */
  private handlers = new Map<string, { fn: FiringHandler; grace: number; since: number; resume: boolean }>();
  private timer: Cron | null = null;
  private armedFor: number | null = null;
  private chain: Promise<unknown> = Promise.resolve();
  private ready = false;
  private stopped = false;
  /** This instance's name on the claims it holds. */
  readonly owner = crypto.randomUUID();
  private renewer: ReturnType<typeof setInterval> | null = null;
  private readonly leaseMs: number;

  constructor(readonly rt: Runtime) {
    this.leaseMs = leaseMs(rt.config);
  }

  /** Creates the tables on first use; inside a caller's transaction this joins it as a savepoint. */
  private ensure() {
    if (this.ready) return;
    applyMigrations(this.rt.store.writer, "scheduler", schedulerMigrations);
    this.ready = true;
  }

  /**
   * Registers the service's firing handler, claims what fell due while the
   * instance was down (within `grace` ms; older firings are recorded as
   * missed, not replayed, and logged) and arms the timer. A firing that
   * falls due from now on is run when the timer wakes, however late the
   * wake: grace bounds only catching up on time the instance was not running. The claimed firings run in the
   * background, so a slow prompt never holds up the instance's start;
   * settle() waits for them.
   */
  async handle(service: string, fn: FiringHandler, opts: { grace?: number; resume?: boolean } = {}): Promise<void> {
    this.handlers.set(service, { fn, grace: Math.max(0, opts.grace ?? 0), since: this.rt.clock.now().getTime(), resume: !!opts.resume });
    this.stopped = false;
    await this.rt.store.exclusive(() => this.ensure());
    const { claims, report } = await this.claimQueued(undefined, false);
    for (const c of claims) void this.fire(c, report).catch((e) => this.rt.log.error("scheduled firing failed", { error: String(e) }));
  }

  /** Resolves once every firing under way has run and its outcome is recorded. */
  async settle(): Promise<void> {
    while (this.inflight.size) await Promise.allSettled([...this.inflight]);
  }

  /**
   * Adds or replaces a schedule, in the caller's write transaction. Returns
   * the first firing: the first occurrence not older than the service's grace
   * window, so "remind me now" still fires; null when nothing is left.
   */
  set(service: string, caller: Caller, job: { ref: string; start: number; offset: number; repeat: Repeat | null; tz?: string | null; rule?: string | null; scopes?: "*" | string[] }): Promise<number | null> {
    this.ensure();
    const now = this.rt.clock.now().getTime();
    const grace = this.handlers.get(service)?.grace ?? 0;
    const next = nextAtOrAfter(job, now - grace);
    const scopes = job.scopes ?? caller.scopes;
    const row = { owner: caller.account?.id ?? null, scopes: scopes === "*" ? "*" : JSON.stringify(scopes), start: job.start, offset: job.offset, repeat: job.repeat, tz: job.tz ?? null, rule: job.rule ?? null, nextDue: next };
    const stored = this.rt.store.wdb
      .insert(scheduleJobs)
      .values({ service, ref: job.ref, ...row, created: now })
      .onConflictDoUpdate({ target: [scheduleJobs.service, scheduleJobs.ref], set: row })
      .run();
    return mapAnswer(stored, () =>
      mapAnswer(next !== null && (this.armedFor === null || next < this.armedFor) ? this.leaseEnd("write") : null, (lease) => {
        // The timer may go off before this transaction commits. On SQLite that wake claims through the
        // write lock, which waits for the commit; on PostgreSQL its claim runs beside this write and may
        // not see the schedule, but every round ends by arming through exclusive(), which waits for this
        // write to end and then reads the schedule committed. Waking for a rolled-back schedule costs one empty run.
        if (next !== null && (this.armedFor === null || next < this.armedFor)) this.arm(next, true, lease);
        return next;
      }),
    );
  }

  /** Cancels a schedule and forgets its ledger; a stale timer wakes once to find nothing. */
  remove(service: string, ref: string): Promise<boolean> {
    this.ensure();
    const db = this.rt.store.wdb;
    const ledger = db.delete(scheduleFirings).where(and(eq(scheduleFirings.service, service), eq(scheduleFirings.ref, ref))).run();
    const job = mapAnswer(ledger, () => db.delete(scheduleJobs).where(and(eq(scheduleJobs.service, service), eq(scheduleJobs.ref, ref))).run());
    return mapAnswer(job, (r) => r.changes > 0);
  }

  /** The next unclaimed firing of a schedule (null: nothing left), or undefined when there is no such schedule. */
  nextDue(service: string, ref: string, kind: "read" | "write" | "instance"): Promise<number | null | undefined> {
    if (!this.ready) return answered(undefined);
    const row = this.db(kind)
      .select({ nextDue: scheduleJobs.nextDue })
      .from(scheduleJobs)
      .where(and(eq(scheduleJobs.service, service), eq(scheduleJobs.ref, ref)))
      .get();
    return mapAnswer(row, (row) => (row ? row.nextDue : undefined));
  }

  /** The ledger of a schedule, newest first. */
  history(service: string, ref: string, kind: "read" | "write" | "instance", limit = 20): Promise<FiringRecord[]> {
    if (!this.ready) return answered([]);
    const f = scheduleFirings;
    const rows = this.db(kind)
      .select({ due: f.due, status: f.status, count: f.count, claimed: f.claimed, finished: f.finished, detail: f.detail })
      .from(f)
      .where(and(eq(f.service, service), eq(f.ref, ref)))
      .orderBy(desc(f.due))
      .limit(limit)
      .all();
    return mapAnswer(rows, (rows) => rows.map((r) => ({ ...r, status: r.status as FiringRecord["status"], detail: r.detail === null ? null : JSON.parse(r.detail) })));
  }

  /** Records a collector's round; a round that asked nothing changes nothing. */
  async collected(service: string, round: CollectionRound): Promise<void> {
    if (round.sources === 0) return;
    const at = this.rt.clock.now().getTime();
    const ok = round.failed.length < round.sources;
    const c = scheduleCollections;
    await this.rt.store.write(async () => {
      this.ensure();
      await this.rt.store.wdb
        .insert(c)
        .values({ service, attempted: at, succeeded: ok ? at : null, failures: ok ? 0 : 1, error: ok ? null : roundError(round) })
        .onConflictDoUpdate({
          target: c.service,
          set: {
            attempted: sql`excluded.attempted`,
            succeeded: sql`coalesce(excluded.succeeded, ${c.succeeded})`,
            failures: sql`case when excluded.error is null then 0 else ${c.failures} + 1 end`,
            error: sql`excluded.error`,
          },
        })
        .run();
    });
  }

  /** How a service's collector has fared; null before its first round. */
  collection(service: string, kind: "read" | "write" | "instance"): Promise<Collection | null> {
    const c = scheduleCollections;
    try {
      const row = this.db(kind).select({ attempted: c.attempted, succeeded: c.succeeded, failures: c.failures, error: c.error }).from(c).where(eq(c.service, service)).get();
      return mapAnswer(row, (row) => row ?? null);
    } catch (e) {
      // The table may predate this process's first use of the scheduler, or not exist yet.
      if (/no such table|does not exist/.test(String(e))) return answered(null);
      throw e;
    }
  }

  private db(kind: "read" | "write" | "instance") {
    return kind === "read" ? this.rt.store.rdb : this.rt.store.wdb;
  }

  /**
   * Claims and runs every firing due at `at` (default: the instance clock's
   * now), resolving once they have run and their outcomes are recorded. The
   * timer calls this; tests call it after moving their clock. Claims queue
   * behind each other, so one process never races itself; the handlers run
   * outside that queue, so a slow prompt never holds up the next reminder.
   */
  runDue(at?: Date): Promise<RunReport> {
    return this.queue(at, false);
  }

  private async queue(at: Date | undefined, afterWrite: boolean): Promise<RunReport> {
    const { claims, report } = await this.claimQueued(at, afterWrite);
    await Promise.all(claims.map((c) => this.fire(c, report)));
    return report;
  }

  private claimQueued(at: Date | undefined, afterWrite: boolean) {
    const claimed = this.chain.then(() => this.claimDue(at, afterWrite));
    this.chain = claimed.catch(() => undefined);
    return claimed;
  }

  /** afterWrite: armed by set(), whose transaction the reader may not see yet; the first look goes through the write lock. */
  private async claimDue(at: Date | undefined, afterWrite: boolean): Promise<{ claims: Claim[]; report: RunReport }> {
    const report: RunReport = { fired: [], missed: [] };
    const claims: Claim[] = [];
    if (this.handlers.size === 0 || !this.ready) return { claims, report };
    for (;;) {
      const now = (at ?? this.rt.clock.now()).getTime();
      // A look through the reader first, so an idle wake never takes the write lock.
      if (!afterWrite) {
        const earliest = await this.earliest("read");
        const lease = await this.leaseEnd("read");
        if ((earliest === null || earliest > now) && (lease === null || lease >= Date.now())) break;
      }
      afterWrite = false;
      const seen = report.missed.length;
      const batch = await this.rt.store.write(() => this.claim(now, report));
      claims.push(...batch.claims);
      // Recorded in the ledger (ctx.schedule.history) and said in the log, so a firing never goes missing unnoticed.
      for (const m of report.missed.slice(seen))
        this.rt.log.warn(`scheduled firing of ${m.service} missed: ${m.reason}`, { service: m.service, ref: m.ref, due: new Date(m.first).toISOString(), count: m.count });
      if (batch.seen < BATCH) break;
    }
    // exclusive() waits for every write of this process under way (on PostgreSQL they run beside the
    // claims) and holds the next ones back: every schedule set so far has committed and is seen here,
    // and a set() after this finds the timer already armed and arms it sooner if it must, so no new
    // schedule is left waiting for the next wake.
    await this.rt.store.exclusive(async () => this.arm(await this.earliest("write"), false, await this.leaseEnd("write")));
    return { claims, report };
  }

  private services(): string[] {
    return [...this.handlers.keys()];
  }

  private async earliest(kind: "read" | "write"): Promise<number | null> {
    const j = scheduleJobs;
    const row = await this.db(kind)
      .select({ nextDue: j.nextDue })
      .from(j)
      .where(and(isNotNull(j.nextDue), inArray(j.service, this.services())))
      .orderBy(asc(j.nextDue))
      .limit(1)
      .get();
    return row ? row.nextDue : null;
  }

  /** When (wall clock) the first lease of another instance's claim runs out; this instance's own claims run here until recorded. */
  private leaseEnd(kind: "read" | "write"): Promise<number | null> {
    const f = scheduleFirings;
    const row = this.db(kind)
      .select({ at: min(f.lease) })
      .from(f)
      .where(and(eq(f.status, "claimed"), isNotNull(f.lease), ne(f.owner, this.owner), inArray(f.service, this.services())))
      .get();
    return mapAnswer(row, (row) => row?.at ?? null);
  }

  /**
   * Inside the write transaction: claims again the firings whose instance
   * died (their lease ran out), then re-reads what is due (another process
   * may have claimed it) and claims it.
   */
  private async claim(now: number, report: RunReport): Promise<{ claims: Claim[]; seen: number }> {
    const db = this.rt.store.wdb;
    const f = scheduleFirings;
    const j = scheduleJobs;
    const s = this.services();
    const wall = Date.now();
    const lease = wall + this.leaseMs;
    const claims: Claim[] = [];
    let seen = 0;
    const jobOf = (service: string, ref: string) => db.select(JOB).from(j).where(and(eq(j.service, service), eq(j.ref, ref))).get() as Promise<JobRow | undefined>;
    for (const service of s) {
      const { grace, resume } = this.handlers.get(service)!;
      // Acted before its instance went silent (a write of it committed): done, however long ago, and not run
      // again, lest its effect happen twice; unless its handler resumes such firings, when it is taken over below
      // like any other. Locked rows are skipped on PostgreSQL as the takeover below does.
      const actedRows = db
        .select({ service: f.service, ref: f.ref, due: f.due })
        .from(f)
        .where(and(eq(f.service, service), eq(f.status, "claimed"), eq(f.acted, 1), lt(f.lease, wall), ne(f.owner, this.owner), skipLocked()))
        .limit(BATCH);
      const acted = resume ? [] : await db
        .update(f)
        .set({ status: "done", finished: now, lease: null, owner: this.owner, claimed: now, fence: sql`${f.fence} + 1`, detail: ACTED_DETAIL })
        .where(sql`(${f.service}, ${f.ref}, ${f.due}) in ${actedRows}`)
        .returning({ ref: f.ref, due: f.due, fence: f.fence })
        .all();
      seen += acted.length;
      for (const a of acted) {
        this.rt.log.warn(`scheduled firing of ${service} taken over after it acted: recorded done without running it again`, { service, ref: a.ref, due: new Date(a.due).toISOString(), fence: a.fence });
        report.fired.push({ service, ref: a.ref, due: a.due, late: now - a.due, status: "done" });
      }
      // Free to take again longer ago than the grace window: nobody was there to run it in time, so it is not run late.
      const missed = await db
        .update(f)
        .set({ status: "missed", finished: now, lease: null, detail: sql`'{"last":' || ${f.due} || ',"grace":' || ${grace} || ',"interrupted":true}'` })
        .where(and(eq(f.service, service), eq(f.status, "claimed"), lt(f.lease, wall - grace), ne(f.owner, this.owner)))
        .returning({ ref: f.ref, due: f.due })
        .all();
      for (const m of missed)
        report.missed.push({ service, ref: m.ref, first: m.due, last: m.due, count: 1, reason: `the instance running it stopped mid-firing and none took it over within its grace (${grace} ms)` });
      // The claim is one conditional UPDATE … RETURNING: only a lease that ran out is taken, and
      // only by one instance. On PostgreSQL the inner SELECT takes FOR UPDATE SKIP LOCKED
      // (skipLocked), so instances claiming at once each get different rows; one that finds a
      // row just claimed and committed by another reads it again and sees the lease renewed.
      const orphans = db
        .select({ service: f.service, ref: f.ref, due: f.due })
        .from(f)
        .where(and(eq(f.service, service), eq(f.status, "claimed"), resume ? undefined : eq(f.acted, 0), lt(f.lease, wall), ne(f.owner, this.owner), skipLocked()))
        .orderBy(asc(f.lease))
        .limit(BATCH);
      const taken = await db
        .update(f)
        .set({ owner: this.owner, lease, claimed: now, fence: sql`${f.fence} + 1` })
        .where(sql`(${f.service}, ${f.ref}, ${f.due}) in ${orphans}`)
        .returning({ ref: f.ref, due: f.due, fence: f.fence, acted: f.acted })
        .all();
      seen += taken.length;
      for (const t of taken) {
        const job = await jobOf(service, t.ref);
        if (job) claims.push({ job, due: t.due, claimed: now, fence: t.fence, acted: Number(t.acted) === 1 });
      }
    }
    // A job due now is read and advanced in this transaction; on PostgreSQL this SELECT takes
    // FOR UPDATE SKIP LOCKED (skipLocked): a job another instance is claiming is left to it, and
    // one it has claimed and committed is read again with its next due time moved on.
    const due = (await db
      .select(JOB)
      .from(j)
      .where(and(isNotNull(j.nextDue), lte(j.nextDue, now), inArray(j.service, s), skipLocked()))
      .orderBy(asc(j.nextDue))
      .limit(BATCH)
      .all()) as JobRow[];
    const insert = (row: typeof f.$inferInsert) => db.insert(f).values(row).onConflictDoNothing().run();
    for (const job of due) {
      const r: Recurrence = { start: job.start, offset: job.offset, repeat: job.repeat, tz: job.tz, rule: job.rule };
      const { grace, since } = this.handlers.get(job.service)!;
      const first = indexAtOrAfter(r, job.next_due) ?? 0;
      const last = Math.max(first, indexAtOrBefore(r, now) ?? first);
      const lastAt = occurrence(r, last);
      // Due while this instance ran: the timer woke for it, however late (a busy machine), so it runs.
      // Due before the handler was registered: the instance was down then, and grace says how late it may still run.
      const runs = lastAt >= since || now - lastAt <= grace;
      const missedTo = runs ? last - 1 : last;
      const at = { service: job.service, ref: job.ref, claimed: now };
      if (missedTo >= first) {
        const m = { first: occurrence(r, first), last: occurrence(r, missedTo), count: missedTo - first + 1 };
        await insert({ ...at, due: m.first, status: "missed", count: m.count, finished: now, detail: JSON.stringify({ last: m.last, grace }), owner: null, lease: null });
        const reason = runs
          ? "a later firing of the same schedule was due by the time it was claimed, and only the latest runs"
          : `it fell due while the instance was not running, more than its grace (${grace} ms) before it was claimed: a larger grace in ctx.schedule.handle runs such firings late`;
        report.missed.push({ service: job.service, ref: job.ref, ...m, reason });
      }
      if (runs && (await insert({ ...at, due: lastAt, status: "claimed", count: 1, finished: null, detail: null, owner: this.owner, lease, fence: 1 })).changes === 1)
        claims.push({ job, due: lastAt, claimed: now, fence: 1, acted: false });
      await db
        .update(j)
        .set({ nextDue: occurrenceOrNull(r, last + 1) })
        .where(and(eq(j.service, job.service), eq(j.ref, job.ref)))
        .run();
    }
    return { claims, seen: Math.max(seen, due.length) };
  }

  private inflight = new Set<Promise<void>>();

  private fire(c: Claim, report: RunReport): Promise<void> {
    const p = this.run(c, report).finally(() => {
      this.inflight.delete(p);
      if (this.inflight.size === 0 && this.renewer) {
        clearInterval(this.renewer);
        this.renewer = null;
      }
    });
    this.inflight.add(p);
    this.renewer ??= setInterval(() => void this.renew().catch((e) => this.closed() || this.rt.log.error("renewing scheduled firings' leases failed", { error: String(e) })), this.leaseMs / 4);
    this.renewer.unref?.();
    return p;
  }

  /** Keeps the claims this instance is running, so a long firing is not taken for an orphan. */
  private renew(): Promise<void> {
    if (this.closed()) return Promise.resolve();
    const f = scheduleFirings;
    const update = async () => {
      // From when the renewal is written, not when it was asked for: it may have waited.
      const lease = Date.now() + this.leaseMs;
      // On PostgreSQL a claim whose row a write of its firing holds (its fence, which renews that lease itself) is
      // passed over rather than waited for: a renewal waiting there would hold a connection of the pool the write may need.
      const mine = this.rt.store.wdb
        .select({ service: f.service, ref: f.ref, due: f.due })
        .from(f)
        .where(and(eq(f.owner, this.owner), eq(f.status, "claimed"), skipLocked()));
      await this.rt.store.wdb.update(f).set({ lease }).where(sql`(${f.service}, ${f.ref}, ${f.due}) in ${mine}`).run();
    };
    // On PostgreSQL one statement outside a write is a transaction of its own: the renewal need not wait
    // for a turn among this instance's writes, behind which (a burst of firings each writing) the
    // leases it keeps would run out and other instances run the firings again. On SQLite it is a write,
    // ahead of those waiting.
    if (isPg(this.rt.store)) return detached(update);
    return this.rt.store.write(update, { first: true });
  }

  /** Runs one claimed firing when a slot is free, then records its outcome. */
  private async run(c: Claim, report: RunReport) {
    const { job } = c;
    const late = c.claimed - c.due;
    await this.slot();
    let status: "done" | "failed";
    let detail: unknown;
    try {
      const caller = await this.callerFor(job);
      if (!caller) {
        status = "failed";
        detail = { error: "the account that scheduled this no longer exists" };
      } else {
        const call = newCall(caller, { id: `schedule-${crypto.randomUUID()}` });
        call.fence = (acts) => this.fenced(c, acts);
        const ctx = this.rt.makeCtx(job.service, "read", call, "schedule", "");
        const offers = (path: string) => this.rt.registry.methods.has(path);
        detail = (await this.handlers.get(job.service)!.fn({ service: job.service, ref: job.ref, due: new Date(c.due), late, offers, acted: c.acted }, ctx)) ?? null;
        status = "done";
      }
    } catch (e) {
      const he = asHearthError(e);
      if (he.kind === "internal") this.rt.log.error("scheduled firing failed", { service: job.service, ref: job.ref, due: c.due, error: String((e as Error)?.stack ?? e) });
      status = "failed";
      detail = { error: he.message, status: he.status };
    } finally {
      this.release();
    }
    await this.record({ service: job.service, ref: job.ref, due: c.due, fence: c.fence, status, detail });
    report.fired.push({ service: job.service, ref: job.ref, due: c.due, late, status });
  }

  private running = 0;
  private waiting: (() => void)[] = [];

  /** At most MAX_RUNNING handlers at once across the instance, so a burst of prompts does not become a burst of model calls. */
  private slot(): Promise<void> {
    if (this.running < MAX_RUNNING) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release() {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }

  /**
   * Inside a write opened for a firing's call (Call.fence): the claim must
   * still be this instance's, under the token it was claimed with, or the
   * write is dropped whole. The look renews the lease, so once what the write
   * holds commits, no other instance takes the firing over for a lease's time;
   * on PostgreSQL it also locks the ledger row until the write ends, so a
   * takeover cannot commit between the look and the effect (the claim skips
   * locked rows, and is seen by the look if it came first). `acts`: the
   * write is an effect of the firing, and the look marks the firing acted,
   * committed with that write or rolled back with it.
   */
  private async fenced(c: Claim, acts: boolean): Promise<void> {
    const f = scheduleFirings;
    const { service, ref } = c.job;
    const held = await this.rt.store.wdb
      .update(f)
      .set(acts ? { lease: Date.now() + this.leaseMs, acted: 1 } : { lease: Date.now() + this.leaseMs })
      .where(and(eq(f.service, service), eq(f.ref, ref), eq(f.due, c.due), eq(f.owner, this.owner), eq(f.fence, c.fence), eq(f.status, "claimed")))
      .returning({ due: f.due })
      .all();
    if (held.length) return;
    const due = new Date(c.due).toISOString();
    this.rt.log.warn(`scheduled firing of ${service} is no longer this instance's: its write is dropped`, { service, ref, due, fence: c.fence });
    throw new HearthError(
      "conflict",
      `the firing of ${service} ${ref} due ${due} is no longer this instance's (another took it over when this one stalled past its lease, or the schedule was removed): nothing of this write was kept`,
    );
  }

  private outbox: { service: string; ref: string; due: number; fence: number; status: string; detail: unknown }[] = [];
  private flushing: Promise<void> | null = null;

  /** Outcomes finishing together are written in one transaction. */
  private record(o: (typeof this.outbox)[number]): Promise<void> {
    this.outbox.push(o);
    this.flushing ??= Promise.resolve().then(() => {
      const batch = this.outbox;
      this.outbox = [];
      this.flushing = null;
      return this.recordUntilKept(batch);
    });
    return this.flushing;
  }

  /**
   * Writes a batch of outcomes, again a little later each time while the
   * database answers that it is busy or out of reach: an outcome not written
   * leaves its firing claimed, and an instance never takes back its own
   * claims, so one lost write left a firing "claimed" for good. The firings
   * stay in flight meanwhile, so their leases are still renewed.
   */
  private async recordUntilKept(batch: typeof this.outbox): Promise<void> {
    for (let wait = Math.min(500, this.leaseMs / 4); ; wait = Math.min(wait * 2, this.leaseMs / 4)) {
      try {
        return await this.writeOutcomes(batch);
      } catch (e) {
        if (this.closed() || !asHearthError(e).retry) throw e;
        this.rt.log.warn("recording scheduled firings' outcomes failed; trying again", { error: String(e), firings: batch.length, in_ms: wait });
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  }

  private writeOutcomes(batch: typeof this.outbox): Promise<void> {
    const finished = this.rt.clock.now().getTime();
    const f = scheduleFirings;
    return this.rt.store.write(async () => {
      // Only while the claim is still this instance's, under its token: one that lost it leaves the outcome to the instance that took it.
      for (const b of batch) {
        const kept = await this.rt.store.wdb
          .update(f)
          .set({ status: b.status, finished, detail: JSON.stringify(b.detail), lease: null })
          .where(and(eq(f.service, b.service), eq(f.ref, b.ref), eq(f.due, b.due), eq(f.owner, this.owner), eq(f.fence, b.fence), eq(f.status, "claimed")))
          .returning({ due: f.due })
          .all();
        if (!kept.length)
          this.rt.log.warn(`scheduled firing of ${b.service} is no longer this instance's (taken over, or its schedule removed): its outcome is dropped`, { service: b.service, ref: b.ref, due: new Date(b.due).toISOString(), fence: b.fence });
      }
    });
  }

  /** The firing runs as the account that scheduled it, with no more than the scopes it had. */
  private async callerFor(job: JobRow): Promise<Caller | null> {
    if (job.owner === null) return { account: null, scopes: "*", via: "local" };
    const a = await this.rt.store.rdb.select({ id: accounts.id, username: accounts.username, admin: accounts.admin }).from(accounts).where(eq(accounts.id, job.owner)).get();
    if (!a) return null;
    return { account: { id: a.id, username: a.username, admin: !!a.admin }, scopes: job.scopes === "*" ? "*" : JSON.parse(job.scopes), via: "local" };
  }

  /**
   * Arms the one timer. Due times are on the instance clock, which tests
   * inject; the timer waits the difference in real time, so with a test
   * clock it is the test that moves time and calls runDue. `lease`: when
   * (wall clock) another instance's claim runs out, to take it over then.
   */
  private arm(at: number | null, afterWrite = false, lease: number | null = null) {
    this.timer?.stop();
    this.timer = null;
    this.armedFor = null;
    if (this.stopped || this.handlers.size === 0) return;
    const now = this.rt.clock.now().getTime();
    const target = at === null ? now + MAX_SLEEP_MS : Math.min(at, now + MAX_SLEEP_MS);
    this.armedFor = target;
    // A lease is on the wall clock: wake just after it runs out, if that comes first.
    const wait = Math.min(Math.max(0, target - now), lease === null ? Infinity : Math.max(0, lease + 1 - Date.now()));
    const when = new Date(Date.now() + wait);
    this.timer = detached(() => new Cron(when, { maxRuns: 1, unref: true, allowPast: true }, () => this.wake(afterWrite)));
  }


  private wake(afterWrite: boolean) {
    this.timer = null;
    this.armedFor = null;
    if (this.stopped) return;
    if (this.closed()) return this.stop();
    this.queue(undefined, afterWrite).catch((e) => {
      if (this.closed()) return this.stop();
      this.rt.log.error("scheduler run failed", { error: String((e as Error)?.stack ?? e) });
      this.arm(null);
    });
  }

  /** The runtime closes its store on stop; a timer outliving it must not touch it. */
  private closed(): boolean {
    return this.rt.store.closed;
  }

  /** When the timer is set to go off next (instance clock), for status pages and tests. */
  get nextWake(): number | null {
    return this.armedFor;
  }

  /** Stops the timer until the next handle(); runDue still runs when called, for whoever drives time by hand. */
  stop() {
    this.stopped = true;
    if (this.renewer) clearInterval(this.renewer);
    this.renewer = null;
    this.timer?.stop();
    this.timer = null;
    this.armedFor = null;
  }
}
