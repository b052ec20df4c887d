// Shared state in a Redis server, for several instances behind one load
// balancer. Counters and holds are Lua scripts, so each check-and-change is
// one atomic step however many instances race on it. Messages go over
// pub/sub on a connection of their own (a subscribed connection takes no
// other commands).
//
// Redis going away must not stop an instance: commands fail at once (no
// offline queue) and the instance falls back to its own memory: limits
// count per instance, holds and claims hold within it, and the database
// still refuses a charge the balance cannot pay. While the subscription is
// down `heard` is false, so caches that rely on hearing of changes stop
// trusting themselves. Both connections are retried until Redis is back.
import { RedisClient } from "bun";
import type { Logger } from "../plugin.ts";
import type { Failures, Shared } from "./index.ts";
import { LocalShared } from "./local.ts";
import { SLOW_PAUSE_MS, Subscribers, within } from "./subscribers.ts";

const PREFIX = "hearth:";
const RETRY_MS = 250;
/** How often the subscription is asked whether Redis still answers, and how long the answer may take. */
const PING_MS = 500;
const OPTIONS = { autoReconnect: false, enableOfflineQueue: false, connectionTimeout: 2000 };

// A token bucket per key: what the local Buckets do, in one atomic step.
const TAKE = `
local cap = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
local per_ms = cap / 60000
local b = redis.call('HMGET', KEYS[1], 't', 'a')
local tokens = tonumber(b[1])
local at = tonumber(b[2])
if not tokens then tokens = cap; at = now end
tokens = math.min(cap, tokens + math.max(0, now - at) * per_ms)
local wait = 0
if tokens >= 1 then tokens = tokens - 1 else wait = math.max(1, math.ceil((1 - tokens) / per_ms / 1000)) end
redis.call('HSET', KEYS[1], 't', string.format('%.17g', tokens), 'a', string.format('%.17g', math.max(now, at)))
redis.call('PEXPIRE', KEYS[1], 60000)
return wait
`;

