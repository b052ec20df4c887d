// Upstream: the one way a plugin reaches an outside provider (capability
// `http`, declared in a plugin's `needs`).
//
//   const f = await ctx.http.get("OPEN_METEO", "/v1/forecast", {
//     query: { latitude: 51.5, longitude: -0.12 },  // undefined values are left out; arrays join with commas and must not be mutated after use
//     ttl: 1800,            // seconds a copy is fresh: served without asking again
//     revalidate: 1800,     // seconds after that a copy is served at once while a refresh runs (default: ttl, at most a day)
//     keep: 7 * 86400,      // seconds after ttl a copy still answers when the provider fails (default: a week)
//     parse: (json) => ..., // validates and shapes the body; a throw that is not a HearthError => 502, and nothing is cached
//   });
//   f.data          // what parse returned (the JSON itself without parse)
//   f.cached        // true when no request went out for this answer
//   f.stale         // true when the copy is past its ttl (refreshing, or the provider failed)
//   f.about         // { source, attribution?, as_of, age_seconds, cached, stale? } to put in the answer
//
// Options also take `as: "text"` (XML, CSV: parse gets the string), `method:
// "POST"` with `body` and `contentType`, `headers`, `accept: [404]` (statuses
// that are answers, not failures), `onFresh(data)` (runs on the database
// writer when a fresh copy is stored: archive snapshots), and `ttl: Infinity`
// for data that never changes (a past day's weather).
//
// An accepted status outside 2xx is cached an hour at most. parse may throw a
// HearthError: invalid/not_found are answers and are cached; upstream_* ones
// are failures (nothing cached; a stale copy answers if there is one).
//
// `ctx.http.peek(provider, path, opts)` says whether get() would answer from
// cache (at once when the copy is in memory or the store answers at once; as
// a promise when the store is asked over the network); a method's price
// function uses it, through freeWhenHeld, so a cached answer costs nothing. `servedFromCache(call)` tells metering the same after
// the call: true when that call itself used cached copies and sent nothing.
//
// Providers are named in UPPER_SNAKE (providers.ts lists the known ones;
// defineProvider adds more). `<NAME>_URL` replaces the base URL,
// `<NAME>_TIMEOUT_MS` the timeout (UPSTREAM_TIMEOUT_MS for all), `<NAME>_RATE`
// the rate cap as "count/seconds" ("off" for none). A provider whose URL is
// replaced keeps its concurrency cap but not the public service's rate cap,
// unless `<NAME>_RATE` says otherwise. Requests carry a User-Agent naming
// this instance and HEARTH_CONTACT, as the OpenStreetMap services ask.
//
// Failures: unreachable, 503 or 429 => 503 upstream_unavailable; no answer
// in time => 504 upstream_timeout; any other status, a body that is not
// JSON, or one parse refuses => 502 upstream_failed. All say retry: true.
// A connection failure or a 502/503/504 is retried once first. After a
// failure, a held copy answers that request for 30 s without asking again.
// `settle(rt)` waits for background refreshes and cache writes (tests, shutdown).
// Other outbound paths (binary downloads) reuse settingsFor, gateFor and
// userAgent so one provider's caps hold across all of them.
import { hostname } from "node:os";
import type { Call } from "../call.ts";
import { HearthError, notConfigured, upstream } from "../errors.ts";
import { defineModule } from "../module.ts";
import type { Runtime } from "../runtime.ts";
import { cacheOf, detached, type Entry } from "./cache.ts";
import { Gate } from "./limiter.ts";
import { upstreamMigrations } from "./migrations.ts";
import { providerNamed, type ProviderDef, type RateCap } from "./providers.ts";
import { redactUrl, scrub } from "./redact.ts";
import { send } from "./wire.ts";
import pkg from "../../package.json";

export { defineProvider, providerNamed, type ProviderDef } from "./providers.ts";

export interface GetOptions<T> {
  query?: Record<string, string | number | boolean | undefined | null | (string | number)[]>;
  ttl: number;
  revalidate?: number;
  keep?: number;
  as?: "json" | "text";
  parse?: (body: any, status: number) => T;
  method?: "GET" | "POST";
  body?: string;
  contentType?: string;
  headers?: Record<string, string>;
  accept?: number[];
  onFresh?: (data: T) => void | Promise<void>;
}

