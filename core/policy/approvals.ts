// A call its policy says to ask about waits here for the owner. The request
// is kept as a row the owner reads on /approvals; the call holds no
// transaction and no lock while it waits, and answers once the owner has
// approved, declined, or the time set by HEARTH_APPROVAL_SECONDS has run out.
// The decision is the owner's act on their own page (a session and its CSRF
// token), never anything a caller, or a model, can send along with its call.
import { and, desc, eq, gt, isNull, lte } from "drizzle-orm";
import { newId } from "../auth/ids.ts";
import { hashArgs, previewArgs } from "../audit/preview.ts";
import type { Call } from "../call.ts";
import { HearthError } from "../errors.ts";
import type { Caller } from "../plugin.ts";
import type { MethodEntry } from "../registry.ts";
import type { Runtime } from "../runtime.ts";
import { approvals } from "./schema.ts";

const DECIDED = "approvals:decided";
/** Checked this often as well as on the shared channel, so a decision missed while instances could not hear each other still arrives. */
const POLL_MS = 1000;

export type Approval = typeof approvals.$inferSelect;

export interface Asked {
  entry: MethodEntry;
  args: Record<string, unknown>;
  price: number;
  caller: Caller;
  credential: string | null;
  /** Why it asks, in plain words. */
  reason: string;
  /** Asks the person at the client as well (MCP elicitation): their answer decides, as the owner's on /approvals does; null leaves it to /approvals (a URL they were sent to). */
  ask?: (question: { message: string; id: string }) => Promise<boolean | null>;
  /** The client is asked in its answer instead, and calls again with the reply (MCP 2026-07-28's multi round-trip requests). */
  roundTrip?: RoundTrip;
}

/**
 * A request that cannot be held while its client is asked: the first round
 * makes the approval and ends with what the client is to ask its person;
 * the client calls again naming that approval and the reply. What binds the
 * second round to the first is kept here, not in what the client sends: the
 * approval's account, credential, method and the hash of its arguments, and
 * that it is used once.
 */
export interface RoundTrip {
  /** The approval a later round answers, and the reply: true or false from a form, null when the owner decides on /approvals. */
  answered?: { approval: string; approve: boolean | null };
  /** A first round: the request ends asking the client this. */
  want(row: Approval, question: string): void;
  /** Before a first round asks anything: throws to refuse the call there, with nothing asked of the owner. */
  before?(): void;
}

/** The question put to the person at the client: what will happen, in plain words. */
export function questionOf(a: Approval): string {
  let args = a.args;
  try {
    args = Object.entries(JSON.parse(a.args) as Record<string, unknown>)
      .map(([k, v]) => `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`)
      .join("; ");
  } catch {
    // Shown as kept.
  }
  const price = a.price ? `${a.price} credit${a.price === 1 ? "" : "s"}` : "free";
  return `Allow ${a.client} to call ${a.service}/${a.method}? ${args ? `${args}. ` : ""}Price: ${price}. Asked because ${a.reason}.`;
}

/** Who is asking, as the owner will recognise it. */
export function clientOf(caller: Caller): string {
  const who = caller.via === "token" ? (caller.tokenName ?? "a token") : caller.via === "session" ? "your signed-in session" : "a caller";
  return caller.agent ? `the agent, working for ${who}` : who;
}

export function approvalSeconds(rt: Runtime): number {
  const n = Number(rt.config.HEARTH_APPROVAL_SECONDS);
  return Number.isFinite(n) && n > 0 ? n : 300;
}

/** Who approved a settled request, or the refusal it ends in. */
function outcome(path: string, settled: Approval, seconds: number): string {
  if (settled.decision === "approved") return settled.decidedBy ?? "the owner";
  const link = `see /approvals`;
  if (settled.decision === "declined")
    throw new HearthError("forbidden", `${path} was declined by the owner; nothing was done (${link})`, { extra: { approval: "declined", approval_id: settled.id } });
  if (settled.decision === "withdrawn")
    throw new HearthError("forbidden", `${path} was withdrawn by the client that asked; nothing was done (${link})`, { extra: { approval: "withdrawn", approval_id: settled.id } });
  throw new HearthError("forbidden", `${path} waited ${seconds} s for the owner's approval and got no answer; nothing was done (${link})`, {
    extra: { approval: "timed_out", approval_id: settled.id },
  });
}

/** What waits on the owner, and what is told when a request is made (a push, an elicitation). */
export class Approvals {
  private asked: ((a: Approval) => void)[] = [];
  /** The checks of the requests this instance waits on. */
  private checks = new Set<() => Promise<void>>();
  constructor(private readonly rt: Runtime) {}

  /** fn is told of each request as it is made, on this instance. */
  onAsk(fn: (a: Approval) => void) {
    this.asked.push(fn);
  }

