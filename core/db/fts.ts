// ctx.index: one FTS5 table shared by every plugin, partitioned by service and
// kind. search_refs maps (service, kind, ref) to the FTS rowid, so replacing
// or removing an entry is a keyed lookup rather than a scan of the index.
import type { Database } from "bun:sqlite";
import type { FullTextIndex, IndexEntry, IndexHit } from "../plugin.ts";

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

export function makeIndex(service: string, write: () => Database, read: () => Database, via: (change: () => void) => void = (c) => c()): FullTextIndex {
  return {
    put(e) {
      via(() => put(write(), service, e));
    },
    putMany(entries) {
      via(() => {
        const db = write();
        const run = () => {
          for (const e of entries) put(db, service, e);
        };
        // Inside a call's transaction already, or make one so a batch lands whole.
        if (db.inTransaction) run();
        else db.transaction(run)();
      });
    },
    remove(kind, ref) {
      via(() => remove(write(), service, kind, ref));
    },
    search(q) {
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
  };
}