export interface About {
  source: string;
  attribution?: string;
  /** When the provider gave this copy (RFC3339). */
  as_of: string;
  age_seconds: number;
  cached: boolean;
  stale?: true;
}

export interface Fetched<T> {
  data: T;
  status: number;
  provider: string;
  url: string;
  fetchedAt: Date;
  ageSeconds: number;
  cached: boolean;
  stale: boolean;
  about: About;
}

export interface Upstream {
  get<T = any>(provider: string, path: string, opts: GetOptions<T>): Promise<Fetched<T>>;
  peek(provider: string, path: string, opts: Pick<GetOptions<unknown>, "query" | "method" | "body">): boolean | Promise<boolean>;
}

/** A price that is nothing when peek says the answer is held: at once when it knew at once. */
export function freeWhenHeld(held: boolean | Promise<boolean>, price: number): number | Promise<number> {
  return typeof held === "boolean" ? (held ? 0 : price) : held.then((h) => (h ? 0 : price));
}

declare module "../plugin.ts" {
  interface CapabilityTypes {
    http: Upstream;
  }
}

const DAY = 86_400;

/** True when the call was answered from cached copies only, so it should not be charged. */
export function servedFromCache(call: Call): boolean {
  return call.upstream.cached > 0 && call.upstream.network === 0;
}

/** Waits for background refreshes and cache writes under way (tests; shutdown). */
export async function settle(rt: Runtime): Promise<void> {
  const c = cacheOf(rt);
  while (c.pending.size) await Promise.allSettled([...c.pending]);
}

const gates = new WeakMap<Runtime, Map<string, Gate>>();

// When a request last failed, by cache key: a held copy answers without retrying for a while.
const REST_MS = 30_000;
const failures = new WeakMap<Runtime, Map<string, number>>();
function failedRecently(rt: Runtime, key: string, now: number): boolean {
  const at = failures.get(rt)?.get(key);
  return at !== undefined && now - at < REST_MS;
}
function noteFailure(rt: Runtime, key: string, at: number | null) {
  let m = failures.get(rt);
  if (!m) failures.set(rt, (m = new Map()));
  if (at === null) m.delete(key);
  else m.set(key, at);
}
const inflight = new WeakMap<Runtime, Map<string, Promise<Entry>>>();

/** A provider's effective base URL, timeout and rate cap on this instance. */
export function settingsFor(rt: Runtime, p: ProviderDef) {
  const cfg = rt.config;
  const override = cfg[`${p.name}_URL`];
  const base = (override || p.url).replace(/\/+$/, "");
  const timeoutMs = Number(cfg[`${p.name}_TIMEOUT_MS`] || cfg.UPSTREAM_TIMEOUT_MS || p.timeoutMs || 10_000);
  let rate: RateCap | undefined = override ? undefined : p.rate;
  const rateSetting = cfg[`${p.name}_RATE`];
  if (rateSetting === "off") rate = undefined;
  else if (rateSetting) {
    const m = /^(\d+)\/(\d+(?:\.\d+)?)$/.exec(rateSetting);
    if (m) rate = { count: Number(m[1]), perMs: Number(m[2]) * 1000 };
  }
  return { base, timeoutMs, rate, overridden: !!override };
}

/** The gates a request to this provider and path must pass, shared by every caller on the instance. */
export function gateFor(rt: Runtime, p: ProviderDef, path: string): Gate[] {
  let m = gates.get(rt);
  if (!m) gates.set(rt, (m = new Map()));
  const s = settingsFor(rt, p);
  const out: Gate[] = [];
  let g = m.get(p.name);
  if (!g) m.set(p.name, (g = new Gate(p.label, p.concurrency ?? 4, s.rate)));
  out.push(g);
  if (!s.overridden || cfgHasRate(rt, p))
    for (const [prefix, cap] of Object.entries(p.lanes ?? {})) {
      if (!path.startsWith(prefix)) continue;
      const k = `${p.name} ${prefix}`;
      let lane = m.get(k);
      if (!lane) m.set(k, (lane = new Gate(p.label, Number.MAX_SAFE_INTEGER, cap)));
      out.push(lane);
    }
  return out;
}

const cfgHasRate = (rt: Runtime, p: ProviderDef) => !!rt.config[`${p.name}_RATE`] && rt.config[`${p.name}_RATE`] !== "off";

