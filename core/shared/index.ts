// State that every instance of one deployment must agree on: rate-limit
// buckets, credits held for calls still running, claims on a payment
// between verify and settle, and messages one instance sends the others
// (a token revoked, a chat message posted). One instance keeps it in its own
// memory (local.ts); several behind a load balancer share a Redis server
// (redis.ts), chosen by HEARTH_REDIS_URL.
import type { Logger } from "../plugin.ts";
import { LocalShared } from "./local.ts";
import { PgShared } from "./pg.ts";
import { RedisShared } from "./redis.ts";

export interface Failures {
  count: number;
  last: number;
}

export interface Shared {
  /** One turn from key's bucket, which refills perMinute a minute up to perMinute: 0 when allowed, else the seconds until a turn is free. */
  take(key: string, perMinute: number, now: number): number | Promise<number>;
  /** What the account's other running calls hold; the hold of credits for this call (id) is made only if they fit in balance beside it. */
  hold(account: string, id: string, credits: number, balance: number): number | Promise<number>;
  /** Lets a hold go (the call was charged, or failed). */
  unhold(account: string, id: string, credits: number): void;
  /** Failures counted under key: how many, and when the latest was (perhaps longer ago than they are kept); null when none. */
  failures(key: string): Failures | null | Promise<Failures | null>;
  /** Counts one more failure under key at now; a count with none in forgetMs starts again. */
  fail(key: string, now: number, forgetMs: number): void | Promise<void>;
  /** Wipes key's count; awaited, so a failure counted after it is not wiped by it landing late. */
  forgive(key: string): void | Promise<void>;
  /** Claims key for ttlMs unless it is claimed already; false when it is. */
  claim(key: string, ttlMs: number): boolean | Promise<boolean>;
  unclaim(key: string): void;
  /**
   * Sends message to every instance's subscribers of channel, this instance's included. A message says that
   * something happened, not how often: one published again before the first has gone out may arrive once.
   */
  publish(channel: string, message: string): void;
  /** fn hears every message published on channel from now on; the returned function stops it. */
  subscribe(channel: string, fn: (message: string) => void): () => void;
  /** Whether messages from other instances reach this one now; false while the link to them is down (then some may be missed). */
  readonly heard: boolean;
  /** fn is told each time `heard` changes. */
  watch(fn: (heard: boolean) => void): void;
  close(): void | Promise<void>;
}

/**
 * The instance's shared state: in the Redis server HEARTH_REDIS_URL names;
 * else, on PostgreSQL, in its database, which other instances may share
 * (unless HEARTH_SHARED=memory says this one is alone); else in its memory.
 */
export function openShared(config: Readonly<Record<string, string>>, log: Pick<Logger, "warn" | "info">): Shared {
  if (config.HEARTH_REDIS_URL) return new RedisShared(config.HEARTH_REDIS_URL, log);
  const where = config.HEARTH_SHARED || "database";
  if (where !== "database" && where !== "memory") throw new Error(`HEARTH_SHARED is ${JSON.stringify(where)}: set it to database or memory`);
  if (config.HEARTH_DATABASE_URL && where === "database") return new PgShared(config.HEARTH_DATABASE_URL, log);
  return new LocalShared();
}
