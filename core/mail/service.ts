// One instance's mail: local delivery, sending (locally or through the
// outbox), the handlers told when mail reaches handle+tag, and the inbound
// SMTP server's lifecycle.
import { AsyncLocalStorage } from "node:async_hooks";
import { eq } from "drizzle-orm";
import { accounts } from "../db/schema.ts";
import { invalid, notConfigured, notFound } from "../errors.ts";
import { writeFor, type Call } from "../call.ts";
import type { Runtime } from "../runtime.ts";
import { addressOf, bareId, parseLocal, sameDomain, splitAddress } from "./addresses.ts";
import { compose } from "./compose.ts";
import { refusedDomain } from "./deliver.ts";
import { dkimKey } from "./dkim.ts";
import { Inbound } from "./inbound.ts";
import { storeMessage, type MessageRow } from "./messages.ts";
import { Outbox } from "./outbox.ts";
import { mailOutbox } from "./schema.ts";

/** What a handler is told when mail reaches an account under a tag. */
export interface ArrivedMail {
  account: { id: string; username: string };
  tag: string;
  /**
   * Mail an account here sent: the scopes of the call that sent it, the most
   * anything it sets working may use. Null for mail from outside and mail the
   * instance itself delivered: nobody's scopes vouch for it.
   */
  scopes: "*" | string[] | null;
  message: {
    id: string;
    from: string;
    to: string;
    subject: string;
    body: string;
    message_id: string;
    in_reply_to: string | null;
    references: string[];
    /** Outside mail: the SPF/DKIM/DMARC verdict. */
    auth: Record<string, unknown> | null;
  };
}

/** Return true when the message was taken care of (an agent answered it); handlers run after the message is committed. */
export type ArrivedHandler = (mail: ArrivedMail) => boolean | void | Promise<boolean | void>;

export interface LocalMessage {
  from: string;
  subject: string;
  body: string;
  /** Message-ID being answered, with or without angle brackets. */
  inReplyTo?: string | null;
  references?: string[];
  tag?: string | null;
}

export interface SendInput {
  /** A username, handle+tag, or a full address. */
  to: string;
  subject: string;
  body: string;
  /** Send as handle+tag (an agent answering under its tag). */
  tag?: string | null;
  inReplyTo?: string | null;
  references?: string[];
}

export interface Sent {
  id: string;
  message_id: string;
  to: string;
  /** local: in the recipient's inbox now; queued: in the outbox, on its way. */
  delivery: "local" | "queued";
}

// Work started from inside a write transaction must not take itself for part of it.
const detached: <R>(fn: () => R) => R = AsyncLocalStorage.snapshot();

type Sender = { id: string; username: string };

export class MailService {
  readonly outbox: Outbox;
  readonly inbound: Inbound;
  private handlers = new Set<ArrivedHandler>();
  private pending = new Set<Promise<unknown>>();

  constructor(readonly rt: Runtime) {
    this.outbox = new Outbox(rt, this);
    this.inbound = new Inbound(rt, this);
  }

  get domain(): string | null {
    return this.rt.config.MAIL_DOMAIN ? this.rt.config.MAIL_DOMAIN.toLowerCase() : null;
  }

  /** Whether mail from outside can arrive: a domain and our SMTP server listening. */
  get reachable(): boolean {
    return !!this.domain && this.inbound.port !== null;
  }

  newMessageId(): string {
    return `${crypto.randomUUID()}@${this.domain ?? "hearth.local"}`;
  }

  /** Runs fn in the caller's write transaction when there is one, else in a new one (fenced for a scheduled firing's call: writeFor). */
  private inWrite<T>(fn: () => T | Promise<T>, call?: Call): Promise<T> {
    if (this.rt.store.inWrite()) return Promise.resolve(fn());
    return call ? writeFor(this.rt.store, call, fn) : this.rt.store.write(fn);
  }

  onArrived(fn: ArrivedHandler): () => void {
    this.handlers.add(fn);
    return () => this.handlers.delete(fn);
  }

  /** Resolves once every handler already told about arrived mail has finished. */
  async settled(): Promise<void> {
    while (this.pending.size) await Promise.allSettled([...this.pending]);
  }

