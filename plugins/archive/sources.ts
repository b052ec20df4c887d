// Where each kind of archive entry lives. Collected kinds are public entries
// (owner NULL) that their services put in the shared full-text index; blog
// posts are read from the blog's own table, public ones only, since the blog
// keeps them there. Private records are filtered out at every query.
import type { Database } from "bun:sqlite";
import { and, desc, eq, or, sql } from "drizzle-orm";
import type { Ctx, IndexHit } from "../../core/plugin.ts";
import { posts } from "../blog/schema.ts";

export const KINDS = ["news", "video", "market", "blog", "prayer"] as const;
export type Kind = (typeof KINDS)[number];

/** The service that writes each indexed kind, so an entry is only taken from its own service. */
export const INDEXED: Record<Exclude<Kind, "blog">, string> = { news: "news", video: "video", market: "markets", prayer: "prayer" };

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

function tableExists(db: Database, name: string): boolean {
  return !!db.query("SELECT 1 FROM sqlite_master WHERE name = ?").get(name);
}

/** The newest public entries of one indexed kind: the index's rowids grow with each entry written. */
export function recentIndexed(ctx: Ctx, kind: Exclude<Kind, "blog">, limit: number): Entry[] {
  const rows = ctx.sqlite
    .query<{ ref: string; title: string; body: string }, [string, string, number]>(
      "SELECT ref, title, substr(body, 1, 600) AS body FROM search_index WHERE service = ? AND kind = ? AND owner IS NULL ORDER BY rowid DESC LIMIT ?",
    )
    .all(INDEXED[kind], kind, limit);
  return rows.map((r) => ({ kind, ref: r.ref, title: r.title, text: clip(r.body), link: linkFor(ctx, kind, r.ref), when: whenOf(r.ref) }));
}

function blogEntry(ctx: Ctx, p: Pick<typeof posts.$inferSelect, "id" | "title" | "content" | "created">): Entry {
  return { kind: "blog", ref: p.id, title: p.title, text: clip(p.content.replace(/\s+/g, " ")), link: linkFor(ctx, "blog", p.id), when: new Date(p.created).toISOString() };
}

export function recentBlog(ctx: Ctx, limit: number): Entry[] {
  if (!tableExists(ctx.sqlite, "blog_posts")) return [];
  return ctx.db
    .select({ id: posts.id, title: posts.title, content: posts.content, created: posts.created })
    .from(posts)
    .where(eq(posts.private, false))
    .orderBy(desc(posts.created), desc(posts.id))
    .limit(limit)
    .all()
    .map((p) => blogEntry(ctx, p));
}

// Counting by owner scans the whole index (90 ms at 100,000 entries), so the
// counts are kept until the index changes: a new entry raises the largest
// rowid, a removal lowers the number of refs, and both are cheap to read.
const held = new WeakMap<Database, { stamp: string; rows: { service: string; kind: string; n: number }[] }>();

function indexCounts(db: Database) {
  const s = db.query<{ top: number | null; refs: number }, []>("SELECT (SELECT max(rowid) FROM search_index) AS top, (SELECT count(*) FROM search_refs) AS refs").get()!;
  const stamp = `${s.top}:${s.refs}`;
  const memo = held.get(db);
  if (memo?.stamp === stamp) return memo.rows;
  const rows = db.query<{ service: string; kind: string; n: number }, []>("SELECT service, kind, count(*) AS n FROM search_index WHERE owner IS NULL GROUP BY service, kind").all();
  held.set(db, { stamp, rows });
  return rows;
}

export function counts(ctx: Ctx): Record<Kind, number> {
  const out = Object.fromEntries(KINDS.map((k) => [k, 0])) as Record<Kind, number>;
  const rows = indexCounts(ctx.sqlite);
  for (const r of rows) {
    const k = r.kind as Kind;
    if (k !== "blog" && INDEXED[k as Exclude<Kind, "blog">] === r.service) out[k] = r.n;
  }
  if (tableExists(ctx.sqlite, "blog_posts")) out.blog = ctx.db.select({ n: sql<number>`count(*)` }).from(posts).where(eq(posts.private, false)).get()?.n ?? 0;
  return out;
}

export function searchIndexed(ctx: Ctx, query: string, kinds: Exclude<Kind, "blog">[], limit: number): Entry[] {
  if (!kinds.length) return [];
  const hits: IndexHit[] = ctx.index.search({ query, services: kinds.map((k) => INDEXED[k]), kind: kinds, owner: "public", limit: limit * 2 });
  return hits
    .filter((h) => INDEXED[h.kind as Exclude<Kind, "blog">] === h.service)
    .slice(0, limit)
    .map((h) => ({ kind: h.kind as Kind, ref: h.ref, title: h.title, text: h.snippet, link: linkFor(ctx, h.kind as Kind, h.ref), when: whenOf(h.ref) }));
}

/** Public posts containing every word of the query, in the title or the text, newest first. */
export function searchBlog(ctx: Ctx, query: string, limit: number): Entry[] {
  if (!tableExists(ctx.sqlite, "blog_posts")) return [];
  const words = (query.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []).slice(0, 8);
  if (!words.length) return [];
  const esc = (w: string) => `%${w.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const each = words.map((w) => or(sql`${posts.title} LIKE ${esc(w)} ESCAPE '\\'`, sql`${posts.content} LIKE ${esc(w)} ESCAPE '\\'`)!);
  return ctx.db
    .select({ id: posts.id, title: posts.title, content: posts.content, created: posts.created })
    .from(posts)
    .where(and(eq(posts.private, false), ...each))
    .orderBy(desc(posts.created))
    .limit(limit)
    .all()
    .map((p) => {
      const e = blogEntry(ctx, p);
      // The text around the first word found, as the index's snippets give.
      const flat = p.content.replace(/\s+/g, " ");
      const at = flat.toLowerCase().indexOf(words[0]);
      if (at > 120) e.text = `…${clip(flat.slice(at - 100))}`;
      return e;
    });
}
