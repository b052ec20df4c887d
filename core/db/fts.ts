// ctx.index: one FTS5 table shared by every plugin, partitioned by service and
// kind. search_refs maps (service, kind, ref) to the FTS rowid, so replacing
// or removing an entry is a keyed lookup rather than a scan of the index.
import type { Database } from "bun:sqlite";
import { sql } from "drizzle-orm";
import type { Db, FullTextIndex, IndexEntry, IndexHit, Logger } from "../plugin.ts";
import { isPg, type Store } from "./store.ts";

/** Turns free text into a safe FTS5 query: every word must match, as a prefix. */
export function ftsQuery(text: string): string | null {
  const words = text.toLowerCase().match(/[\p{L}\p{N}_]+/gu);
  if (!words || words.length === 0) return null;
  return words.slice(0, 32).map((w) => `"${w}"*`).join(" ");
}

function put(db: Database, service: string, e: IndexEntry) {
  const old = db.query<{ id: number }, [string, string, string]>("SELECT id FROM search_refs WHERE service = ? AND kind = ? AND ref = ?").get(service, e.kind, e.ref);
  if (old) db.query("DELETE FROM search_index WHERE rowid = ?").run(old.id);
  const { lastInsertRowid } = db
    .query("INSERT INTO search_index (service, kind, ref, owner, title, body) VALUES (?, ?, ?, ?, ?, ?)")
    .run(service, e.kind, e.ref, e.owner, e.title, e.body);
  db.query("INSERT OR REPLACE INTO search_refs (service, kind, ref, id) VALUES (?, ?, ?, ?)").run(service, e.kind, e.ref, Number(lastInsertRowid));
}

/**
 * `via` decides when a change runs: at once inside a write transaction, or
 * queued behind the store's write lock when called from a read, so it never
 * lands inside another caller's open transaction.
 */
function remove(db: Database, service: string, kind: string, ref: string) {
  const old = db.query<{ id: number }, [string, string, string]>("SELECT id FROM search_refs WHERE service = ? AND kind = ? AND ref = ?").get(service, kind, ref);
  if (!old) return;
  db.query("DELETE FROM search_index WHERE rowid = ?").run(old.id);
  db.query("DELETE FROM search_refs WHERE service = ? AND kind = ? AND ref = ?").run(service, kind, ref);
}

const PREVIEW = 600;

// Counting by owner scans the whole index (90 ms at 100,000 entries), so the
// counts are kept until the index changes: a new entry raises the largest
// rowid, a removal lowers the number of refs, and both are cheap to read.
const heldCounts = new WeakMap<Database, { stamp: string; rows: { service: string; kind: string; n: number }[] }>();

