// Fetching a URL someone else chose. Every hop is checked: http or https
// only, the host's addresses judged after DNS resolution, and the connection
// made to exactly the address that was judged (the resolver hands the socket
// what it checked, so a name cannot answer differently a moment later).
// Redirects are followed by hand so each target is checked the same way.
// Size and time are capped across the whole exchange.
import type { LookupAddress } from "node:dns";
import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import { HearthError, invalid, tooLarge, upstream } from "../../errors.ts";
import { blockedAddress, blockedName, describeBlocked, type Blocked } from "./addresses.ts";
import { LookupFailed, resolverFor } from "./resolve.ts";

export interface GuardedOptions {
  /** The argument the URL came from, named in refusals. */
  field: string;
  /** Lets 127.0.0.0/8 and ::1 through: for tests against loopback fixture servers only. */
  allowLoopback?: boolean;
  /** Skips the address checks: for URLs the operator configured (a feed on the local network). */
  trusted?: boolean;
  maxBytes: number;
  timeoutMs: number;
  maxRedirects?: number;
  headers?: Record<string, string>;
  /** Statuses other than 2xx that are answers (304 for a conditional request). */
  accept?: number[];
  /** DNS servers to look names up with (host or host:port); the system's resolver when empty. */
  dns?: string[];
}

export interface GuardedAnswer {
  /** The URL that answered, after redirects. */
  url: string;
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

class Refused extends Error {
  constructor(
    readonly why: Blocked,
    readonly address: string,
  ) {
    super(`refused ${address}`);
  }
}

function allowed(why: Blocked | null, opts: GuardedOptions): boolean {
  return why === null || (why === "loopback" && !!opts.allowLoopback);
}

function refusal(opts: GuardedOptions, url: URL, hop: number, why: Blocked, address?: string): HearthError {
  const where = address && address !== url.hostname.replace(/^\[|\]$/g, "") ? `${url.host} (${address})` : url.host;
  const how = hop === 0 ? `${opts.field} leads to ${where}` : `${opts.field} redirected to ${url.href}, and ${where}`;
  return invalid(opts.field, `${how} is ${describeBlocked[why]}; this instance fetches only public internet addresses`);
}

/** Checks what can be checked without the network: scheme, credentials, and a host that is an address or a known internal name. */
function checkTarget(url: URL, opts: GuardedOptions, hop: number) {
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw invalid(opts.field, hop === 0 ? `${opts.field} must be an http or https URL (got ${url.protocol.replace(":", "")})` : `${opts.field} redirected to ${url.protocol} URL; only http and https are followed`);
  if (url.username || url.password) throw invalid(opts.field, `${opts.field} must not carry a user name or password`);
  if (opts.trusted) return;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (isIP(host)) {
    const why = blockedAddress(host);
    if (!allowed(why, opts)) throw refusal(opts, url, hop, why!);
  } else {
    const why = blockedName(host);
    if (why && !allowed(why, opts)) throw refusal(opts, url, hop, why);
  }
}

/** A resolver for the socket that refuses a name when any of its addresses is not public. */
function guardedLookup(opts: GuardedOptions) {
  return (hostname: string, options: any, callback: (err: Error | null, address: string | LookupAddress[], family?: number) => void) => {
    resolverFor(opts.dns ?? [], opts.timeoutMs)(hostname, options?.family ?? 0).then((addresses) => {
      if (!opts.trusted)
        for (const a of addresses) {
          const why = blockedAddress(a.address);
          if (!allowed(why, opts)) return callback(new Refused(why!, a.address), []);
        }
      if (options?.all) callback(null, addresses);
      else callback(null, addresses[0].address, addresses[0].family);
    }, (err: NodeJS.ErrnoException) => callback(new LookupFailed(hostname, err?.code), []));
  };
}

function once(url: URL, opts: GuardedOptions, deadline: number): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const mod = url.protocol === "https:" ? https : http;
    const host = url.hostname.replace(/^\[|\]$/g, "");
    const req = mod.request(
      {
        protocol: url.protocol,
        hostname: host,
        port: url.port || undefined,
        path: url.pathname + url.search,
        method: "GET",
        headers: { "accept-encoding": "gzip, deflate, br", ...opts.headers },
        lookup: isIP(host) ? undefined : (guardedLookup(opts) as any),
        timeout: Math.max(1, deadline - Date.now()),
      },
      (res) => {
        clearTimeout(overall);
        resolve(res);
      },
    );
    // The socket timeout only measures silence; this caps a server that trickles its headers.
    const overall = setTimeout(() => req.destroy(new Error("timeout")), Math.max(1, deadline - Date.now()));
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", (e) => {
      clearTimeout(overall);
      reject(e);
    });
    req.end();
  });
}

