// The instance's MX: an SMTP server (smtp-server) on SMTP_PORT while
// MAIL_DOMAIN is set. Unknown recipients are refused at RCPT, so nothing is
// accepted that would later bounce; accepted mail is checked with mailauth
// (SPF, DKIM, DMARC), parsed with mailparser and stored once per account.
// Mail claiming a sender here (an address at the mail domain, or a bare
// handle) is refused: accounts here send through the instance itself, which
// delivers to its own accounts directly and never over SMTP, so such a claim
// from outside is always forged, and stored it would read as from alice.
import { readFileSync } from "node:fs";
// smtp-server, mailauth and mailparser load when the server starts, so an instance without a mail domain never pays for them.
import type { AuthenticateResult } from "mailauth";
import type { AddressObject } from "mailparser";
import type { SMTPServer, SMTPServerAddress, SMTPServerDataStream, SMTPServerSession } from "smtp-server";
import { asc, eq } from "drizzle-orm";
import { accounts } from "../db/schema.ts";
import type { Runtime } from "../runtime.ts";
import { bareId, parseLocal, sameDomain, splitAddress } from "./addresses.ts";
import { authResolver } from "./deliver.ts";
import type { MailService } from "./service.ts";

/** Addresses RFC 5321 and RFC 2142 expect every domain to answer; they reach the first admin. */
const ROLE_ADDRESSES = new Set(["postmaster", "abuse"]);

interface Rcpt {
  account: { id: string; username: string };
  tag: string | null;
}

/** Longest the SPF/DKIM/DMARC lookups of one message may take. */
const AUTH_TIMEOUT_MS = 20_000;

const smtpError = (code: number, message: string) => Object.assign(new Error(message), { responseCode: code });

export function maxMessageBytes(config: Readonly<Record<string, string>>): number {
  const n = Number(config.MAIL_MAX_BYTES || 26_214_400);
  return Number.isFinite(n) && n > 0 ? n : 26_214_400;
}

export function verdictOf(a: AuthenticateResult) {
  const dkim = a.dkim.results.map((r) => ({ domain: r.signingDomain ?? null, result: r.status.result }));
  return {
    spf: a.spf ? a.spf.status.result : "none",
    dkim: dkim.find((d) => d.result === "pass")?.result ?? dkim[0]?.result ?? "none",
    dkim_domains: dkim.filter((d) => d.result === "pass").map((d) => d.domain),
    dmarc: a.dmarc ? a.dmarc.status.result : "none",
  };
}

/** Every address in From, group members too. */
function authors(a: AddressObject | AddressObject[] | undefined): string[] {
  type Entry = { address?: string; name?: string; group?: Entry[] };
  const flat = (e: Entry): Entry[] => (e.group ? e.group.flatMap(flat) : [e]);
  const values = (Array.isArray(a) ? a : a ? [a] : []).flatMap((o) => (o.value as Entry[]).flatMap(flat));
  return values.map((v) => v.address ?? "").filter(Boolean);
}

/** The refusal for a sender address that names this instance: at its mail domain, or a bare handle as accounts here are named. */
function claimsHere(address: string, domain: string): Error | null {
  const at = address.lastIndexOf("@");
  if (at >= 0 && !sameDomain(address.slice(at + 1), domain)) return null;
  return smtpError(550, `5.7.1 ${address}: senders at ${domain} send through this instance, never from outside`);
}

/** "Name <addr>" or "addr": the first author, without the quoting mailparser keeps. */
function firstAddress(a: AddressObject | AddressObject[] | undefined): string {
  const v = (Array.isArray(a) ? a[0] : a)?.value[0];
  if (!v?.address) return "";
  return v.name ? `${v.name} <${v.address}>` : v.address;
}

export class Inbound {
  private server: SMTPServer | null = null;
  /** The port actually bound (SMTP_PORT=0 picks a free one). */
  port: number | null = null;

  constructor(
    private rt: Runtime,
    private mail: MailService,
  ) {}