  /**
   * Makes the request and waits for the answer: resolves with who approved,
   * or refuses with 403 when declined or out of time. Inside a transaction it
   * cannot wait (it would hold the write lock the answer needs): refused at once.
   */
  async wait(a: Asked, call: Call): Promise<string> {
    const rt = this.rt;
    const path = a.entry.path;
    if (rt.store.inWrite())
      throw new HearthError("forbidden", `${path} needs the owner's approval (${a.reason}), which a call inside another's transaction cannot wait for; nothing was done`, {
        extra: { approval: "needed" },
      });
    if (a.roundTrip?.answered) return this.resume(a, a.roundTrip.answered);
    a.roundTrip?.before?.();
    const now = rt.clock.now().getTime();
    const row: Approval = {
      id: newId(),
      account: a.caller.account!.id,
      credential: a.credential,
      client: clientOf(a.caller),
      service: a.entry.service,
      method: a.entry.name,
      args: previewArgs(a.args),
      price: a.price,
      reason: a.reason,
      created: now,
      expires: now + approvalSeconds(rt) * 1000,
      decision: null,
      decidedBy: null,
      decided: null,
      argsHash: hashArgs(a.args),
      used: null,
    };
    await rt.store.write(() => rt.store.wdb.insert(approvals).values(row).run());
    rt.log.info("approval asked", { account: row.account, approval: row.id, method: path, client: row.client, call: call.id });
    for (const fn of this.asked) {
      try {
        fn(row);
      } catch (e) {
        rt.log.warn("approval notice failed", { approval: row.id, error: e instanceof Error ? e.message : String(e) });
      }
    }
    const owner = a.caller.account!;
    if (a.roundTrip) {
      // Asked in the answer: this request ends here, the request waits on /approvals too, and the client's next call carries the reply.
      a.roundTrip.want(row, questionOf(row));
      throw new HearthError("forbidden", `${path} needs the owner's approval: the client was asked, and it waits on /approvals; nothing was done yet`, {
        extra: { approval: "asked", approval_id: row.id },
      });
    }
    if (a.ask) {
      // The person at the client answers there; if the client cannot ask, the request waits on /approvals as any other.
      a.ask({ message: questionOf(row), id: row.id }).then(
        (yes) => {
          if (yes !== null) void this.decide(owner, row.id, yes ? "approved" : "declined", `${owner.username}, at ${row.client}`).catch(() => {});
        },
        (e) => rt.log.info("approval not asked at the client", { approval: row.id, error: e instanceof Error ? e.message : String(e) }),
      );
    }
    return outcome(path, await this.settle(row), approvalSeconds(rt));
  }

  /**
   * A later round, carrying the reply to an approval asked in an earlier
   * one: only for the same account, credential, method and arguments, and
   * used once. A reply of yes or no decides it (unless the owner already
   * did on /approvals); none, and it waits for the owner there.
   */
  private async resume(a: Asked, answered: { approval: string; approve: boolean | null }): Promise<string> {
    const rt = this.rt;
    const path = a.entry.path;
    const owner = a.caller.account!;
    const row = await rt.store.rdb.select().from(approvals).where(and(eq(approvals.id, answered.approval), eq(approvals.account, owner.id))).get();
    if (!row || row.credential !== a.credential || row.service !== a.entry.service || row.method !== a.entry.name || row.argsHash !== hashArgs(a.args))
      throw new HearthError("forbidden", `${path}: the reply sent answers another request (another call, credential or arguments); nothing was done. Call again without it to be asked anew`, {
        extra: { approval: "mismatch" },
      });
    if (answered.approve !== null && row.decision === null)
      await this.decide(owner, row.id, answered.approve ? "approved" : "declined", `${owner.username}, at ${row.client}`).catch(() => {});
    const settled = await this.settle(row);
    if (settled.decision === "approved") {
      const took = await rt.store.write(() =>
        rt.store.wdb
          .update(approvals)
          .set({ used: rt.clock.now().getTime() })
          .where(and(eq(approvals.id, row.id), eq(approvals.decision, "approved"), isNull(approvals.used)))
          .returning({ id: approvals.id })
          .all(),
      );
      if (!took.length) throw new HearthError("forbidden", `${path}: this approval was already used by the call it approved; nothing was done again`, { extra: { approval: "used", approval_id: row.id } });
    }
    return outcome(path, settled, approvalSeconds(rt));
  }

