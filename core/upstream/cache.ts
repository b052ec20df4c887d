// The response cache: rows in upstream_cache, fronted by a small in-memory
// map of recent entries. Reads come from memory or the read-only
// connection; writes go through the store's serialised writer and are not
// awaited by the answer, so a busy writer never holds a reader's reply.
// Recent writes stay in memory, so the next caller sees them at once.
import { and, eq, isNotNull, lt, sql } from "drizzle-orm";
import { AsyncLocalStorage } from "node:async_hooks";
import { mapAnswer } from "../answer.ts";
import { applyMigrations } from "../db/migrate.ts";
import { prepared } from "../db/prepared.ts";
import type { Db } from "../plugin.ts";
import type { Runtime } from "../runtime.ts";
import { upstreamMigrations } from "./migrations.ts";
import { upstreamCache } from "./schema.ts";

export interface Entry {
  key: string;
  provider: string;
  url: string;
  status: number;
  body: string;
  fetched: number;
  freshUntil: number | null;
  reviseUntil: number | null;
  keepUntil: number | null;
  /** fetched as RFC3339, made once. */
  asOf?: string;
  /** Parsed forms of the body by parser, so a hot entry is parsed once. */
  parsed?: Map<Function, { value: unknown } | { error: unknown }>;
}

/**
 * Runs work outside the caller's async context. A cache write started inside
 * a write call must not think it is inside that call's transaction once the
 * call has committed: from here it queues for the writer like anyone else.
 */
export const detached: <R>(fn: () => R) => R = AsyncLocalStorage.snapshot();

const MAX_ENTRIES = 512;
const MAX_CHARS = 32_000_000;
const PURGE_EVERY_MS = 3_600_000;

type Row = typeof upstreamCache.$inferSelect;

const byKey = (db: Db) => db.select().from(upstreamCache).where(eq(upstreamCache.key, sql.placeholder("key"))).prepare();

export class ResponseCache {
  private mem = new Map<string, Entry>();
  private chars = 0;
  private ready: Promise<void> | null = null;
  private lastPurge = 0;
  /** Writes and refreshes under way, awaited by settle(). */
  readonly pending = new Set<Promise<unknown>>();

  constructor(private rt: Runtime) {}

  /** Applies the cache table's migrations once; reads before then find nothing cached. */
  private ensure(): Promise<void> {
    this.ready ??= this.rt.store.exclusive(() => {
      applyMigrations(this.rt.store.writer, "upstream", upstreamMigrations);
    });
    return this.ready;
  }

  /**
   * Lookup: memory, then the database. An entry in memory, or one the store
   * answers at once (the embedded one does), is given without a promise.
   */
  get(key: string): Entry | undefined | Promise<Entry | undefined> {
    const hit = this.mem.get(key);
    if (hit) {
      this.mem.delete(key);
      this.mem.set(key, hit);
      return hit;
    }
    const found = (() => {
      try {
        return prepared(this.rt.store.rdb, byKey).get({ key });
      } catch (e) {
        return this.missing(e);
      }
    })();
    const read = (row: Row | undefined) => {
      if (!row) return undefined;
      const entry: Entry = { ...row };
      this.remember(entry);
      return entry;
    };
    return found instanceof Promise ? found.then(read, (e) => this.missing(e)) : read(found);
  }

  /** The table is made on first use; until then there is nothing cached. */
  private missing(e: unknown): undefined {
    if (/no such table|does not exist/.test(String(e))) {
      this.ready = null;
      return undefined;
    }
    throw e;
  }

  /** Remembers the entry now and stores it on the writer when its turn comes; alsoOnWriter runs in that same turn. */
  put(entry: Entry, alsoOnWriter?: () => void | Promise<void>) {
    this.remember(entry);
    const now = entry.fetched;
    const row: Row = {
      key: entry.key,
      provider: entry.provider,
      url: entry.url,
      status: entry.status,
      body: entry.body,
      fetched: entry.fetched,
      freshUntil: entry.freshUntil,
      reviseUntil: entry.reviseUntil,
      keepUntil: entry.keepUntil,
    };
    const { key, ...rest } = row;
    const job = detached(() =>
      this.ensure()
        .then(() =>
          // One write transaction: the copy and what was recorded with it land together, or neither does.
          this.rt.store.write(async () => {
            const db = this.rt.store.wdb;
            await db.insert(upstreamCache).values(row).onConflictDoUpdate({ target: upstreamCache.key, set: rest }).run();
            await alsoOnWriter?.();
            if (now - this.lastPurge > PURGE_EVERY_MS) {
              this.lastPurge = now;
              await db.delete(upstreamCache).where(and(isNotNull(upstreamCache.keepUntil), lt(upstreamCache.keepUntil, now))).run();
            }
          }),
        )
        .catch((e) => this.rt.log.warn("upstream cache write failed", { provider: entry.provider, error: String(e) })),
    );
    this.track(job);
  }

  track(p: Promise<unknown>) {
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p));
  }

  private remember(entry: Entry) {
    const old = this.mem.get(entry.key);
    if (old) {
      this.chars -= old.body.length;
      this.mem.delete(entry.key);
    }
    if (entry.body.length > MAX_CHARS / 8) return;
    this.mem.set(entry.key, entry);
    this.chars += entry.body.length;
    for (const [k, e] of this.mem) {
      if (this.mem.size <= MAX_ENTRIES && this.chars <= MAX_CHARS) break;
      this.mem.delete(k);
      this.chars -= e.body.length;
    }
  }
}

const caches = new WeakMap<Runtime, ResponseCache>();

export function cacheOf(rt: Runtime): ResponseCache {
  let c = caches.get(rt);
  if (!c) {
    c = new ResponseCache(rt);
    caches.set(rt, c);
  }
  return c;
}