export function makeIndex(service: string, write: () => Database, read: () => Database, via: (change: () => void) => Promise<void> = async (c) => c()): FullTextIndex {
  return {
    put: (e) => via(() => put(write(), service, e)),
    putMany: (entries) =>
      via(() => {
        const db = write();
        const run = () => {
          for (const e of entries) put(db, service, e);
        };
        // Inside a call's transaction already, or make one so a batch lands whole.
        if (db.inTransaction) run();
        else db.transaction(run)();
      }),
    remove: (kind, ref) => via(() => remove(write(), service, kind, ref)),
    async search(q) {
      const match = ftsQuery(q.query);
      if (!match) return [];
      const where = ["search_index MATCH ?"];
      const params: (string | number | null)[] = [match];
      const services = q.services === "*" ? null : (q.services ?? [service]);
      if (services) {
        where.push(`service IN (${services.map(() => "?").join(",")})`);
        params.push(...services);
      }
      if (q.kind !== undefined) {
        const kinds = Array.isArray(q.kind) ? q.kind : [q.kind];
        where.push(`kind IN (${kinds.map(() => "?").join(",")})`);
        params.push(...kinds);
      }
      if (q.owner === "public") where.push("owner IS NULL");
      else if (typeof q.owner === "string") {
        where.push("owner = ?");
        params.push(q.owner);
      } else if (q.owner && "any" in q.owner) {
        const named = q.owner.any.filter((o): o is string => o !== null);
        const parts = named.map(() => "owner = ?");
        if (q.owner.any.includes(null)) parts.push("owner IS NULL");
        where.push(`(${parts.join(" OR ") || "0"})`);
        params.push(...named);
      }
      params.push(Math.max(1, Math.min(q.limit ?? 20, 1000)));
      return read()
        .query<IndexHit, typeof params>(
          `SELECT service, kind, ref, owner, title, snippet(search_index, 5, '', '', '…', 24) AS snippet, bm25(search_index, 0, 0, 0, 0, 4.0, 1.0) AS rank
           FROM search_index WHERE ${where.join(" AND ")} ORDER BY ${q.order === "recent" ? "search_index.rowid DESC" : "rank"} LIMIT ?`,
        )
        .all(...params);
    },
    async recent(q) {
      // The index's rowids grow with each entry put.
      return read()
        .query<IndexEntry, [number, string, string, number]>(
          "SELECT kind, ref, owner, title, substr(body, 1, ?) AS body FROM search_index WHERE service = ? AND kind = ? AND owner IS NULL ORDER BY rowid DESC LIMIT ?",
        )
        .all(PREVIEW, q.service ?? service, q.kind, Math.max(1, Math.min(q.limit, 1000)));
    },
    async counts() {
      const db = read();
      const s = db.query<{ top: number | null; refs: number }, []>("SELECT (SELECT max(rowid) FROM search_index) AS top, (SELECT count(*) FROM search_refs) AS refs").get()!;
      const stamp = `${s.top}:${s.refs}`;
      const memo = heldCounts.get(db);
      if (memo?.stamp === stamp) return memo.rows.map((r) => ({ ...r }));
      const rows = db.query<{ service: string; kind: string; n: number }, []>("SELECT service, kind, count(*) AS n FROM search_index WHERE owner IS NULL GROUP BY service, kind").all();
      heldCounts.set(db, { stamp, rows });
      return rows.map((r) => ({ ...r }));
    },
    async indexed(kind) {
      return new Set(read().query<{ ref: string }, [string, string]>("SELECT ref FROM search_refs WHERE service = ? AND kind = ?").all(service, kind).map((r) => r.ref));
    },
  };
}

/**
 * ctx.index for one service over the store the instance runs on. A change
 * made inside a write lands in its transaction; one made outside a write
 * (a read call, a start hook) queues behind the write lock, and a failure
 * there is logged rather than thrown, as the read it came from stands.
 */
export function indexFor(store: Store, service: string, reading: boolean, log?: Logger): FullTextIndex {
  const failed = (e: unknown) => log?.error("index write failed", { service, error: String(e) });
  if (isPg(store))
    return makePgIndex(
      service,
      () => store.wdb,
      () => (reading ? store.rdb : store.wdb),
      (change) => (store.inWrite() ? change() : store.write(change).catch(failed)),
    );
  return makeIndex(
    service,
    () => store.writer,
    () => (reading ? store.reader : store.writer),
    async (change) => (store.inWrite() ? change() : store.write(change).catch(failed)),
  );
}

/** A prefix query in PostgreSQL's tsquery syntax: every word must match, as a prefix (ftsQuery's words). */
export function tsQuery(text: string): string | null {
  const words = text.toLowerCase().match(/[\p{L}\p{N}_]+/gu);
  if (!words || words.length === 0) return null;
  return words
    .slice(0, 32)
    .map((w) => `'${w}':*`)
    .join(" & ");
}

/**
 * ctx.index on PostgreSQL: search_index holds a tsvector of title and body
 * (core/db/pg/core/0001_search_index.sql; 0002 splits URLs and paths into
 * their words, as FTS5 does) under a GIN index. Ranking is
 * ts_rank with the title weighing four times the body, as bm25's weights do
 * on SQLite, normalised by the entry's length; rank is negated so that, as
 * with bm25, lower is better.
 */
