// The response cache: rows in upstream_cache, fronted by a small in-memory
// map of recent entries. Reads come from memory or the read-only
// connection; writes go through the store's serialised writer and are not
// awaited by the answer, so a busy writer never holds a reader's reply.
// Recent writes stay in memory, so the next caller sees them at once.
import type { Statement } from "bun:sqlite";
import { AsyncLocalStorage } from "node:async_hooks";
import { applyMigrations } from "../db/migrate.ts";
import type { Runtime } from "../runtime.ts";
import { upstreamMigrations } from "./migrations.ts";

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

type Row = {
  key: string;
  provider: string;
  url: string;
  status: number;
  body: string;
  fetched: number;
  fresh_until: number | null;
  revise_until: number | null;
  keep_until: number | null;
};

export class ResponseCache {
  private mem = new Map<string, Entry>();
  private chars = 0;
  private ready: Promise<void> | null = null;
  private select: Statement<Row, [string]> | null = null;
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

  /** Synchronous lookup: memory, then the database. */
  get(key: string): Entry | undefined {
    const hit = this.mem.get(key);
    if (hit) {
      this.mem.delete(key);
      this.mem.set(key, hit);
      return hit;
    }
    let row: Row | null;
    try {
      this.select ??= this.rt.store.reader.query<Row, [string]>(
        "SELECT key, provider, url, status, body, fetched, fresh_until, revise_until, keep_until FROM upstream_cache WHERE key = ?",
      );
      row = this.select.get(key);
    } catch (e) {
      // The table is made on first use; until then there is nothing cached.
      if (/no such table/.test(String(e))) {
        this.ready = null;
        this.select = null;
        return undefined;
      }
      throw e;
    }
    if (!row) return undefined;
    const entry: Entry = {
      key: row.key,
      provider: row.provider,
      url: row.url,
      status: row.status,
      body: row.body,
      fetched: row.fetched,
      freshUntil: row.fresh_until,
      reviseUntil: row.revise_until,
      keepUntil: row.keep_until,
    };
    this.remember(entry);
    return entry;
  }

  /** Remembers the entry now and stores it on the writer when its turn comes; alsoOnWriter runs in that same turn. */
  put(entry: Entry, alsoOnWriter?: () => void) {
    this.remember(entry);
    const now = entry.fetched;
    const job = detached(() =>
      this.ensure()
        .then(() =>
          this.rt.store.exclusive(() => {
            const w = this.rt.store.writer;
            // One transaction: the copy and what was recorded with it land together.
            w.transaction(() => {
              w.run(
                "INSERT OR REPLACE INTO upstream_cache (key, provider, url, status, body, fetched, fresh_until, revise_until, keep_until) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [entry.key, entry.provider, entry.url, entry.status, entry.body, entry.fetched, entry.freshUntil, entry.reviseUntil, entry.keepUntil],
              );
              alsoOnWriter?.();
              if (now - this.lastPurge > PURGE_EVERY_MS) {
                this.lastPurge = now;
                w.run("DELETE FROM upstream_cache WHERE keep_until IS NOT NULL AND keep_until < ?", [now]);
              }
            })();
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