function decoded(res: IncomingMessage): NodeJS.ReadableStream {
  const enc = String(res.headers["content-encoding"] ?? "").toLowerCase();
  if (enc === "gzip" || enc === "x-gzip") return res.pipe(createGunzip());
  if (enc === "deflate") return res.pipe(createInflate());
  if (enc === "br") return res.pipe(createBrotliDecompress());
  return res;
}

/** Reads the body up to the cap, counting decompressed bytes, so a small compressed bomb is stopped too. */
function readCapped(res: IncomingMessage, opts: GuardedOptions, url: URL, deadline: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(res.headers["content-length"] ?? NaN);
    const over = () => tooLarge(`${url.host} sent more than ${opts.maxBytes} bytes; the limit is ${opts.maxBytes}`, opts.field);
    if (declared > opts.maxBytes) {
      res.destroy();
      return reject(over());
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const stream = decoded(res);
    const timer = setTimeout(() => {
      res.destroy();
      reject(upstream("upstream_timeout", `${url.host} did not finish sending within ${Math.round(opts.timeoutMs / 1000)} s`));
    }, Math.max(1, deadline - Date.now()));
    stream.on("data", (c: Buffer) => {
      size += c.length;
      if (size > opts.maxBytes) {
        clearTimeout(timer);
        res.destroy();
        reject(over());
        return;
      }
      chunks.push(c);
    });
    stream.on("end", () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
    stream.on("error", () => {
      clearTimeout(timer);
      reject(upstream("upstream_failed", `${url.host} sent a broken or badly compressed answer`));
    });
  });
}

const flat = (h: IncomingMessage["headers"]) => {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(", ") : v;
  return out;
};

export async function guardedFetch(raw: string, opts: GuardedOptions): Promise<GuardedAnswer> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid(opts.field, `${opts.field} is not a URL (got ${JSON.stringify(raw.slice(0, 200))})`);
  }
  const deadline = Date.now() + opts.timeoutMs;
  const maxRedirects = opts.maxRedirects ?? 5;
  for (let hop = 0; ; hop++) {
    checkTarget(url, opts, hop);
    let res: IncomingMessage;
    try {
      res = await once(url, opts, deadline);
    } catch (e) {
      if (e instanceof Refused) throw refusal(opts, url, hop, e.why, e.address);
      if (e instanceof LookupFailed) throw e.answer();
      if (Date.now() >= deadline || (e as Error)?.message === "timeout")
        throw upstream("upstream_timeout", `${url.host} did not answer within ${Math.round(opts.timeoutMs / 1000)} s`);
      throw upstream("upstream_unavailable", `${url.host} could not be reached`);
    }
    const status = res.statusCode ?? 0;
    const location = res.headers.location;
    if (status >= 300 && status < 400 && status !== 304 && location) {
      res.resume();
      if (hop >= maxRedirects) throw upstream("upstream_failed", `${opts.field} redirected more than ${maxRedirects} times`);
      try {
        url = new URL(location, url);
      } catch {
        throw upstream("upstream_failed", `${url.host} redirected to something that is not a URL`);
      }
      continue;
    }
    const ok = (status >= 200 && status < 300) || (opts.accept ?? []).includes(status);
    if (!ok) {
      res.resume();
      if (status === 404 || status === 410) throw new HearthError("not_found", `${url.href} answered HTTP ${status}: there is no page there`);
      if (status === 429 || status === 503) throw upstream("upstream_unavailable", `${url.host} answered HTTP ${status}`);
      throw upstream("upstream_failed", `${url.host} answered HTTP ${status}`);
    }
    const body = await readCapped(res, opts, url, deadline);
    return { url: url.href, status, headers: flat(res.headers), body };
  }
}

/** Decodes a page's bytes by the charset its header or its own meta tag names, UTF-8 otherwise. */
export function decodeText(body: Buffer, contentType: string | undefined): string {
  let charset = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType ?? "")?.[1];
  if (!charset) charset = /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(body.subarray(0, 2048).toString("latin1"))?.[1];
  try {
    return new TextDecoder(charset ?? "utf-8").decode(body);
  } catch {
    return new TextDecoder("utf-8").decode(body);
  }
}