export function userAgent(rt: Runtime): string {
  const instance = rt.config.HEARTH_PUBLIC_URL || `instance on ${hostname()}`;
  const contact = rt.config.HEARTH_CONTACT;
  return `Hearth/${pkg.version} (+${instance}${contact ? `; ${contact}` : ""})`;
}

// Plain words, numbers and lists need no escaping (commas and colons are
// allowed in a query); encodeURIComponent is the costliest step of a cached hit.
const plain = /^[\w.\-~,:]*$/;
const enc = (s: string) => (plain.test(s) ? s : encodeURIComponent(s));

// Lists of variables are usually module constants: joined and escaped once.
const joined = new WeakMap<readonly unknown[], string>();
function list(v: readonly (string | number)[]): string {
  let s = joined.get(v);
  if (s === undefined) joined.set(v, (s = enc(v.join(","))));
  return s;
}

// Hand-built rather than URLSearchParams: this runs on every cached answer.
const keyNames = new Map<string, string>();
function queryString(q: GetOptions<unknown>["query"]): string {
  if (!q) return "";
  let out = "";
  const keys = Object.keys(q);
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    const v = q[k];
    if (v === undefined || v === null) continue;
    let name = keyNames.get(k);
    if (name === undefined) keyNames.set(k, (name = encodeURIComponent(k)));
    out += (out ? "&" : "?") + name + "=" + (typeof v === "number" ? String(v) : Array.isArray(v) ? list(v) : enc(String(v)));
  }
  return out;
}

// Keys by request, remembered so a hot entry is not re-hashed on each hit.
const keyMemo = new Map<string, string>();

function cacheKey(provider: string, path: string, opts: Pick<GetOptions<unknown>, "query" | "method" | "body">): { key: string; target: string } {
  const target = path + queryString(opts.query);
  const id = `${provider}\n${opts.method ?? "GET"}\n${target}\n${opts.body ?? ""}`;
  let key = keyMemo.get(id);
  if (key === undefined) {
    key = new Bun.CryptoHasher("sha256").update(id).digest("hex");
    if (keyMemo.size >= 2048) keyMemo.delete(keyMemo.keys().next().value!);
    keyMemo.set(id, key);
  }
  return { key, target };
}

function parsedOf<T>(e: Entry, opts: GetOptions<T>): T {
  const fn = opts.parse ?? identity;
  e.parsed ??= new Map();
  let memo = e.parsed.get(fn);
  if (!memo) {
    try {
      const raw = opts.as === "text" ? e.body : JSON.parse(e.body);
      memo = { value: fn(raw, e.status) };
    } catch (err) {
      memo = { error: err };
    }
    e.parsed.set(fn, memo);
  }
  if ("error" in memo) throw memo.error;
  return memo.value as T;
}
const identity = (x: unknown) => x;

function shape<T>(rt: Runtime, p: ProviderDef, e: Entry, data: T, cached: boolean, stale: boolean): Fetched<T> {
  const now = rt.clock.now().getTime();
  const ageSeconds = Math.max(0, Math.round((now - e.fetched) / 1000));
  e.asOf ??= new Date(e.fetched).toISOString();
  const about: About = { source: p.label, as_of: e.asOf, age_seconds: ageSeconds, cached };
  if (p.attribution) about.attribution = p.attribution;
  if (stale) about.stale = true;
  return { data, status: e.status, provider: p.name, url: e.url, fetchedAt: new Date(e.fetched), ageSeconds, cached, stale, about };
}

const finite = (n: number) => Number.isFinite(n);

/**
 * Whether a URL stays on the provider's host, the only one `hearth help`
 * says the plugin reaches: the same host, or the same name over https.
 */
function onHost(base: URL, to: URL): boolean {
  return to.host === base.host || (to.hostname === base.hostname && to.protocol === "https:");
}

/**
 * The URL a request for `target` goes to, refused (and logged) when the path
 * would take it off the provider's host (`@elsewhere.example/…`,
 * `.elsewhere.example`), and a check for each redirect it meets.
 */
