// Hands one message to the next server: the recipient domain's MX (RFC 5321
// section 5: MX by preference, else the domain itself; a null MX refuses
// mail) or, when SMTP_RELAY_URL is set, that relay.
import { promises as dns } from "node:dns";
import nodemailer, { type Transporter } from "nodemailer";

export interface DeliveryResult {
  ok: boolean;
  /** A 5xx answer or a domain that takes no mail: trying again cannot help. */
  permanent: boolean;
  detail: string;
}

/** A resolver on MAIL_DNS's servers when set (host or host:port, comma separated), else the system's. */
export function resolverFor(config: Readonly<Record<string, string>>): dns.Resolver {
  const r = new dns.Resolver({ timeout: 5000, tries: 2 });
  const servers = (config.MAIL_DNS || "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (servers.length) r.setServers(servers);
  return r;
}

async function exchangers(resolver: dns.Resolver, domain: string): Promise<string[] | DeliveryResult> {
  try {
    const mx = await resolver.resolveMx(domain);
    if (mx.length === 1 && (mx[0].exchange === "" || mx[0].exchange === ".")) return { ok: false, permanent: true, detail: `${domain} accepts no mail (null MX)` };
    return mx.sort((a, b) => a.priority - b.priority).map((m) => m.exchange);
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === "ENODATA") return [domain];
    if (code === "ENOTFOUND") return { ok: false, permanent: true, detail: `${domain} does not exist` };
    return { ok: false, permanent: false, detail: `looking up the mail servers of ${domain} failed: ${code ?? (e as Error).message}` };
  }
}

interface SendError {
  responseCode?: number;
  response?: string;
  code?: string;
  message: string;
}

async function handOver(transport: Transporter, sender: string, recipient: string, raw: string, where: string): Promise<DeliveryResult> {
  try {
    const info = await transport.sendMail({ envelope: { from: sender, to: [recipient] }, raw });
    return { ok: true, permanent: false, detail: `${where}: ${info.response}` };
  } catch (e) {
    const err = e as SendError;
    const code = err.responseCode ?? 0;
    return { ok: false, permanent: code >= 500 && code < 600, detail: `${where}: ${err.response ?? err.code ?? err.message}` };
  } finally {
    transport.close();
  }
}

export async function deliver(config: Readonly<Record<string, string>>, m: { sender: string; recipient: string; raw: string }): Promise<DeliveryResult> {
  const timeouts = { connectionTimeout: 30_000, greetingTimeout: 30_000, socketTimeout: 120_000 };
  if (config.SMTP_RELAY_URL) {
    const url = new URL(config.SMTP_RELAY_URL);
    const transport = nodemailer.createTransport({ url: config.SMTP_RELAY_URL, name: config.MAIL_HOST || config.MAIL_DOMAIN, ...timeouts });
    return handOver(transport, m.sender, m.recipient, m.raw, `relay ${url.hostname}`);
  }
  const domain = m.recipient.slice(m.recipient.lastIndexOf("@") + 1);
  const hosts = await exchangers(resolverFor(config), domain);
  if (!Array.isArray(hosts)) return hosts;
  const port = Number(config.MAIL_MX_PORT || 25);
  let last: DeliveryResult = { ok: false, permanent: false, detail: `no mail server for ${domain}` };
  for (const host of hosts) {
    // An MX is reached on port 25 with STARTTLS when offered; certificates of MX hosts are
    // commonly self-signed, and refusing them would only push delivery to plain text.
    const transport = nodemailer.createTransport({ host, port, secure: false, name: config.MAIL_HOST || config.MAIL_DOMAIN, tls: { rejectUnauthorized: false }, ...timeouts });
    last = await handOver(transport, m.sender, m.recipient, m.raw, host);
    if (last.ok || last.permanent) return last;
  }
  return last;
}