  /**
   * Waits until the row is decided or its time is up (then it is marked
   * expired, unless an answer came first). Its time is on the instance clock,
   * which tests inject: each check compares that clock with the row's
   * expiry, so a test moves its clock and calls due() instead of waiting.
   */
  private settle(row: Approval): Promise<Approval> {
    const rt = this.rt;
    return new Promise<Approval>((resolve, reject) => {
      let done = false;
      let checking = false;
      const finish = (r: Approval | Error) => {
        if (done) return;
        done = true;
        stop();
        this.checks.delete(check);
        clearInterval(poll);
        clearTimeout(timer);
        r instanceof Error ? reject(r) : resolve(r);
      };
      const expire = async () => {
        await rt.store.write(() =>
          rt.store.wdb
            .update(approvals)
            .set({ decision: "expired", decided: rt.clock.now().getTime() })
            .where(and(eq(approvals.id, row.id), isNull(approvals.decision)))
            .run(),
        );
        const r = await rt.store.rdb.select().from(approvals).where(eq(approvals.id, row.id)).get();
        finish(r ?? { ...row, decision: "expired" });
      };
      const check = async () => {
        if (done || checking) return;
        checking = true;
        try {
          const r = await rt.store.rdb.select().from(approvals).where(eq(approvals.id, row.id)).get();
          if (!r) finish(new HearthError("forbidden", "the approval request is gone; nothing was done"));
          else if (r.decision) finish(r);
          else if (rt.clock.now().getTime() >= row.expires) await expire();
        } catch (e) {
          finish(e as Error);
        } finally {
          checking = false;
        }
      };
      this.checks.add(check);
      const stop = rt.shared.subscribe(DECIDED, (id) => id === row.id && void check());
      const poll = setInterval(() => void check(), POLL_MS);
      // On the real clock this is when it runs out; on a test's, the check finds it not yet due and the poll carries on.
      const timer = setTimeout(() => void check(), Math.max(0, row.expires - rt.clock.now().getTime()));
    });
  }

  /**
   * Resolves once the request is decided (or withdrawn), or its time is up
   * (then it is marked expired): what an MCP task's blocking read waits on.
   */
  async until(id: string): Promise<Approval | undefined> {
    const row = await this.rt.store.rdb.select().from(approvals).where(eq(approvals.id, id)).get();
    if (!row || row.decision) return row;
    return this.settle(row);
  }

  /**
   * The asking client takes its request back (an MCP task cancelled): a
   * request still waiting is settled as withdrawn, so neither the owner's
   * answer nor a later poll can let the call run. False when it was
   * already settled.
   */
  async withdraw(account: string, id: string): Promise<boolean> {
    const rt = this.rt;
    const now = rt.clock.now().getTime();
    const done = await rt.store.write(async () => {
      const changed = await rt.store.wdb
        .update(approvals)
        .set({ decision: "withdrawn", decided: now })
        .where(and(eq(approvals.id, id), eq(approvals.account, account), isNull(approvals.decision)))
        .returning({ id: approvals.id })
        .all();
      if (changed.length) await rt.store.onCommit(() => rt.shared.publish(DECIDED, id));
      return changed.length > 0;
    });
    if (done) rt.log.info("approval withdrawn", { account, approval: id });
    return done;
  }

  /** Checks every request this instance waits on now: one whose time is up on the instance clock is given up on at once (tests, after moving their clock). */
  async due(): Promise<void> {
    await Promise.all([...this.checks].map((c) => c()));
  }

  /** The owner's answer: only a request of theirs still waiting can be decided, once. */
  async decide(account: { id: string; username: string }, id: string, decision: "approved" | "declined", by = account.username): Promise<Approval> {
    const rt = this.rt;
    const now = rt.clock.now().getTime();
    const done = await rt.store.write(async () => {
      const changed = await rt.store.wdb
        .update(approvals)
        .set({ decision, decidedBy: by, decided: now })
        .where(and(eq(approvals.id, id), eq(approvals.account, account.id), isNull(approvals.decision)))
        .returning()
        .all();
      if (changed.length) await rt.store.onCommit(() => rt.shared.publish(DECIDED, id));
      return changed[0];
    });
    if (done) {
      rt.log.info("approval answered", { account: account.id, approval: id, decision });
      return done;
    }
    const row = await rt.store.rdb.select().from(approvals).where(and(eq(approvals.id, id), eq(approvals.account, account.id))).get();
    if (!row) throw new HearthError("not_found", `you have no approval request with id "${id}"`);
    throw new HearthError("conflict", `this request was already ${row.decision === "expired" ? "given up on: its time ran out" : row.decision}`, { extra: { decision: row.decision } });
  }

  /** An account's requests still waiting, oldest first, and the latest settled ones. */
  async list(account: string, o: { settled?: number } = {}): Promise<{ waiting: Approval[]; settled: Approval[] }> {
    const db = this.rt.store.rdb;
    const now = this.rt.clock.now().getTime();
    const waiting = await db
      .select()
      .from(approvals)
      .where(and(eq(approvals.account, account), isNull(approvals.decision), gt(approvals.expires, now)))
      .orderBy(approvals.created)
      .all();
    const settled = await db
      .select()
      .from(approvals)
      .where(and(eq(approvals.account, account)))
      .orderBy(desc(approvals.created))
      .limit((o.settled ?? 20) + waiting.length)
      .all();
    return { waiting, settled: settled.filter((r) => r.decision !== null || r.expires <= now).slice(0, o.settled ?? 20) };
  }

  /** Requests settled long ago go: kept a month as the record of who answered (the activity log keeps the calls). */
  async prune(now = this.rt.clock.now().getTime()) {
    await this.rt.store.write(() => this.rt.store.wdb.delete(approvals).where(lte(approvals.expires, now - 30 * 86_400_000)).run());
  }
}