export function destination(rt: Runtime, service: string, p: ProviderDef, base: string, target: string): { url: string; redirect: (to: URL) => void } {
  const url = base + target;
  // A provider with no URL set (SEARXNG_URL empty) fails as unreachable, as it always has.
  const from = URL.canParse(base) ? new URL(base) : null;
  const to = from && URL.canParse(url) ? new URL(url) : null;
  if (from && (!to || !onHost(from, to))) {
    const host = to?.host ?? "";
    rt.log.error("plugin asked a provider for a path that leaves its host", { plugin: service, provider: p.name, host, path: target.split("?")[0] });
    throw notConfigured(`plugin "${service}" asked ${p.name} (${from.host}) for a path that leads ${host ? `to another host (${host})` : "nowhere"}: a path starts with "/"`);
  }
  return {
    url,
    redirect: (next) => {
      if (from && onHost(from, next)) return;
      rt.log.error("provider redirected to an undeclared host; not followed", { plugin: service, provider: p.name, host: next.host });
      throw upstream("upstream_failed", `${p.label} redirected to ${next.host}, which plugin "${service}" does not declare: the redirect was not followed`);
    },
  };
}

/** Fetches, checks and stores a fresh copy; concurrent misses for one key share a request. */
function refresh<T>(rt: Runtime, service: string, p: ProviderDef, key: string, target: string, opts: GetOptions<T>): Promise<Entry> {
  let m = inflight.get(rt);
  if (!m) inflight.set(rt, (m = new Map()));
  const running = m.get(key);
  if (running) return running;
  const job = (async () => {
    const s = settingsFor(rt, p);
    const dest = destination(rt, service, p, s.base, target);
    const gatesHere = gateFor(rt, p, target);
    const releases: (() => void)[] = [];
    let answer;
    try {
      for (const g of gatesHere) releases.push(await g.enter(s.timeoutMs));
      const headers: Record<string, string> = {
        "user-agent": userAgent(rt),
        accept: opts.as === "text" ? "*/*" : "application/json",
        ...(p.headers ?? {}),
        ...(opts.headers ?? {}),
      };
      if (opts.contentType) headers["content-type"] = opts.contentType;
      answer = await send({
        label: p.label,
        url: dest.url,
        redirect: dest.redirect,
        method: opts.method ?? "GET",
        headers,
        body: opts.body,
        timeoutMs: s.timeoutMs,
        maxBytes: p.maxBytes ?? 20_000_000,
        accept: opts.accept ?? [],
        retryDelayMs: Number(rt.config.UPSTREAM_RETRY_MS || 250),
      });
    } finally {
      for (const r of releases) r();
    }
    const now = rt.clock.now().getTime();
    const ttl = opts.ttl;
    const revalidate = opts.revalidate ?? Math.min(ttl, DAY);
    const keep = opts.keep ?? 7 * DAY;
    const entry: Entry = {
      key,
      provider: p.name,
      url: redactUrl(s.base + target),
      status: answer.status,
      body: answer.body,
      fetched: now,
      freshUntil: finite(ttl) ? now + ttl * 1000 : null,
      reviseUntil: finite(ttl) && finite(revalidate) ? now + (ttl + revalidate) * 1000 : null,
      keepUntil: finite(ttl) && finite(keep) ? now + (ttl + Math.max(keep, revalidate)) * 1000 : null,
    };
    // An accepted error status (404: no such product) is an answer, but one
    // that may change soon: it is kept an hour at most.
    if (answer.status >= 300 && (entry.freshUntil === null || entry.freshUntil > now + 3_600_000)) {
      entry.freshUntil = now + 3_600_000;
      entry.reviseUntil = entry.freshUntil;
      entry.keepUntil = entry.freshUntil;
    }
    // Parse before storing: garbage is refused and never cached. A HearthError
    // from parse is an answer about the request (no such product) and is kept,
    // unless it says the provider failed.
    let data: T;
    try {
      data = parsedOf(entry, opts);
    } catch (err) {
      if (err instanceof HearthError && err.kind.startsWith("upstream_")) throw err;
      if (!(err instanceof HearthError)) {
        rt.log.warn("upstream answer refused", { provider: p.name, url: scrub(entry.url, [s.overridden ? s.base : null]), error: String(err) });
        throw upstream(
          "upstream_failed",
          opts.as !== "text" && err instanceof SyntaxError
            ? `${p.label} sent an answer that is not JSON`
            : `${p.label} sent an answer in a form this instance does not understand`,
        );
      }
      cacheOf(rt).put(entry);
      return entry;
    }
    cacheOf(rt).put(entry, opts.onFresh ? () => opts.onFresh!(data) : undefined);
    return entry;
  })();
  m.set(key, job);
  job.then(
    () => {
      m.delete(key);
      noteFailure(rt, key, null);
    },
    (e) => {
      m.delete(key);
      if (e instanceof HearthError && e.kind.startsWith("upstream_")) noteFailure(rt, key, rt.clock.now().getTime());
    },
  );
  return job;
}

