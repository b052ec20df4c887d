// Hands one message to the next server: the recipient domain's MX (RFC 5321
// section 5: MX by preference, else the domain itself; a null MX refuses
// mail) or, when SMTP_RELAY_URL is set, that relay. The recipient's domain
// is the sender's choice, so straight to an MX only public internet
// addresses are reached, judged as web/fetch judges them, after DNS: a
// domain or MX leading to this machine, its network or a metadata service
// would open an SMTP session there carrying the sender's words. The relay
// is the owner's own choice and is reached wherever it is.
import { promises as dns } from "node:dns";
import { isIP } from "node:net";
import type { Transporter } from "nodemailer";
import { blockedAddress, blockedName, describeBlocked, type Blocked } from "../upstream/pages/addresses.ts";

export interface DeliveryResult {
  ok: boolean;
  /** A 5xx answer or a domain that takes no mail: trying again cannot help. */
  permanent: boolean;
  detail: string;
}

/** A resolver on MAIL_DNS's servers when set (host or host:port, comma separated), else the system's. */
export function resolverFor(config: Readonly<Record<string, string>>): dns.Resolver {
  const r = new dns.Resolver({ timeout: 3000, tries: 2 });
  const servers = (config.MAIL_DNS || "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (servers.length) r.setServers(servers);
  return r;
}

/**
 * TXT records as Node's resolver gives them: one array of strings per record.
 * Bun's resolver returns each string of a multi-string record (a DKIM key is
 * split at 255 bytes) as a record of its own; a string that follows one of
 * exactly 255 bytes, or that does not open with a tag (v=, k=, p=, ...), is
 * joined back to the record before it.
 */
export function regroupTxt(records: string[][]): string[][] {
  if (records.some((r) => r.length !== 1)) return records;
  const out: string[][] = [];
  for (const [s] of records) {
    const prev = out[out.length - 1];
    if (prev && (prev[prev.length - 1].length === 255 || !/^\s*[A-Za-z][A-Za-z0-9_-]*=/.test(s))) prev.push(s);
    else out.push([s]);
  }
  return out;
}

/** A resolver function for mailauth (SPF, DKIM, DMARC) over MAIL_DNS. */
export function authResolver(config: Readonly<Record<string, string>>) {
  const resolver = resolverFor(config);
  return async (name: string, type: string): Promise<string[] | string[][]> => {
    if (type === "TXT") return regroupTxt(await resolver.resolveTxt(name));
    return (await resolver.resolve(name, type)) as string[];
  };
}

const PUBLIC_ONLY = "mail is delivered only to public internet addresses";

/** Lets 127.0.0.0/8 and ::1 through: for tests against loopback fixture servers only. */
const loopbackAllowed = (config: Readonly<Record<string, string>>) => config.MAIL_MX_ALLOW_LOOPBACK === "true";

function refused(why: Blocked | null, config: Readonly<Record<string, string>>): why is Blocked {
  return why !== null && !(why === "loopback" && loopbackAllowed(config));
}

/** A domain written as an address (or digits only) is judged as the address; a name, by the names that always lead inside. */
function blockedDomain(domain: string): Blocked | null {
  const d = domain.replace(/^\[|\]$/g, "");
  return isIP(d) || /^[\d.]+$/.test(d) ? blockedAddress(d) : blockedName(d);
}

/**
 * Why mail to this domain may not leave straight to its MX, before any DNS
 * (a domain that is a loopback, private or link-local address, localhost,
 * a metadata name); null when it may, or when a relay carries all mail.
 */
export function refusedDomain(config: Readonly<Record<string, string>>, domain: string): string | null {
  if (config.SMTP_RELAY_URL) return null;
  const why = blockedDomain(domain);
  return refused(why, config) ? `${domain} is ${describeBlocked[why]}; ${PUBLIC_ONLY}` : null;
}

async function exchangers(resolver: dns.Resolver, domain: string): Promise<string[] | DeliveryResult> {
  try {
    const mx = await resolver.resolveMx(domain);
    if (mx.length === 1 && (mx[0].exchange === "" || mx[0].exchange === ".")) return { ok: false, permanent: true, detail: `${domain} accepts no mail (null MX)` };
    if (mx.length) return mx.sort((a, b) => a.priority - b.priority).map((m) => m.exchange);
    return [domain];
  } catch (e) {
    const code = (e as { code?: string }).code;
    // No MX record: the domain itself is the mail server (its address lookup says whether it exists).
    if (code === "ENODATA" || code === "ENOTFOUND") return [domain];
    return { ok: false, permanent: false, detail: `looking up the mail servers of ${domain} failed: ${code ?? (e as Error).message}` };
  }
}

/** The addresses of a mail server, through the same resolver as its MX; [] when the name does not exist. */
async function addressesOf(resolver: dns.Resolver, host: string): Promise<string[] | DeliveryResult> {
  if (/^[\d.]+$/.test(host) || host.includes(":")) return [host];
  const found: string[] = [];
  let failure: string | null = null;
  for (const lookup of [() => resolver.resolve4(host), () => resolver.resolve6(host)]) {
    try {
      found.push(...(await lookup()));
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code !== "ENODATA" && code !== "ENOTFOUND") failure = code ?? (e as Error).message;
    }
  }
  if (!found.length && failure) return { ok: false, permanent: false, detail: `looking up ${host} failed: ${failure}` };
  return found;
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
  // Loaded on first delivery, not at start: most instances never send outside mail.
  const { default: nodemailer } = await import("nodemailer");
  const timeouts = { connectionTimeout: 30_000, greetingTimeout: 30_000, socketTimeout: 120_000 };
  if (config.SMTP_RELAY_URL) {
    const url = new URL(config.SMTP_RELAY_URL);
    const transport = nodemailer.createTransport({ url: config.SMTP_RELAY_URL, name: config.MAIL_HOST || config.MAIL_DOMAIN, ...timeouts });
    return handOver(transport, m.sender, m.recipient, m.raw, `relay ${url.hostname}`);
  }
  const domain = m.recipient.slice(m.recipient.lastIndexOf("@") + 1);
  const early = refusedDomain(config, domain);
  if (early) return { ok: false, permanent: true, detail: early };
  const resolver = resolverFor(config);
  const hosts = await exchangers(resolver, domain);
  if (!Array.isArray(hosts)) return hosts;
  const port = Number(config.MAIL_MX_PORT || 25);
  let last: DeliveryResult | null = null;
  // A server refused for where it leads is never tried; the others still are, and only when none is left is the refusal the answer.
  let refusal: DeliveryResult | null = null;
  for (const host of hosts) {
    const named = blockedDomain(host);
    if (refused(named, config)) {
      refusal ??= { ok: false, permanent: true, detail: `the mail server of ${domain}, ${host}, is ${describeBlocked[named]}; ${PUBLIC_ONLY}` };
      continue;
    }
    const addrs = await addressesOf(resolver, host);
    if (!Array.isArray(addrs)) {
      last = addrs;
      continue;
    }
    // As web/fetch does: a name with any address that is not public is not reached at all.
    const inside = addrs.map((ip) => ({ ip, why: blockedAddress(ip) })).find((a) => refused(a.why, config));
    if (inside) {
      refusal ??= { ok: false, permanent: true, detail: `the mail server of ${domain}, ${host} (${inside.ip}), is ${describeBlocked[inside.why!]}; ${PUBLIC_ONLY}` };
      continue;
    }
    for (const ip of addrs) {
      // An MX is reached on port 25 with STARTTLS when offered; certificates of MX hosts are
      // commonly self-signed, and refusing them would only push delivery to plain text.
      const transport = nodemailer.createTransport({ host: ip, port, secure: false, name: config.MAIL_HOST || config.MAIL_DOMAIN, tls: { rejectUnauthorized: false, servername: host }, ...timeouts });
      last = await handOver(transport, m.sender, m.recipient, m.raw, host);
      if (last.ok || last.permanent) return last;
    }
  }
  last ??= refusal ?? { ok: false, permanent: true, detail: `${domain} has no mail server that exists` };
  return last;
}
