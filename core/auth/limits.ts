// Rate limits: a token bucket per account (or stranger's address) and class
// of call, kept in the instance's shared state: in memory for one instance,
// where each check is a map lookup and a little arithmetic, so it can sit on
// every call; in Redis or the PostgreSQL database when several instances
// share the limits.
import { changedCaller } from "../call.ts";
import { HearthError } from "../errors.ts";
import type { Caller } from "../plugin.ts";
import type { MethodEntry } from "../registry.ts";
import type { Runtime } from "../runtime.ts";
import type { Shared } from "../shared/index.ts";

export type LimitClass = "reads" | "writes" | "priced" | "signin" | "dav";

const SETTING: Record<LimitClass, string> = {
  reads: "HEARTH_RATE_READS",
  writes: "HEARTH_RATE_WRITES",
  priced: "HEARTH_RATE_PRICED",
  signin: "HEARTH_RATE_SIGNIN",
  dav: "HEARTH_RATE_DAV_WRITES",
};

interface Bucket {
  tokens: number;
  at: number;
}

const MAX_BUCKETS = 50_000;

/** Buckets that refill `perMinute` tokens a minute up to `perMinute`, so a burst of a minute's worth is allowed. */
export class Buckets {
  private map = new Map<string, Bucket>();
  constructor(readonly perMinute: number) {}

  /** Takes one token for key; returns 0 when allowed, else the seconds until one is free. */
  take(key: string, now: number): number {
    const cap = this.perMinute;
    const perMs = cap / 60_000;
    let b = this.map.get(key);
    if (!b) {
      if (this.map.size >= MAX_BUCKETS) this.prune(now);
      b = { tokens: cap, at: now };
      this.map.set(key, b);
    } else {
      b.tokens = Math.min(cap, b.tokens + Math.max(0, now - b.at) * perMs);
      b.at = now;
    }
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / perMs / 1000));
  }

  /**
   * Forgets buckets that have refilled (they hold nothing a fresh one would
   * not); if that frees too little, the oldest half goes. Runs only when the
   * map is full, so its cost spreads over the inserts that filled it.
   */
  private prune(now: number) {
    const perMs = this.perMinute / 60_000;
    for (const [k, b] of this.map) if (b.tokens + (now - b.at) * perMs >= this.perMinute) this.map.delete(k);
    if (this.map.size < MAX_BUCKETS / 2) return;
    let drop = this.map.size / 2;
    for (const k of this.map.keys()) {
      if (drop-- <= 0) break;
      this.map.delete(k);
    }
  }

  get size() {
    return this.map.size;
  }
}

export function rateLimited(message: string, retryAfter: number) {
  return new HearthError("rate_limited", message, { headers: { "Retry-After": String(retryAfter) }, extra: { retry_after: retryAfter } });
}

/** An instance's limits: a rate per class from its settings, the buckets in its shared state. */
export class Limiter {
  private rates = new Map<LimitClass, number>();
  constructor(
    private config: Record<string, string>,
    private shared: Shared,
  ) {}

  private rate(cls: LimitClass): number {
    let r = this.rates.get(cls);
    if (r === undefined) {
      const n = Number(this.config[SETTING[cls]] ?? "0");
      r = Number.isFinite(n) && n > 0 ? n : 0;
      this.rates.set(cls, r);
    }
    return r;
  }

  /** Whether calls of cls are limited at all (a rate of 0 turns a class off). */
  limits(cls: LimitClass): boolean {
    return this.rate(cls) > 0;
  }

  /** Throws (or rejects) 429 with Retry-After when key has used up its share of cls; synchronous when the buckets are in memory. */
  check(cls: LimitClass, key: string, now: number, what: string): void | Promise<void> {
    const perMinute = this.rate(cls);
    if (!perMinute) return;
    const refuse = (wait: number) => {
      if (wait > 0) throw rateLimited(`too many ${what}: at most ${perMinute} a minute; try again in ${wait} s`, wait);
    };
    const wait = this.shared.take(`${cls}:${key}`, perMinute, now);
    return typeof wait === "number" ? refuse(wait) : wait.then(refuse);
  }
}

const limiters = new WeakMap<Runtime, Limiter>();
export function limiterOf(rt: Runtime): Limiter {
  let l = limiters.get(rt);
  if (!l) limiters.set(rt, (l = new Limiter(rt.config, rt.shared)));
  return l;
}

/**
 * Who a limit counts against: the account, whichever of its tokens, app
 * passwords or sessions the call came through (so making more tokens buys
 * no more calls); else the client address.
 */
export function callerKey(caller: Caller): string | null {
  if (caller.via === "local") return null;
  if (caller.account) return `a:${caller.account.id}`;
  if (caller.tokenId) return `t:${caller.tokenId}`;
  return `ip:${caller.address ?? ""}`;
}

export function classOf(rt: Runtime, entry: MethodEntry): LimitClass {
  const p = entry.def.price;
  const priced = rt.config.HEARTH_METERING !== "off" && (typeof p === "function" || (typeof p === "number" && p > 0));
  if (priced) return "priced";
  return entry.def.kind === "write" ? "writes" : "reads";
}

/**
 * The check on the call path, made by dispatch for every call: HTTP, MCP,
 * pages and nested calls alike, so each takes one turn from one bucket per
 * caller and class. Nested calls pass the caller who started the chain.
 */
export function limitCall(rt: Runtime, entry: MethodEntry, caller: Caller): void | Promise<void> {
  const cls = classOf(rt, entry);
  // A calendar or contacts app's change took its turn from the DAV bucket, whatever writes it makes.
  if (cls === "writes" && davWriters.has(caller)) return;
  const limiter = limiterOf(rt);
  // A class with no limit costs no key and no clock reading.
  if (!limiter.limits(cls)) return;
  const key = callerKey(caller);
  if (key === null) return;
  return limiter.check(cls, key, rt.clock.now().getTime(), cls === "priced" ? "priced calls" : cls);
}

/** Callers of one calendar or contacts app's change, which took its turn from the DAV bucket. */
const davWriters = new WeakSet<Caller>();

/**
 * A calendar or contacts app's change (a DAV PUT or DELETE) takes one turn
 * from its own bucket, sized for a first sync of a whole calendar or address
 * book, rather than one from the writes bucket per call it makes. Returns the
 * caller to make its calls as.
 */
export async function limitDavWrite(rt: Runtime, caller: Caller): Promise<Caller> {
  const limiter = limiterOf(rt);
  const key = callerKey(caller);
  if (limiter.limits("dav") && key !== null) await limiter.check("dav", key, rt.clock.now().getTime(), "calendar and contacts changes");
  const own = changedCaller(caller, {});
  davWriters.add(own);
  return own;
}