/**
 * The provider a plugin asks for, when its manifest declares it: a plugin
 * reaches only the hosts it said it would, so a drop-in cannot send what it
 * holds anywhere else through the instance's outbound path.
 */
export function declaredProvider(rt: Runtime, service: string, provider: string): ProviderDef {
  if (rt.registry.plugins.get(service)?.providers.has(provider)) return providerNamed(provider);
  let host = "";
  try {
    host = new URL(settingsFor(rt, providerNamed(provider)).base).host;
  } catch {}
  rt.log.error("plugin reached an undeclared provider", { plugin: service, provider, host });
  throw notConfigured(`plugin "${service}" reaches ${provider}${host ? ` (${host})` : ""}, which its manifest does not declare: add it to the plugin's providers`);
}

function makeUpstream(rt: Runtime, call: Call, service: string): Upstream {
  const note = (kind: keyof Call["upstream"]) => void call.upstream[kind]++;
  return {
    async get<T>(provider: string, path: string, opts: GetOptions<T>): Promise<Fetched<T>> {
      const p = declaredProvider(rt, service, provider);
      const { key, target } = cacheKey(p.name, path, opts);
      const cache = cacheOf(rt);
      const now = rt.clock.now().getTime();
      const found = cache.get(key);
      const held = found instanceof Promise ? await found : found;
      if (held && (held.freshUntil === null || now < held.freshUntil)) {
        note("cached");
        return shape(rt, p, held, parsedOf(held, opts), true, false);
      }
      const resting = held !== undefined && failedRecently(rt, key, now);
      if (held && held.reviseUntil !== null && now < held.reviseUntil) {
        if (resting) {
          note("cached");
          return shape(rt, p, held, parsedOf(held, opts), true, true);
        }
        const bg = detached(() =>
          refresh(rt, service, p, key, target, opts).catch((e) => rt.log.warn("upstream refresh failed", { provider: p.name, error: String(e) })),
        );
        cache.track(bg);
        note("cached");
        return shape(rt, p, held, parsedOf(held, opts), true, true);
      }
      // The provider failed this request moments ago: answer with the last copy
      // at once rather than make every caller wait out another failure.
      if (resting && (held.keepUntil === null || now < held.keepUntil)) {
        note("cached");
        return shape(rt, p, held, parsedOf(held, opts), true, true);
      }
      try {
        const fresh = await refresh(rt, service, p, key, target, opts);
        note("network");
        return shape(rt, p, fresh, parsedOf(fresh, opts), false, false);
      } catch (err) {
        const e = err instanceof HearthError ? err : null;
        const failed = e && e.kind.startsWith("upstream_");
        if (failed && held && (held.keepUntil === null || now < held.keepUntil)) {
          rt.log.warn("upstream failed; serving the last copy", { provider: p.name, error: e.message });
          note("cached");
          return shape(rt, p, held, parsedOf(held, opts), true, true);
        }
        throw err;
      }
    },
    peek(provider, path, opts) {
      const p = declaredProvider(rt, service, provider);
      const { key } = cacheKey(p.name, path, opts);
      const found = cacheOf(rt).get(key);
      const usable = (held: Entry | undefined) => {
        if (!held) return false;
        const now = rt.clock.now().getTime();
        return held.freshUntil === null || now < held.freshUntil || (held.reviseUntil !== null && now < held.reviseUntil);
      };
      // A copy in memory (or in a store that answers at once) is known at once; one the store is asked for over the network, when it answers.
      return found instanceof Promise ? found.then(usable, () => false) : usable(found);
    },
  };
}

export const upstreamModule = defineModule({
  name: "upstream",
  provides: {
    capabilities: { http: (s) => makeUpstream(s.rt, s.call, s.service) },
    migrations: { upstream: upstreamMigrations },
  },
});

export { redactUrl };
