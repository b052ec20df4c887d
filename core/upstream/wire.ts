// One request on the wire: timeout, a byte cap, one retry on a transient
// failure of a GET, and every failure mapped to DESIGN.md's upstream_* kinds.
// A POST is never sent twice: a connection that fails may fail after the
// provider took the request, and a second one could send a text, make an
// image or run a model again that was already paid for once (RFC 9110
// 9.2.2: only idempotent requests are retried on their own).
import { HearthError, upstream } from "../errors.ts";

export interface WireRequest {
  label: string;
  url: string;
  method: "GET" | "POST";
  headers: Record<string, string>;
  body?: string;
  timeoutMs: number;
  maxBytes: number;
  /** Statuses besides 2xx that are answers rather than failures (404 for "no such product"). */
  accept: number[];
  retryDelayMs: number;
  /**
   * Asked before each redirect is followed, with where it leads; it throws to
   * refuse. Without it no redirect is followed, and one is a failure.
   */
  redirect?: (to: URL) => void;
}

/** Redirects followed for one request at most. */
const MAX_REDIRECTS = 5;

export interface WireAnswer {
  status: number;
  body: string;
}

/** Connection refused, reset, or a gateway between us and the provider that gave up. */
const transientStatus = new Set([502, 503, 504]);

class Transient extends Error {
  constructor(readonly error: HearthError) {
    super(error.message);
  }
}

export async function send(req: WireRequest): Promise<WireAnswer> {
  try {
    return await once(req);
  } catch (e) {
    if (!(e instanceof Transient)) throw e;
    if (req.method !== "GET") throw e.error;
    await new Promise((r) => setTimeout(r, req.retryDelayMs));
    try {
      return await once(req);
    } catch (again) {
      throw again instanceof Transient ? again.error : again;
    }
  }
}

async function once(req: WireRequest): Promise<WireAnswer> {
  const abort = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    abort.abort();
  }, req.timeoutMs);
  const late = () => upstream("upstream_timeout", `${req.label} did not answer within ${(req.timeoutMs / 1000).toFixed(1)} s`);
  try {
    let res: Response;
    // Redirects are followed here, one hop at a time, so each place one leads is asked about before anything is sent there.
    let url = req.url;
    let method = req.method;
    let payload = req.body;
    for (let hops = 0; ; hops++) {
      try {
        res = await fetch(url, { method, headers: req.headers, body: payload, signal: abort.signal, redirect: "manual" });
      } catch {
        if (timedOut) throw late();
        throw new Transient(upstream("upstream_unavailable", `${req.label} could not be reached`));
      }
      const location = res.status >= 300 && res.status < 400 && res.status !== 304 ? res.headers.get("location") : null;
      if (location === null) break;
      void res.body?.cancel().catch(() => {});
      const to = URL.canParse(location, url) ? new URL(location, url) : null;
      if (!to || hops >= MAX_REDIRECTS || !req.redirect) throw upstream("upstream_failed", `${req.label} answered HTTP ${res.status} with a redirect that was not followed`);
      req.redirect(to);
      // As browsers do: a 303, or a 301/302 after a POST, is followed with a GET and no body.
      if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === "POST")) {
        method = "GET";
        payload = undefined;
      }
      url = to.href;
    }
    const ok = (res.status >= 200 && res.status < 300) || req.accept.includes(res.status);
    if (!ok) {
      void res.body?.cancel().catch(() => {});
      if (res.status === 429) {
        const after = res.headers.get("retry-after");
        throw new HearthError("upstream_unavailable", `${req.label} is limiting requests from this instance (HTTP 429)`, {
          retry: true,
          headers: after && /^\d+$/.test(after) ? { "Retry-After": after } : undefined,
        });
      }
      if (transientStatus.has(res.status))
        throw new Transient(upstream(res.status === 503 ? "upstream_unavailable" : "upstream_failed", `${req.label} answered HTTP ${res.status}`));
      throw upstream("upstream_failed", `${req.label} answered HTTP ${res.status}`);
    }
    let body: string;
    try {
      body = await readCapped(res, req.maxBytes, req.label);
    } catch (e) {
      if (e instanceof HearthError) throw e;
      if (timedOut) throw late();
      throw new Transient(upstream("upstream_failed", `${req.label} broke off its answer`));
    }
    return { status: res.status, body };
  } finally {
    clearTimeout(timer);
  }
}

/** Reads a provider's body as text, refusing one over maxBytes (declared or as it streams). */
export async function readCapped(res: Response, maxBytes: number, label: string): Promise<string> {
  const declared = Number(res.headers.get("content-length") ?? NaN);
  const tooBig = () => upstream("upstream_failed", `${label} sent more than ${Math.round(maxBytes / 1e6)} MB`);
  if (declared > maxBytes) {
    void res.body?.cancel().catch(() => {});
    throw tooBig();
  }
  if (!res.body) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      void reader.cancel().catch(() => {});
      throw tooBig();
    }
    chunks.push(value);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}
