// Binary answers from a provider (capability `bytes`): map tiles, timetable
// archives. The response cache holds text, and these are kept by the caller
// itself (in blobs, forever), so they skip it; the provider's `<NAME>_URL`,
// timeout, rate and concurrency caps and the byte cap apply as for `http`.
//
//   const r = await ctx.bytes.get("OS_MAPS", "/maps/raster/v1/zxy/Road_3857/7/63/42.png", { query: { key } });
//   r.bytes, r.status, r.contentType, r.etag, r.lastModified
//
// `method: "HEAD"` asks for the headers alone (r.size from Content-Length).
// Failures map as for `http`: unreachable, 503 or 429 => 503; late => 504;
// any other status not in `accept` => 502. A path that is a whole URL is used
// as it is when the provider has no base URL (feeds listed by an operator).
import { hostname } from "node:os";
import { HearthError, upstream } from "../errors.ts";
import { defineModule } from "../module.ts";
import type { Runtime } from "../runtime.ts";
import { declaredProvider, destination } from "./index.ts";
import { Gate } from "./limiter.ts";
import { providerNamed, type RateCap } from "./providers.ts";
import pkg from "../../package.json";

export interface BytesOptions {
  query?: Record<string, string | number | undefined>;
  headers?: Record<string, string>;
  method?: "GET" | "HEAD";
  /** Statuses besides 2xx that are answers (304 after a conditional request, 404). */
  accept?: number[];
  /** Largest body read; default the provider's cap, else 50 MB. */
  maxBytes?: number;
}

export interface BytesAnswer {
  status: number;
  bytes: Uint8Array;
  url: string;
  contentType: string | null;
  etag: string | null;
  lastModified: string | null;
  /** Content-Length as sent, for HEAD. */
  size: number | null;
}

export interface BytesFetcher {
  get(provider: string, path: string, opts?: BytesOptions): Promise<BytesAnswer>;
}

declare module "../plugin.ts" {
  interface CapabilityTypes {
    bytes: BytesFetcher;
  }
}

const gates = new WeakMap<Runtime, Map<string, Gate>>();

function gateOf(rt: Runtime, name: string, label: string, concurrency: number, rate: RateCap | undefined): Gate {
  let m = gates.get(rt);
  if (!m) gates.set(rt, (m = new Map()));
  let g = m.get(name);
  if (!g) m.set(name, (g = new Gate(label, concurrency, rate)));
  return g;
}

function rateSetting(v: string | undefined, fallback: RateCap | undefined): RateCap | undefined {
  if (v === "off") return undefined;
  const m = v ? /^(\d+)\/(\d+(?:\.\d+)?)$/.exec(v) : null;
  return m ? { count: Number(m[1]), perMs: Number(m[2]) * 1000 } : fallback;
}