export function makePgIndex(service: string, write: () => Db, read: () => Db, via: (change: () => Promise<void>) => Promise<void> = (c) => c()): FullTextIndex {
  // One statement: writes indexing one record at once (side by side on PostgreSQL) each replace it,
  // where a delete then an insert had the later insert refused by the entry's unique key. The entry
  // takes a new id, as a delete and insert gave it, so "recent" order stays that of the last change.
  const put = async (db: Db, e: IndexEntry) => {
    await db.run(
      sql`INSERT INTO search_index (service, kind, ref, owner, title, body) VALUES (${service}, ${e.kind}, ${e.ref}, ${e.owner}, ${e.title}, ${e.body})
          ON CONFLICT (service, kind, ref) DO UPDATE SET id = DEFAULT, owner = excluded.owner, title = excluded.title, body = excluded.body`,
    );
  };
  return {
    put: (e) => via(() => put(write(), e)),
    putMany: (entries) =>
      via(async () => {
        for (const e of entries) await put(write(), e);
      }),
    remove: (kind, ref) =>
      via(async () => {
        await write().run(sql`DELETE FROM search_index WHERE service = ${service} AND kind = ${kind} AND ref = ${ref}`);
      }),
    async search(q) {
      const match = tsQuery(q.query);
      if (!match) return [];
      const where = [sql`doc @@ to_tsquery('hearth', ${match})`];
      const services = q.services === "*" ? null : (q.services ?? [service]);
      if (services) where.push(sql`service IN (${sql.join(services.map((s) => sql`${s}`), sql`, `)})`);
      if (q.kind !== undefined) {
        const kinds = Array.isArray(q.kind) ? q.kind : [q.kind];
        where.push(sql`kind IN (${sql.join(kinds.map((k) => sql`${k}`), sql`, `)})`);
      }
      if (q.owner === "public") where.push(sql`owner IS NULL`);
      else if (typeof q.owner === "string") where.push(sql`owner = ${q.owner}`);
      else if (q.owner && "any" in q.owner) {
        const parts = q.owner.any.filter((o): o is string => o !== null).map((o) => sql`owner = ${o}`);
        if (q.owner.any.includes(null)) parts.push(sql`owner IS NULL`);
        where.push(parts.length ? sql`(${sql.join(parts, sql` OR `)})` : sql`false`);
      }
      const limit = Math.max(1, Math.min(q.limit ?? 20, 1000));
      const rows = await read().all<unknown[]>(
        sql`SELECT service, kind, ref, owner, title,
              ts_headline('hearth', body, to_tsquery('hearth', ${match}), 'StartSel="", StopSel="", MaxWords=24, MinWords=12, ShortWord=0') AS snippet,
              -ts_rank('{0.25, 0, 0, 1.0}', doc, to_tsquery('hearth', ${match}), 1) AS rank
            FROM search_index WHERE ${sql.join(where, sql` AND `)}
            ORDER BY ${q.order === "recent" ? sql`id DESC` : sql`rank, id`} LIMIT ${limit}`,
      );
      return rows.map((r) => ({ service: r[0], kind: r[1], ref: r[2], owner: r[3], title: r[4], snippet: r[5], rank: r[6] }) as IndexHit);
    },
    async recent(q) {
      const limit = Math.max(1, Math.min(q.limit, 1000));
      const rows = await read().all<unknown[]>(
        sql`SELECT kind, ref, owner, title, substr(body, 1, ${PREVIEW}) FROM search_index
            WHERE service = ${q.service ?? service} AND kind = ${q.kind} AND owner IS NULL ORDER BY id DESC LIMIT ${limit}`,
      );
      return rows.map((r) => ({ kind: r[0], ref: r[1], owner: r[2], title: r[3], body: r[4] }) as IndexEntry);
    },
    async counts() {
      const rows = await read().all<unknown[]>(sql`SELECT service, kind, count(*) FROM search_index WHERE owner IS NULL GROUP BY service, kind`);
      return rows.map((r) => ({ service: r[0] as string, kind: r[1] as string, n: Number(r[2]) }));
    },
    async indexed(kind) {
      const rows = await read().all<unknown[]>(sql`SELECT ref FROM search_index WHERE service = ${service} AND kind = ${kind}`);
      return new Set(rows.map((r) => r[0] as string));
    },
  };
}
