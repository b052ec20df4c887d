// Where each kind of archive entry lives: public entries (owner NULL) that
// their services put in the shared full-text index, collected ones (news,
// videos, market snapshots, reflections) and published ones (blog posts).
// Private records are filtered out at every query.
import type { Ctx, IndexHit } from "hearth";

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

/** The newest public entries of one indexed kind, as its service put them. */
export async function recentIndexed(ctx: Ctx, kind: Kind, limit: number): Promise<Entry[]> {
  const rows = await ctx.index.recent({ kind, service: INDEXED[kind], limit });
  return rows.map((r) => ({ kind, ref: r.ref, title: r.title, text: clip(r.body), link: linkFor(ctx, kind, r.ref), when: whenOf(r.ref) }));
}

export async function counts(ctx: Ctx): Promise<Record<Kind, number>> {
  const out = Object.fromEntries(KINDS.map((k) => [k, 0])) as Record<Kind, number>;
  const rows = await ctx.index.counts();
  for (const r of rows) {
    const k = r.kind as Kind;
    if (INDEXED[k] === r.service) out[k] = r.n;
  }
  return out;
}

export async function searchIndexed(ctx: Ctx, query: string, kinds: Kind[], limit: number): Promise<Entry[]> {
  if (!kinds.length) return [];
  const hits: IndexHit[] = await ctx.index.search({ query, services: kinds.map((k) => INDEXED[k]), kind: kinds, owner: "public", limit: limit * 2 });
  return hits
    .filter((h) => INDEXED[h.kind as Kind] === h.service)
    .slice(0, limit)
    .map((h) => ({ kind: h.kind as Kind, ref: h.ref, title: h.title, text: h.snippet, link: linkFor(ctx, h.kind as Kind, h.ref), when: whenOf(h.ref) }));
}