  async start() {
    const { config } = this.rt;
    if (!this.mail.domain || config.SMTP_PORT === "off" || this.server) return;
    const name = config.MAIL_HOST || this.mail.domain;
    const { SMTPServer } = await import("smtp-server");
    // Warmed now so the first message does not wait for them.
    void Promise.all([import("mailauth"), import("mailparser")]).catch(() => undefined);
    const tls = config.MAIL_TLS_KEY && config.MAIL_TLS_CERT ? { key: readFileSync(config.MAIL_TLS_KEY), cert: readFileSync(config.MAIL_TLS_CERT) } : {};
    const server = new SMTPServer({
      name,
      banner: "Hearth mail",
      size: maxMessageBytes(config),
      authOptional: true,
      disabledCommands: ["AUTH"],
      logger: false,
      ...tls,
      onMailFrom: (address, session, cb) => {
        const refused = address.address ? claimsHere(address.address, this.mail.domain!) : null;
        cb(refused ?? undefined);
      },
      onRcptTo: (address, session, cb) => {
        this.recipient(address).then(
          () => cb(),
          (e) => cb(e as Error),
        );
      },
      onData: (stream, session, cb) => {
        this.receive(stream, session).then(
          (n) => cb(null, `stored for ${n} recipient${n === 1 ? "" : "s"}`),
          (e) => cb(e as Error),
        );
      },
    });
    server.on("error", (e) => this.rt.log.error("smtp server", { error: String(e) }));
    const port = Number(config.SMTP_PORT || 25);
    await new Promise<void>((resolve) => {
      const fail = (e: Error) => {
        this.rt.log.error("smtp server could not listen: outside mail cannot arrive", { port, error: String(e) });
        resolve();
      };
      server.server.once("error", fail);
      server.listen(port, config.SMTP_HOST || config.HOST || "0.0.0.0", () => {
        server.server.off("error", fail);
        const addr = server.server.address();
        this.port = typeof addr === "object" && addr ? addr.port : port;
        this.server = server;
        this.rt.log.info("smtp listening", { port: this.port, domain: this.mail.domain });
        resolve();
      });
    });
  }

  async stop() {
    const s = this.server;
    this.server = null;
    this.port = null;
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  /** The account (and tag) an envelope recipient reaches; throws an SMTP refusal otherwise. */
  async recipient(address: SMTPServerAddress): Promise<Rcpt> {
    const addr = splitAddress(address.address);
    const domain = this.mail.domain!;
    if (!addr || !sameDomain(addr.domain, domain)) throw smtpError(550, `5.7.1 ${address.address}: relaying denied, this server takes mail for ${domain} only`);
    const local = addr.local.toLowerCase();
    if (ROLE_ADDRESSES.has(local)) {
      const admin = await this.rt.store.rdb.select({ id: accounts.id, username: accounts.username }).from(accounts).where(eq(accounts.admin, true)).orderBy(asc(accounts.created)).limit(1).get();
      if (admin) return { account: admin, tag: null };
    }
    const lp = parseLocal(local);
    const account = lp && (await this.mail.account({ username: lp.handle }));
    if (!lp || !account) throw smtpError(550, `5.1.1 ${address.address}: no such user here`);
    return { account, tag: lp.tag };
  }

  private async receive(stream: SMTPServerDataStream, session: SMTPServerSession): Promise<number> {
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    if (stream.sizeExceeded) throw smtpError(552, `5.3.4 message exceeds the ${maxMessageBytes(this.rt.config)}-byte limit`);
    const raw = Buffer.concat(chunks);
    const [{ authenticate }, { simpleParser }] = await Promise.all([import("mailauth"), import("mailparser")]);
    const parsed = await simpleParser(raw);
    for (const a of authors(parsed.from)) {
      const refused = claimsHere(a, this.mail.domain!);
      if (refused) throw refused;
    }
    let verdict: ReturnType<typeof verdictOf> | { error: string };
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      // A resolver that does not answer must not hold the sender's DATA for minutes: the verdict says so instead.
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`temperror: the DNS checks took longer than ${AUTH_TIMEOUT_MS / 1000} s`)), AUTH_TIMEOUT_MS);
      });
      const auth = await Promise.race([late, authenticate(raw, {
        ip: session.remoteAddress,
        helo: session.hostNameAppearsAs,
        sender: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
        mta: this.rt.config.MAIL_HOST || this.mail.domain!,
        resolver: authResolver(this.rt.config),
      })]);
      verdict = verdictOf(auth);
    } catch (e) {
      verdict = { error: `authentication checks failed: ${(e as Error).message}` };
    } finally {
      clearTimeout(timer);
    }
    const messageId = bareId(parsed.messageId) ?? `${crypto.randomUUID()}@${this.mail.domain}`;
    const refs = parsed.references ? (Array.isArray(parsed.references) ? parsed.references : parsed.references.split(/\s+/)) : [];
    const rcpts = await Promise.all(session.envelope.rcptTo.map(async (r) => ({ rcpt: await this.recipient(r), to: r.address })));
    let stored = 0;
    await this.rt.store.write(async () => {
      // In the write that stores the rows naming it, so no release comes between.
      const hash = await this.rt.blobs.put(new Uint8Array(raw));
      const seen = new Set<string>();
      for (const { rcpt, to } of rcpts) {
        if (seen.has(rcpt.account.id)) continue;
        seen.add(rcpt.account.id);
        const row = await this.mail.store({
          account: rcpt.account,
          folder: "inbox",
          tag: rcpt.tag,
          from: firstAddress(parsed.from) || (session.envelope.mailFrom ? session.envelope.mailFrom.address : ""),
          to,
          subject: parsed.subject ?? "",
          body: parsed.text ?? "",
          messageId,
          inReplyTo: bareId(parsed.inReplyTo),
          references: refs.map((r) => bareId(r)).filter((r): r is string => !!r),
          auth: verdict,
          raw: hash,
        });
        if (row) stored++;
      }
    });
    return stored || rcpts.length;
  }
}