async function fetchBytes(rt: Runtime, service: string, provider: string, path: string, opts: BytesOptions = {}): Promise<BytesAnswer> {
  const p = providerNamed(provider);
  const cfg = rt.config;
  const override = cfg[`${p.name}_URL`];
  const base = (override || p.url).replace(/\/+$/, "");
  const timeoutMs = Number(cfg[`${p.name}_TIMEOUT_MS`] || cfg.UPSTREAM_TIMEOUT_MS || p.timeoutMs || 30_000);
  const rate = rateSetting(cfg[`${p.name}_RATE`], override ? undefined : p.rate);
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) q.set(k, String(v));
  const qs = q.toString();
  const whole = base === "" && /^https?:\/\//.test(path);
  const url = (whole ? path : base + path) + (qs ? (path.includes("?") ? "&" : "?") + qs : "");
  // A provider with a base URL is reached on its host alone, as for ctx.http; one without (feeds an operator lists by whole URL) follows redirects where they lead.
  const dest = whole ? null : destination(rt, service, p, base, url.slice(base.length));
  const maxBytes = opts.maxBytes ?? p.maxBytes ?? 50_000_000;
  const contact = cfg.HEARTH_CONTACT;
  const headers: Record<string, string> = {
    "user-agent": `Hearth/${pkg.version} (+${cfg.HEARTH_PUBLIC_URL || `instance on ${hostname()}`}${contact ? `; ${contact}` : ""})`,
    ...(p.headers ?? {}),
    ...(opts.headers ?? {}),
  };
  const release = await gateOf(rt, p.name, p.label, p.concurrency ?? 4, rate).enter(timeoutMs);
  const abort = new AbortController();
  let late = false;
  const timer = setTimeout(() => {
    late = true;
    abort.abort();
  }, timeoutMs);
  const tooLate = () => upstream("upstream_timeout", `${p.label} did not answer within ${(timeoutMs / 1000).toFixed(1)} s`);
  try {
    let res: Response;
    let at = url;
    for (let hops = 0; ; hops++) {
      try {
        res = await fetch(at, { method: opts.method ?? "GET", headers, signal: abort.signal, redirect: dest ? "manual" : "follow" });
      } catch {
        throw late ? tooLate() : upstream("upstream_unavailable", `${p.label} could not be reached`);
      }
      const location = dest && res.status >= 300 && res.status < 400 && res.status !== 304 ? res.headers.get("location") : null;
      if (location === null) break;
      void res.body?.cancel().catch(() => {});
      const to = URL.canParse(location, at) ? new URL(location, at) : null;
      if (!to || hops >= 5) throw upstream("upstream_failed", `${p.label} answered HTTP ${res.status} with a redirect that was not followed`);
      dest!.redirect(to);
      at = to.href;
    }
    const ok = (res.status >= 200 && res.status < 300) || (opts.accept ?? []).includes(res.status);
    if (!ok) {
      void res.body?.cancel().catch(() => {});
      if (res.status === 429 || res.status === 503) {
        const after = res.headers.get("retry-after");
        throw new HearthError("upstream_unavailable", `${p.label} answered HTTP ${res.status}`, {
          retry: true,
          headers: after && /^\d+$/.test(after) ? { "Retry-After": after } : undefined,
        });
      }
      throw upstream("upstream_failed", `${p.label} answered HTTP ${res.status}`);
    }
    const declared = res.headers.get("content-length");
    const size = declared !== null && /^\d+$/.test(declared) ? Number(declared) : null;
    const tooBig = () => upstream("upstream_failed", `${p.label} sent more than ${Math.round(maxBytes / 1e6)} MB`);
    let bytes = new Uint8Array(0);
    if (opts.method !== "HEAD") {
      if (size !== null && size > maxBytes) {
        void res.body?.cancel().catch(() => {});
        throw tooBig();
      }
      const chunks: Uint8Array[] = [];
      let total = 0;
      try {
        if (res.body)
          for (const reader = res.body.getReader(); ; ) {
            const { done, value } = await reader.read();
            if (done) break;
            total += value.byteLength;
            if (total > maxBytes) {
              void reader.cancel().catch(() => {});
              throw tooBig();
            }
            chunks.push(value);
          }
      } catch (e) {
        if (e instanceof HearthError) throw e;
        throw late ? tooLate() : upstream("upstream_failed", `${p.label} broke off its answer`);
      }
      bytes = new Uint8Array(Buffer.concat(chunks));
    }
    return {
      status: res.status,
      bytes,
      url,
      contentType: res.headers.get("content-type"),
      etag: res.headers.get("etag"),
      lastModified: res.headers.get("last-modified"),
      size,
    };
  } finally {
    clearTimeout(timer);
    release();
  }
}

export const bytesModule = defineModule({
  name: "bytes",
  requires: ["upstream"],
  provides: {
    capabilities: {
      bytes: (s) => ({
        get: async (provider: string, path: string, opts?: BytesOptions) => (declaredProvider(s.rt, s.service, provider), fetchBytes(s.rt, s.service, provider, path, opts)),
      }),
    },
  },
});
