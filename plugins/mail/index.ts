import { Type as T } from "@sinclair/typebox";
import { addressOf, parseLocal, sameDomain, splitAddress } from "hearth/mail";
import { invalid, definePlugin, read, write, type BaseCtx, type Ctx } from "hearth";
import { mailCard } from "./card.ts";

/** Credits for one message to an outside address: it spends a relay's fee or the sending address's reputation. */
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
  card: mailCard,
  screens: { mail: { title: "Mail", module: "screens/mail.ts", order: 20, reads: [{ method: "inbox", args: { limit: 100 } }, { method: "info" }] } },
  description: "Mail for every account: its handle (and handle+tag) on this instance, and with a mail domain real mail in and out over SMTP.",
  needs: ["mail", "db", "index"],
  config: {
    MAIL_DOMAIN: { default: "", description: "Domain mail is sent from and arrives at (example.org); unset, only mail between accounts moves. `hearth mail dns` prints the records to publish." },
    MAIL_HOST: { default: "", description: "Host name of this mail server, as MX records name it and its greeting says; MAIL_DOMAIN when empty." },
    SMTP_PORT: { default: "25", description: "Port the inbound SMTP server listens on while MAIL_DOMAIN is set; off turns it off." },
    SMTP_HOST: { default: "", description: "Address the SMTP server binds to; HOST when empty." },
    SMTP_RELAY_URL: { default: "", description: "Send outside mail through this relay (smtp://user:pass@host:587 or smtps://...:465) instead of straight to each recipient's MX." },
    MAIL_MX_PORT: { default: "25", description: "Port of recipients' mail servers when delivering straight to their MX." },
    MAIL_MX_ALLOW_LOOPBACK: {
      default: "false",
      description: "true lets mail delivered straight to an MX reach 127.0.0.0/8 and ::1. For tests against loopback fixture servers only; never on a real instance.",
    },
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
        "How to reach you: your handle (your username), your email address when the instance has a mail domain, and whether outside mail can arrive. With `tag`, the separate handle+tag (and its address): mail sent there is yours, kept under the tag, and `search` for the handle+tag reads it on its own.",
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
      description: `Sends plain-text mail as you. To a username (or handle+tag) on this instance it is delivered at once and free. To a full address it leaves over SMTP from the instance's domain, DKIM-signed, and costs ${OUTSIDE_PRICE} credits; replies come back to your inbox, and if it cannot be delivered after its retries a bounce does. A subject starting "Re:" answers the latest message from that sender with that subject, in its thread (In-Reply-To and References).`,
      args: T.Object({
        to: T.String({ minLength: 1, maxLength: 320, description: "A username on this instance, handle+tag, or a full email address." }),
        subject: T.String({ maxLength: 998, description: 'The subject line; "Re: <subject>" answers that message in its thread.' }),
        body: T.String({ maxLength: 1_000_000, description: "The message, plain text." }),
      }),
      access: "account",
      outbound: true,
      recipient: "to",
      openWorld: true,
      price: priceOf,
      async run({ to, subject, body }, ctx) {
        if (/[\r\n]/.test(subject)) throw invalid("subject", "a subject is one line: it may not hold line breaks");
        const thread = await answering(ctx, to, subject);
        return ctx.mail.send({ to, subject, body, ...(thread ?? {}) });
      },
    }),
    inbox: read({
      description: "Your most recent messages, newest first. To read only the mail that came to one handle+tag (mail/info gives it), search for that handle+tag.",
      args: T.Object({ limit: T.Optional(Limit(10, 100)) }),
      access: "account",
      untrusted: true,
      async run({ limit }, ctx) {
        return (await ctx.mail.recent(ctx.db, ctx.account.id, { folder: "inbox", limit: limit ?? 10 })).map(ctx.mail.shape);
      },
    }),
    search: read({
      description:
        "Your messages (received and sent) whose subject, sender or text match every word of `query`, best first. A query that is one of your handle+tag forms (alice+shop, or its address) lists the mail that came to it, newest first. Without a query, the most recent received.",
      args: T.Object({ query: T.Optional(T.String({ maxLength: 500, description: "Words to find, or one of your handle+tag forms." })), limit: T.Optional(Limit(10, 100)) }),
      access: "account",
      untrusted: true,
      async run({ query, limit }, ctx) {
        const n = limit ?? 10;
        const q = query?.trim() ?? "";
        if (!q) return (await ctx.mail.recent(ctx.db, ctx.account.id, { limit: n })).map(ctx.mail.shape);
        const tag = ownTag(q, ctx.account.username, ctx.mail.domain);
        if (tag) return (await ctx.mail.recent(ctx.db, ctx.account.id, { folder: "inbox", tag, limit: n })).map(ctx.mail.shape);
        const hits = await ctx.index.search({ query: q, kind: "message", owner: ctx.account.id, limit: n });
        const found = await Promise.all(hits.map(async (h) => ({ h, m: await ctx.mail.byId(ctx.db, ctx.account.id, h.ref) })));
        return found.flatMap(({ h, m }) => (m ? [{ ...ctx.mail.shape(m), snippet: h.snippet }] : []));
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

/** The tag when `q` is the caller's own handle+tag, bare or as an address at the mail domain. */
function ownTag(q: string, username: string, domain: string | null): string | null {
  const addr = q.includes("@") ? splitAddress(q) : { local: q, domain: null };
  if (!addr || (addr.domain && (!domain || !sameDomain(addr.domain, domain)))) return null;
  const lp = parseLocal(addr.local);
  return lp && lp.handle === username && lp.tag ? lp.tag : null;
}

/** The mailbox in "Name <addr>" or "addr", lowercased. */
const mailbox = (from: string) => (/<([^<>]+)>\s*$/.exec(from)?.[1] ?? from).trim().toLowerCase();
const bareSubject = (s: string) => s.replace(/^(\s*(re|fwd?|aw|sv)\s*:\s*)+/i, "").trim().toLowerCase();

/** A "Re:" subject answers the latest message from `to` with that subject: its Message-ID and thread. */
async function answering(ctx: Ctx, to: string, subject: string) {
  const domain = ctx.mail.domain;
  if (!/^\s*re\s*:/i.test(subject)) return null;
  const want = bareSubject(subject);
  const who = to.trim().toLowerCase();
  const forms = new Set([who, domain && !who.includes("@") ? `${who}@${domain}` : who]);
  const m = (await ctx.mail.recent(ctx.db, ctx.account.id, { folder: "inbox", limit: 200 })).find((r) => forms.has(mailbox(r.from)) && bareSubject(r.subject) === want);
  if (!m) return null;
  return { inReplyTo: m.messageId, references: [...(m.references ? m.references.split(" ") : []), m.messageId] };
}