// Holds of one account: members "<credits>:<id>" scored by when they lapse,
// so the holds of an instance that died without letting go run out.
const HOLD = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local held = 0
for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do held = held + tonumber(string.match(m, '^(%d+):')) end
if held + tonumber(ARGV[2]) > tonumber(ARGV[3]) then return held end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[4]), ARGV[2] .. ':' .. ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return held
`;

// A count of failures that starts again after a quiet spell, lapsing with it.
const FAIL = `
local b = redis.call('HMGET', KEYS[1], 'c', 'l')
local count = tonumber(b[1]) or 0
local last = tonumber(b[2]) or 0
local now = tonumber(ARGV[1])
if now - last > tonumber(ARGV[2]) then count = 0 end
redis.call('HSET', KEYS[1], 'c', count + 1, 'l', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return count + 1
`;

/** Longer than any call runs; only an instance that died leaves a hold to lapse. */
const HOLD_MS = 10 * 60_000;

export class RedisShared implements Shared {
  private cmd: RedisClient;
  private sub: RedisClient;
  private local = new LocalShared();
  /** Holds and claims made in memory while Redis was away, let go there too. */
  private heldHere = new Set<string>();
  private claimedHere = new Set<string>();
  /** A channel stays subscribed on Redis once made, so it is never subscribed twice. */
  private channels: Subscribers;
  private watchers: ((heard: boolean) => void)[] = [];
  private closed = false;
  private slowUntil = 0;
  private pinger: Timer;
  heard = false;

  constructor(
    private url: string,
    private log: Pick<Logger, "warn" | "info">,
  ) {
    this.channels = new Subscribers(log, true);
    this.cmd = new RedisClient(url, OPTIONS);
    this.cmd.onclose = () => this.retry(this.cmd);
    this.connect(this.cmd);
    this.sub = this.subscriber();
    this.pinger = setInterval(() => void this.ping(), PING_MS);
    this.pinger.unref();
  }

  /**
   * A Redis that stops answering leaves its connections open: only asking
   * shows it. A subscription that does not answer a ping in time is taken as
   * lost, so the caches that rely on it stop trusting themselves.
   */
  private async ping() {
    const sub = this.sub;
    if (!this.heard || !sub.connected) return;
    let timer: Timer | undefined;
    const answered = await Promise.race([
      sub.ping().then(
        () => true,
        () => false,
      ),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), PING_MS);
      }),
    ]);
    clearTimeout(timer);
    if (!answered && !this.closed) this.lost(sub);
  }

  /**
   * A fresh connection for the subscriptions each time: a client keeps its
   * listeners across a reconnect though Redis has forgotten them, so
   * subscribing again on it would hear each message twice.
   */
  private subscriber(): RedisClient {
    const sub = new RedisClient(this.url, OPTIONS);
    sub.onconnect = () => void this.resubscribe(sub);
    sub.onclose = () => this.lost(sub);
    sub.connect().catch(() => this.lost(sub));
    return sub;
  }

  /** The subscription went (or stopped answering): unheard until a new one is made. */
  private lost(sub: RedisClient) {
    if (sub !== this.sub || this.replacing) return;
    this.replacing = true;
    this.setHeard(false);
    sub.onclose = null;
    sub.close();
    setTimeout(() => {
      this.replacing = false;
      if (!this.closed) this.sub = this.subscriber();
    }, RETRY_MS).unref();
  }
  private replacing = false;

  private connect(c: RedisClient) {
    if (this.closed) return;
    c.connect().catch(() => this.retry(c));
  }

  private retrying = new WeakSet<RedisClient>();
  private retry(c: RedisClient) {
    if (this.closed || this.retrying.has(c)) return;
    this.retrying.add(c);
    setTimeout(() => {
      this.retrying.delete(c);
      if (!c.connected) this.connect(c);
    }, RETRY_MS).unref();
  }

  private async resubscribe(sub: RedisClient) {
    try {
      for (const channel of this.channels.names()) await sub.subscribe(PREFIX + channel, (m, ch) => this.deliver(ch.slice(PREFIX.length), m));
      if (sub === this.sub && sub.connected) this.setHeard(true);
    } catch {
      // The connection went again; its close retries.
    }
  }

  private setHeard(heard: boolean) {
    if (this.heard === heard || (heard && this.closed)) return;
    this.heard = heard;
    if (heard) this.log.info("shared state: hearing other instances", { redis: redact(this.url) });
    else if (!this.closed) this.log.warn("shared state: lost the link to other instances; serving from this instance's memory until it is back", { redis: redact(this.url) });
    for (const fn of this.watchers) fn(heard);
  }

  private deliver(channel: string, message: string) {
    this.channels.deliver(channel, message);
  }

  /** A command's answer (null being Redis's nil), or undefined when Redis is not there to give it in time. */
  private async run<T>(command: string, args: string[]): Promise<T | undefined> {
    // A Redis that stopped answering is left alone a while, so calls do not each wait for it.
    if (!this.cmd.connected || Date.now() < this.slowUntil) return undefined;
    return within(() => this.cmd.send(command, args) as Promise<T>, () => (this.slowUntil = Date.now() + SLOW_PAUSE_MS));
  }

  async take(key: string, perMinute: number, now: number): Promise<number> {
    const wait = await this.run<number>("EVAL", [TAKE, "1", `${PREFIX}rate:${key}`, String(perMinute), String(now)]);
    return wait === undefined ? this.local.take(key, perMinute, now) : wait;
  }

  async hold(account: string, id: string, credits: number, balance: number): Promise<number> {
    const others = await this.run<number>("EVAL", [HOLD, "1", `${PREFIX}holds:${account}`, id, String(credits), String(balance), String(HOLD_MS)]);
    if (others !== undefined) return others;
    this.heldHere.add(id);
    return this.local.hold(account, id, credits, balance);
  }

  unhold(account: string, id: string, credits: number) {
    if (this.heldHere.delete(id)) return this.local.unhold(account, id);
    void this.run("ZREM", [`${PREFIX}holds:${account}`, `${credits}:${id}`]);
  }

  async failures(key: string): Promise<Failures | null> {
    const got = await this.run<(string | null)[]>("HMGET", [`${PREFIX}fail:${key}`, "c", "l"]);
    if (got === undefined) return this.local.failures(key);
    return got[0] === null || got[1] === null ? null : { count: Number(got[0]), last: Number(got[1]) };
  }

  async fail(key: string, now: number, forgetMs: number) {
    if ((await this.run("EVAL", [FAIL, "1", `${PREFIX}fail:${key}`, String(now), String(forgetMs)])) === undefined) this.local.fail(key, now, forgetMs);
  }

  async forgive(key: string) {
    this.local.forgive(key);
    await this.run("DEL", [`${PREFIX}fail:${key}`]);
  }

  async claim(key: string, ttlMs: number): Promise<boolean> {
    const ok = await this.run<string | null>("SET", [`${PREFIX}claim:${key}`, "1", "PX", String(ttlMs), "NX"]);
    if (ok !== undefined) return ok === "OK";
    // Redis away: this instance's memory claims it.
    if (!this.local.claim(key, ttlMs)) return false;
    this.claimedHere.add(key);
    return true;
  }

  unclaim(key: string) {
    if (this.claimedHere.delete(key)) return this.local.unclaim(key);
    void this.run("DEL", [`${PREFIX}claim:${key}`]);
  }

  publish(channel: string, message: string) {
    // Unheard, this instance tells its own subscribers itself; the others hear it if Redis takes the message.
    if (!this.heard) this.deliver(channel, message);
    void this.run("PUBLISH", [PREFIX + channel, message]);
  }

  subscribe(channel: string, fn: (message: string) => void): () => void {
    const { first, stop } = this.channels.add(channel, fn);
    // Unheard, the subscriptions are being made again on connecting, this one's with them.
    if (first && this.heard) this.sub.subscribe(PREFIX + channel, (m, ch) => this.deliver(ch.slice(PREFIX.length), m)).catch(() => {});
    return stop;
  }

  watch(fn: (heard: boolean) => void) {
    this.watchers.push(fn);
  }

  close() {
    this.closed = true;
    clearInterval(this.pinger);
    this.heard = false;
    this.cmd.close();
    this.sub.close();
  }
}

/** The URL without its password, for the log. */
function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "(unreadable HEARTH_REDIS_URL)";
  }
}
