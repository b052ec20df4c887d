// ctx.index: one FTS5 table shared by every plugin, partitioned by service and kind.
import type { Database } from "bun:sqlite";
import type { FullTextIndex, IndexHit } from "../plugin.ts";

/** Turns free text into a safe FTS5 query: every word must match, as a prefix. */
export function ftsQuery(text: string): string | null {
  const words = text.toLowerCase().match(/[\p{L}\p{N}_]+/gu);
  if (!words || words.length === 0) return null;
  return words.slice(0, 32).map((w) => `"${w}"*`).join(" ");
}

export function makeIndex(service: string, write: () => Database, read: () => Database): FullTextIndex {
  return {
    put(e) {
      const db = write();
      db.run("DELETE FROM search_index WHERE service = ? AND kind = ? AND ref = ?", [service, e.kind, e.ref]);
      db.run("INSERT INTO search_index (service, kind, ref, owner, title, body) VALUES (?, ?, ?, ?, ?, ?)", [
        service,
        e.kind,
        e.ref,
        e.owner,
        e.title,
        e.body,
      ]);
    },
    remove(kind, ref) {
      write().run("DELETE FROM search_index WHERE service = ? AND kind = ? AND ref = ?", [service, kind, ref]);
    },
    search(q) {
      const match = ftsQuery(q.query);
      if (!match) return [];
      const where = ["search_index MATCH ?", "service = ?"];
      const params: (string | number | null)[] = [match, service];
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
          `SELECT kind, ref, owner, title, snippet(search_index, 5, '', '', '…', 24) AS snippet, bm25(search_index, 0, 0, 0, 0, 4.0, 1.0) AS rank
           FROM search_index WHERE ${where.join(" AND ")} ORDER BY rank LIMIT ?`,
        )
        .all(...params);
    },
  };
}
