// The outbox: outside mail waits here until a server takes it. A failed try
// is retried after the next pause of MAIL_RETRY_MINUTES; after the last one,
// or at once on a permanent refusal, the sender gets a bounce in the inbox.
// Due times are on the instance clock, so tests move time instead of waiting.
import { AsyncLocalStorage } from "node:async_hooks";
import { and, asc, eq, isNull, lte, or, lt } from "drizzle-orm";
import type { Runtime } from "../runtime.ts";
import { deliver, type DeliveryResult } from "./deliver.ts";
import { mailMessages, mailOutbox } from "./schema.ts";
import type { MailService } from "./service.ts";

type Row = typeof mailOutbox.$inferSelect;

const detached: <R>(fn: () => R) => R = AsyncLocalStorage.snapshot();

/** A claim older than this is taken to belong to an attempt that died with its process. */
const LEASE_MS = 15 * 60_000;
const BATCH = 20;
/** Timers never sleep longer than this, so a clock that jumped is noticed. */
const MAX_SLEEP_MS = 60 * 60_000;

export interface OutboxReport {
  sent: number;
  retrying: number;
  bounced: number;
}

export function retryPauses(config: Readonly<Record<string, string>>): number[] {
  const raw = config.MAIL_RETRY_MINUTES || "5,15,60,240,720,1440,1440,1440";
  return raw
    .split(",")
    .map((s) => Number(s.trim()))
    .filter((n) => Number.isFinite(n) && n >= 0)
    .map((n) => n * 60_000);
}

export class Outbox {
  private chain: Promise<unknown> = Promise.resolve();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private stopped = true;

  constructor(
    private rt: Runtime,
    private mail: MailService,
  ) {}

  start() {
    this.stopped = false;
    this.kick();
  }

  stop() {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Once the pass under way (if any) has recorded what it sent: a process that stops must not leave a sent row claimed but unrecorded. */
  async settled(): Promise<void> {
    await this.chain;
  }

  /**
   * Queues a pass at once, outside whatever transaction asked: its first step
   * takes the write lock, so it sees the row that transaction is adding, and
   * a runDue() called after it finds the pass already in line.
   */
  kick() {
    if (this.stopped) return;
    detached(() => void this.runDue().catch((e) => this.rt.log.error("outbox run failed", { error: String(e) })));
  }

  /**
   * Delivers every row due by the instance clock. Passes run one after
   * another: a call while one is under way waits for it, then makes its own.
   */
  runDue(): Promise<OutboxReport> {
    const run = this.chain.then(() => this.pass());
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async pass(): Promise<OutboxReport> {
    const report: OutboxReport = { sent: 0, retrying: 0, bounced: 0 };
    for (;;) {
      const claimed = await this.claim();
      if (claimed.length === 0) break;
      for (const row of claimed) {
        const result = await deliver(this.rt.config, row);
        report[await this.record(row, result)]++;
      }
      if (claimed.length < BATCH) break;
    }
    await this.arm();
    return report;
  }

  private claim(): Promise<Row[]> {
    const now = this.rt.clock.now().getTime();
    return this.rt.store.write(async () => {
      const db = this.rt.store.wdb;
      const claimable = and(eq(mailOutbox.status, "pending"), lte(mailOutbox.nextAt, now), or(isNull(mailOutbox.claimed), lt(mailOutbox.claimed, now - LEASE_MS)));
      const rows = await db.select().from(mailOutbox).where(claimable).orderBy(asc(mailOutbox.nextAt)).limit(BATCH).all();
      // Each row is claimed only if it is still claimable: another instance's pass may have taken it since the read.
      const claimed: Row[] = [];
      for (const r of rows) {
        const [taken] = await db.update(mailOutbox).set({ claimed: now }).where(and(eq(mailOutbox.id, r.id), claimable)).returning().all();
        if (taken) claimed.push(r);
      }
      return claimed;
    });
  }

  private record(row: Row, result: DeliveryResult): Promise<"sent" | "retrying" | "bounced"> {
    const now = this.rt.clock.now().getTime();
    const pauses = retryPauses(this.rt.config);
    const attempts = row.attempts + 1;
    return this.rt.store.write(async () => {
      const db = this.rt.store.wdb;
      if (result.ok) {
        await db.update(mailOutbox).set({ status: "sent", attempts, claimed: null, lastError: null }).where(eq(mailOutbox.id, row.id)).run();
        await db.update(mailMessages).set({ delivery: "sent" }).where(eq(mailMessages.id, row.message)).run();
        return "sent";
      }
      const pause = pauses[row.attempts];
      if (!result.permanent && pause !== undefined) {
        await db.update(mailOutbox).set({ attempts, nextAt: now + pause, claimed: null, lastError: result.detail }).where(eq(mailOutbox.id, row.id)).run();
        return "retrying";
      }
      await db.update(mailOutbox).set({ status: "bounced", attempts, claimed: null, lastError: result.detail }).where(eq(mailOutbox.id, row.id)).run();
      await db.update(mailMessages).set({ delivery: "bounced" }).where(eq(mailMessages.id, row.message)).run();
      await this.bounce(row, attempts, result);
      return "bounced";
    });
  }

  /** Tells the sender, in their inbox, that the message will not arrive and why. */
  private async bounce(row: Row, attempts: number, result: DeliveryResult) {
    const db = this.rt.store.wdb;
    const original = await db.select().from(mailMessages).where(eq(mailMessages.id, row.message)).get();
    const acct = await this.mail.account({ id: row.account });
    if (!acct) return;
    const tries = attempts === 1 ? "the first try" : `${attempts} tries`;
    const why = result.permanent ? "It was refused" : `It could not be delivered after ${tries}`;
    const body = [
      `Your message to ${row.recipient} was not delivered. ${why}; the last answer was:`,
      "",
      `  ${result.detail}`,
      "",
      ...(original ? ["----- your message -----", `Subject: ${original.subject}`, "", original.body] : []),
    ].join("\n");
    await this.mail.store({
      account: acct,
      folder: "inbox",
      tag: null,
      from: `Mail Delivery System <mailer-daemon@${this.mail.domain ?? "hearth.local"}>`,
      to: row.sender,
      subject: `Undelivered: ${original?.subject ?? row.recipient}`,
      body,
      messageId: this.mail.newMessageId(),
      inReplyTo: original?.messageId ?? null,
      references: original ? [original.messageId] : [],
    });
  }

  /** Sets one timer for the earliest pending row; the wait is real time for a due time on the instance clock. */
  private async arm() {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.stopped) return;
    const next = await this.rt.store.rdb
      .select({ at: mailOutbox.nextAt })
      .from(mailOutbox)
      .where(eq(mailOutbox.status, "pending"))
      .orderBy(asc(mailOutbox.nextAt))
      .limit(1)
      .get();
    // Stopped while the read was under way: no timer then.
    if (!next || this.stopped) return;
    const wait = Math.min(MAX_SLEEP_MS, Math.max(0, next.at - this.rt.clock.now().getTime()));
    this.timer = detached(() => setTimeout(() => void this.runDue().catch((e) => this.rt.log.error("outbox run failed", { error: String(e) })), wait));
    this.timer.unref?.();
  }
}