  async account(by: { id?: string; username?: string }): Promise<Sender | null> {
    const db = this.rt.store.inWrite() ? this.rt.store.wdb : this.rt.store.rdb;
    const row = await db
      .select({ id: accounts.id, username: accounts.username })
      .from(accounts)
      .where(by.id ? eq(accounts.id, by.id) : eq(accounts.username, by.username ?? ""))
      .get();
    return row ?? null;
  }

  /** Puts a message in an account's inbox; within the caller's write transaction when there is one. */
  async deliverLocal(accountId: string, m: LocalMessage, call?: Call): Promise<{ id: string; message_id: string; stored: boolean }> {
    const acct = await this.account({ id: accountId });
    if (!acct) throw notFound(`no account with id "${accountId}"`);
    const messageId = this.newMessageId();
    const row = await this.inWrite(() =>
      this.store({
        account: acct,
        folder: "inbox",
        tag: m.tag ?? null,
        from: m.from,
        to: addressOf(this.domain, acct.username, m.tag),
        subject: m.subject,
        body: m.body,
        messageId,
        inReplyTo: bareId(m.inReplyTo),
        references: m.references ?? (m.inReplyTo ? [bareId(m.inReplyTo)!] : []),
      }),
      call,
    );
    return { id: row?.id ?? "", message_id: messageId, stored: !!row };
  }

  /** Stores one copy and, for mail under a tag, tells the handlers once it is committed. */
  async store(m: {
    account: Sender;
    folder: "inbox" | "sent";
    tag: string | null;
    from: string;
    to: string;
    subject: string;
    body: string;
    messageId: string;
    inReplyTo: string | null;
    references: string[];
    auth?: Record<string, unknown> | null;
    raw?: string | null;
    delivery?: string | null;
    /** The sending call's scopes, for mail an account here sent (see ArrivedMail). */
    scopes?: "*" | string[] | null;
  }): Promise<MessageRow | null> {
    const row = await storeMessage(this.rt.store, {
      // Time-ordered, so messages stored in the same instant still list in the order they came.
      id: Bun.randomUUIDv7(),
      account: m.account.id,
      folder: m.folder,
      tag: m.tag,
      from: m.from,
      to: m.to,
      subject: m.subject,
      body: m.body,
      messageId: m.messageId,
      inReplyTo: m.inReplyTo,
      references: m.references.length ? m.references.join(" ") : null,
      at: this.rt.clock.now().getTime(),
      auth: m.auth ? JSON.stringify(m.auth) : null,
      raw: m.raw ?? null,
      delivery: m.delivery ?? null,
    });
    if (row && m.folder === "inbox" && m.tag && this.handlers.size) {
      const mail: ArrivedMail = {
        account: m.account,
        tag: m.tag,
        scopes: m.scopes ?? null,
        message: {
          id: row.id,
          from: row.from,
          to: row.to,
          subject: row.subject,
          body: row.body,
          message_id: row.messageId,
          in_reply_to: row.inReplyTo,
          references: m.references,
          auth: m.auth ?? null,
        },
      };
      // Told once the storing transaction has committed, so handlers (in transactions of their own) find the
      // message; never when it rolls back.
      await this.rt.store.onCommit(() => this.tell(mail));
    }
    return row;
  }

  private tell(mail: ArrivedMail) {
    const run = detached(
      () =>
        new Promise<void>((resolve) =>
          setTimeout(async () => {
            try {
              for (const h of [...this.handlers]) {
                try {
                  if ((await h(mail)) === true) break;
                } catch (e) {
                  this.rt.log.error("mail handler failed", { tag: mail.tag, message: mail.message.id, error: String((e as Error)?.stack ?? e) });
                }
              }
            } catch (e) {
              this.rt.log.error("mail handlers not run", { message: mail.message.id, error: String(e) });
            } finally {
              resolve();
            }
          }, 0),
        ),
    );
    this.pending.add(run);
    void run.finally(() => this.pending.delete(run));
  }

