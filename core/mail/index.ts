// ctx.mail: the instance's mail as a capability. Services deliver to an
// account's inbox (a reminder, an answer), send as the caller, and register
// for mail that reaches handle+tag (an agent named by the tag). The module
// also brings the mail tables and the `hearth mail dns` command.
import type { CapabilityScope } from "../capabilities.ts";
import { unauthenticated } from "../errors.ts";
import { defineModule } from "../module.ts";
import type { Db } from "../plugin.ts";
import type { Runtime } from "../runtime.ts";
import { addressOf } from "./addresses.ts";
import { mailCommand } from "./cli.ts";
import { messageById, recent, shapeMessage, type MessageRow } from "./messages.ts";
import { mailMigrations } from "./migrations.ts";
import { MailService, type ArrivedHandler, type LocalMessage, type SendInput, type Sent } from "./service.ts";

export type { ArrivedHandler, ArrivedMail, LocalMessage, SendInput, Sent } from "./service.ts";
export type { MessageRow } from "./messages.ts";
export { MailService } from "./service.ts";

export interface Mail {
  /** The instance's mail domain; null when MAIL_DOMAIN is unset (then only local mail moves). */
  readonly domain: string | null;
  /** Whether mail from outside can arrive (a domain and the SMTP server). */
  readonly reachable: boolean;
  /** handle[+tag]@domain, or handle[+tag] without a domain. */
  address(username: string, tag?: string | null): string;
  /** Puts a message straight into an account's inbox (under `tag` when given). Free, never leaves the instance. */
  deliverLocal(accountId: string, m: LocalMessage): Promise<{ id: string; message_id: string; stored: boolean }>;
  /** Sends as the calling account: local recipients at once, outside ones through the outbox. 401 without an account. */
  send(m: SendInput): Promise<Sent>;
  /** Registers a handler for mail arriving at handle+tag; returns a function that removes it. */
  onTagged(fn: ArrivedHandler): () => void;
  /**
   * Reading what is stored, through the caller's own ctx.db (so in a write
   * call it sees the call's transaction): an account's latest messages in a
   * folder (inbox by default; `tag` null for untagged only), newest first...
   */
  recent(db: Db, account: string, o: { folder?: string; tag?: string | null; limit: number }): Promise<MessageRow[]>;
  /** ...one of its messages by id... */
  byId(db: Db, account: string, id: string): Promise<MessageRow | undefined>;
  /** ...and a message as every surface shows it. */
  shape(m: MessageRow): ReturnType<typeof shapeMessage>;
  /** The mail service's start and stop hooks: the inbound SMTP server and the outbox timer. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

declare module "../plugin.ts" {
  interface CapabilityTypes {
    mail: Mail;
  }
}

const services = new WeakMap<Runtime, MailService>();

/** The instance's mail; tests drive its outbox with runDue() and read the SMTP port from inbound. */
export function mailOf(rt: Runtime): MailService {
  let s = services.get(rt);
  if (!s) {
    s = new MailService(rt);
    services.set(rt, s);
  }
  return s;
}

function mailFor(scope: CapabilityScope): Mail {
  const m = mailOf(scope.rt);
  return {
    get domain() {
      return m.domain;
    },
    get reachable() {
      return m.reachable;
    },
    address: (username, tag) => addressOf(m.domain, username, tag),
    deliverLocal: (accountId, msg) => m.deliverLocal(accountId, msg, scope.call),
    send: (msg) => {
      const a = scope.caller.account;
      if (!a) throw unauthenticated("sending mail needs an account");
      return m.send(a, msg, scope.caller.scopes, scope.call);
    },
    onTagged: (fn) => m.onArrived(fn),
    recent,
    byId: messageById,
    shape: shapeMessage,
    start: () => m.start(),
    stop: () => m.stop(),
  };
}

export const mailModule = defineModule({
  name: "mail",
  provides: { capabilities: { mail: mailFor }, migrations: { mail: mailMigrations }, cli: { mail: mailCommand } },
});
