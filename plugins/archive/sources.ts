// Where each kind of archive entry lives: public entries (owner NULL) that
// their services put in the shared full-text index, collected ones (news,
// videos, market snapshots, reflections) and published ones (blog posts).
// Private records are filtered out at every query.
import { sql } from "drizzle-orm";
import type { Ctx, Db, IndexHit } from "../../core/plugin.ts";

export const KINDS = ["news", "video", "market", "blog", "prayer"] as const;
export type Kind = (typeof KINDS)[number];

/** The service that writes each indexed kind, so an entry is only taken from its own service. */
export const INDEXED: Record<Kind, string> = { news: "news", video: "video", market: "markets", blog: "blog", prayer: "prayer" };

export interface Entry {
  kind: Kind;
  ref: string;
  title: string;
  text: string;
  /** Where to read it in full, when there is such a place. */
  link?: string;
  when?: string;
}

function linkFor(ctx: Ctx, kind: Kind, ref: string): string | undefined {
  if (kind === "news") return `${ctx.baseUrl}/api/v1/news/read?id=${encodeURIComponent(ref)}`;
  if (kind === "video") return `https://www.youtube.com/watch?v=${encodeURIComponent(ref)}`;
  if (kind === "blog") return `${ctx.baseUrl}/blog/${encodeURIComponent(ref)}`;
  return undefined;
}

/** When an entry's ref carries its date (market snapshots "name@time", reflections "reflection:day"). */
function whenOf(ref: string): string | undefined {
  const m = /(?:@|^reflection:)(\d{4}-\d{2}-\d{2}(?:T[\d:.]+Z)?)$/.exec(ref);
  return m?.[1];
}

const clip = (s: string, n = 280) => (s.length > n ? `${s.slice(0, n).replace(/\s+\S*$/, "")}…` : s);

/** The newest public entries of one indexed kind: the index's rowids grow with each entry written. */
export async function recentIndexed(ctx: Ctx, kind: Kind, limit: number): Promise<Entry[]> {
  const rows = await ctx.db.all<{ ref: string; title: string; body: string }>(
    sql`SELECT ref, title, substr(body, 1, 600) AS body FROM search_index WHERE service = ${INDEXED[kind]} AND kind = ${kind} AND owner IS NULL ORDER BY rowid DESC LIMIT ${limit}`,
  );
  return rows.map((r) => ({ kind, ref: r.ref, title: r.title, text: clip(r.body), link: linkFor(ctx, kind, r.ref), when: whenOf(r.ref) }));
}

// Counting by owner scans the whole index (90 ms at 100,000 entries), so the
// counts are kept until the index changes: a new entry raises the largest
// rowid, a removal lowers the number of refs, and both are cheap to read.
const held = new WeakMap<Db, { stamp: string; rows: { service: string; kind: string; n: number }[] }>();

async function indexCounts(db: Db) {
  const [s] = await db.all<{ top: number | null; refs: number }>(sql`SELECT (SELECT max(rowid) FROM search_index) AS top, (SELECT count(*) FROM search_refs) AS refs`);
  const stamp = `${s.top}:${s.refs}`;
  const memo = held.get(db);
  if (memo?.stamp === stamp) return memo.rows;
  const rows = await db.all<{ service: string; kind: string; n: number }>(sql`SELECT service, kind, count(*) AS n FROM search_index WHERE owner IS NULL GROUP BY service, kind`);
  // A count may come back as text from a store whose counts are 64-bit.
  for (const r of rows) r.n = Number(r.n);
  held.set(db, { stamp, rows });
  return rows;
}

export async function counts(ctx: Ctx): Promise<Record<Kind, number>> {
  const out = Object.fromEntries(KINDS.map((k) => [k, 0])) as Record<Kind, number>;
  const rows = await indexCounts(ctx.db);
  for (const r of rows) {
    const k = r.kind as Kind;
    if (INDEXED[k] === r.service) out[k] = r.n;
  }
  return out;
}

export function searchIndexed(ctx: Ctx, query: string, kinds: Kind[], limit: number): Entry[] {
  if (!kinds.length) return [];
  const hits: IndexHit[] = ctx.index.search({ query, services: kinds.map((k) => INDEXED[k]), kind: kinds, owner: "public", limit: limit * 2 });
  return hits
    .filter((h) => INDEXED[h.kind as Kind] === h.service)
    .slice(0, limit)
    .map((h) => ({ kind: h.kind as Kind, ref: h.ref, title: h.title, text: h.snippet, link: linkFor(ctx, h.kind as Kind, h.ref), when: whenOf(h.ref) }));
}