  /** Where `to` leads: an account here (by username, handle+tag or an address at the mail domain) or an outside address. */
  async recipient(to: string): Promise<{ local: Sender; tag: string | null } | { outside: string }> {
    const t = to.trim();
    if (!t.includes("@")) {
      const lp = parseLocal(t);
      if (!lp) throw invalid("to", `"${to}" is neither a username (3-32 of a-z, 0-9, _ and -, optionally +tag) nor an email address`);
      const acct = await this.account({ username: lp.handle });
      if (!acct) throw notFound(`no account named "${lp.handle}" on this instance`);
      return { local: acct, tag: lp.tag };
    }
    const addr = splitAddress(t);
    if (!addr) throw invalid("to", `"${to}" is not an email address (local@domain)`);
    if (this.domain && sameDomain(addr.domain, this.domain)) {
      const lp = parseLocal(addr.local);
      const acct = lp && (await this.account({ username: lp.handle }));
      if (!lp || !acct) throw notFound(`no account "${addr.local}" at ${this.domain}`);
      return { local: acct, tag: lp.tag };
    }
    if (!this.domain) throw notConfigured("mail to outside addresses needs the instance's mail domain: set MAIL_DOMAIN (then publish the DNS records `hearth mail dns` prints)");
    // Known before any lookup (an address, localhost): refused now, so nothing is queued or paid for.
    const refused = refusedDomain(this.rt.config, addr.domain);
    if (refused) throw invalid("to", `"${to}" cannot be sent to: ${refused}`);
    return { outside: `${addr.local}@${addr.domain}` };
  }

  /**
   * Sends as an account: delivered at once to a local recipient, queued in the
   * outbox for an outside one. `scopes` are the sending call's; none when the
   * instance sends for the account (an agent's answer). `call`: the call
   * sending, whose write is fenced when it is a scheduled firing's (writeFor).
   */
  async send(from: Sender, m: SendInput, scopes: "*" | string[] = [], call?: Call): Promise<Sent> {
    const where = await this.recipient(m.to);
    const fromAddr = addressOf(this.domain, from.username, m.tag);
    const messageId = this.newMessageId();
    const inReplyTo = bareId(m.inReplyTo);
    const references = m.references ?? (inReplyTo ? [inReplyTo] : []);
    const base = { subject: m.subject, body: m.body, messageId, inReplyTo, references };
    if ("local" in where) {
      const to = addressOf(this.domain, where.local.username, where.tag);
      const sent = await this.inWrite(async () => {
        const got = await this.store({ ...base, account: where.local, folder: "inbox", tag: where.tag, from: fromAddr, to, scopes });
        // Mail to oneself (a reminder) is kept once, in the inbox.
        if (where.local.id === from.id) return got!;
        return (await this.store({ ...base, account: from, folder: "sent", tag: m.tag ?? null, from: fromAddr, to, delivery: "local" }))!;
      }, call);
      return { id: sent.id, message_id: messageId, to, delivery: "local" };
    }
    const domain = this.domain!;
    const now = this.rt.clock.now();
    const raw = await compose({ from: fromAddr, to: where.outside, ...base, date: now }, { domain, key: dkimKey(this.rt.config, this.rt.dataDir) });
    const sent = await this.inWrite(async () => {
      // In the write that stores the row naming it, so no release comes between.
      const hash = await this.rt.blobs.put(new TextEncoder().encode(raw));
      const row = (await this.store({ ...base, account: from, folder: "sent", tag: m.tag ?? null, from: fromAddr, to: where.outside, raw: hash, delivery: "queued" }))!;
      await this.rt.store.wdb
        .insert(mailOutbox)
        .values({ id: crypto.randomUUID(), message: row.id, account: from.id, sender: fromAddr, recipient: where.outside, raw, attempts: 0, nextAt: now.getTime(), status: "pending", created: now.getTime() })
        .run();
      return row;
    }, call);
    this.outbox.kick();
    return { id: sent.id, message_id: messageId, to: where.outside, delivery: "queued" };
  }

  async start() {
    // Made now rather than inside the first send's transaction; `hearth mail dns` prints it.
    if (this.domain) dkimKey(this.rt.config, this.rt.dataDir);
    await this.inbound.start();
    this.outbox.start();
  }

  async stop() {
    this.outbox.stop();
    await this.inbound.stop();
    await this.settled();
  }
}
