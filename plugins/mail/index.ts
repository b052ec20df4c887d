import { Type as T } from "@sinclair/typebox";
import { addressOf, sameDomain, splitAddress, TAG } from "../../core/mail/addresses.ts";
import { messageById, recent, shapeMessage } from "../../core/mail/messages.ts";
import { invalid } from "../../core/errors.ts";
import { definePlugin, read, write, type BaseCtx } from "../../core/plugin.ts";

/** Credits for one message to an outside address: what a relay or our own IP's reputation costs. */
export const OUTSIDE_PRICE = 4;

const Tag = T.String({ minLength: 1, maxLength: 32, pattern: "^[A-Za-z0-9_-]+$", description: "A tag: handle+tag reaches you under it (a-z, 0-9, _ and -)." });
const Limit = (def: number, max: number) => T.Integer({ minimum: 1, maximum: max, default: def, description: `How many, newest first (default ${def}, max ${max}).` });

/** Outside mail costs; a username, or an address at this instance's own domain, is delivered here for free. */
function priceOf(args: { to?: string }, ctx: BaseCtx): number {
  const domain = ctx.config.MAIL_DOMAIN;
  const to = (args.to ?? "").trim();
  if (!domain || !to.includes("@")) return 0;
  const addr = splitAddress(to);
  if (!addr || sameDomain(addr.domain, domain)) return 0;
  return OUTSIDE_PRICE;
}

export default definePlugin({
  name: "mail",
  description: "Mail for every account: its handle (and handle+tag) on this instance, and with a mail domain real mail in and out over SMTP.",
  needs: ["mail", "db", "index"],
  config: {
    MAIL_DOMAIN: { default: "", description: "Domain mail is sent from and arrives at (example.org); unset, only mail between accounts moves. `hearth mail dns` prints the records to publish." },
    MAIL_HOST: { default: "", description: "Host name of this mail server, as MX records name it and its greeting says; MAIL_DOMAIN when empty." },
    SMTP_PORT: { default: "25", description: "Port the inbound SMTP server listens on while MAIL_DOMAIN is set; off turns it off." },
    SMTP_HOST: { default: "", description: "Address the SMTP server binds to; HOST when empty." },
    SMTP_RELAY_URL: { default: "", description: "Send outside mail through this relay (smtp://user:pass@host:587 or smtps://...:465) instead of straight to each recipient's MX." },
    MAIL_MX_PORT: { default: "25", description: "Port of recipients' mail servers when delivering straight to their MX." },
    MAIL_DNS: { default: "", description: "DNS servers for MX lookups and SPF/DKIM/DMARC checks (host or host:port, comma separated); the system's when empty." },
    MAIL_DKIM_KEY: { default: "", description: "PEM file of the DKIM private key; <HEARTH_DATA>/mail/dkim.pem, made on first need, when empty." },
    MAIL_DKIM_SELECTOR: { default: "hearth", description: "DKIM selector: the key is published at <selector>._domainkey.<MAIL_DOMAIN>." },
    MAIL_TLS_KEY: { default: "", description: "PEM key for the SMTP server's STARTTLS; a self-signed one is used when unset." },
    MAIL_TLS_CERT: { default: "", description: "PEM certificate chain for the SMTP server's STARTTLS." },
    MAIL_MAX_BYTES: { default: "26214400", description: "Largest message the SMTP server accepts, in bytes." },
    MAIL_RETRY_MINUTES: { default: "5,15,60,240,720,1440,1440,1440", description: "Pauses between tries of outside mail that could not be delivered; after the last, the sender gets a bounce." },
  },
  methods: {
    info: read({
      description:
        "How to reach you: your handle (your username), your email address when the instance has a mail domain, and whether outside mail can arrive. With `tag`, the separate handle+tag address whose mail `inbox` can read on its own.",
      args: T.Object({ tag: T.Optional(Tag) }),
      access: "account",
      run({ tag }, ctx) {
        const a = ctx.account;
        const t = tag?.toLowerCase();
        return {
          handle: a.username,
          address: ctx.mail.domain ? addressOf(ctx.mail.domain, a.username) : null,
          outside_mail: ctx.mail.reachable,
          ...(t ? { tag: t, tagged_handle: `${a.username}+${t}`, tagged_address: ctx.mail.domain ? addressOf(ctx.mail.domain, a.username, t) : null } : {}),
        };
      },
    }),
    send: write({
      description: `Sends plain-text mail as you. To a username (or handle+tag) on this instance it is delivered at once and free. To a full address it leaves over SMTP from the instance's domain, DKIM-signed, and costs ${OUTSIDE_PRICE} credits; replies come back to your inbox, and if it cannot be delivered after its retries a bounce does. Give \`reply_to\` (a message id from your inbox) to answer in that thread.`,
      args: T.Object({
        to: T.String({ minLength: 1, maxLength: 320, description: "A username on this instance, handle+tag, or a full email address." }),
        subject: T.String({ maxLength: 998, description: "The subject line." }),
        body: T.String({ maxLength: 1_000_000, description: "The message, plain text." }),
        reply_to: T.Optional(T.String({ minLength: 1, maxLength: 64, description: "The id of a message you received or sent that this answers; sets In-Reply-To and References." })),
      }),
      access: "account",
      openWorld: true,
      price: priceOf,
      async run({ to, subject, body, reply_to }, ctx) {
        if (/[\r\n]/.test(subject)) throw invalid("subject", "a subject is one line: it may not hold line breaks");
        const thread = reply_to ? replyThread(ctx.db, ctx.account.id, reply_to) : null;
        return ctx.mail.send({ to, subject, body, ...(thread ?? {}) });
      },
    }),
    inbox: read({
      description: "Your most recent messages, newest first. With `tag`, only the mail that came to handle+tag.",
      args: T.Object({ limit: T.Optional(Limit(10, 100)), tag: T.Optional(Tag) }),
      access: "account",
      run({ limit, tag }, ctx) {
        if (tag !== undefined && !TAG.test(tag.toLowerCase())) throw invalid("tag", "a tag is 1-32 of a-z, 0-9, _ and -");
        return recent(ctx.db, ctx.account.id, { folder: "inbox", tag: tag?.toLowerCase(), limit: limit ?? 10 }).map(shapeMessage);
      },
    }),
    search: read({
      description: "Your messages (received and sent) whose subject, sender or text match every word of `query`, best first. Without a query, the most recent received.",
      args: T.Object({ query: T.Optional(T.String({ maxLength: 500, description: "Words to find." })), limit: T.Optional(Limit(10, 100)) }),
      access: "account",
      run({ query, limit }, ctx) {
        const n = limit ?? 10;
        if (!query?.trim()) return recent(ctx.db, ctx.account.id, { limit: n }).map(shapeMessage);
        const hits = ctx.index.search({ query, kind: "message", owner: ctx.account.id, limit: n });
        return hits.flatMap((h) => {
          const m = messageById(ctx.db, ctx.account.id, h.ref);
          return m ? [{ ...shapeMessage(m), snippet: h.snippet }] : [];
        });
      },
    }),
  },
  async start(ctx) {
    await ctx.mail.start();
  },
  async stop(ctx) {
    await ctx.mail.stop();
  },
});

function replyThread(db: Parameters<typeof messageById>[0], account: string, id: string) {
  const m = messageById(db, account, id);
  if (!m) throw invalid("reply_to", `no message "${id}" in your mail`);
  return { inReplyTo: m.messageId, references: [...(m.references ? m.references.split(" ") : []), m.messageId] };
}
