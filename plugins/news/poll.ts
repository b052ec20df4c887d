// Polls the followed feeds. Each request carries the validators the feed
// gave last time (If-None-Match / If-Modified-Since), so an unchanged feed
// costs its publisher a 304 and nothing is parsed. New items are stored and
// put in the shared index as public `news` entries, which the archive reads.
import type * as FeedParserModule from "@rowanmanning/feed-parser";
import { eq } from "drizzle-orm";
import { type Ctx, type CollectionRound, decodeText, guardedFetch, userAgent, plainFromHtml, warnFailures } from "hearth";
import { followedFeeds, type FeedDef } from "./feeds.ts";
import { feeds, items } from "./schema.ts";

// Loaded on first parse, so a process that never reads a feed does not pay for the parser at start.
let feedParser: typeof FeedParserModule | undefined;
const parseFeed = (xml: string) => (feedParser ??= require("@rowanmanning/feed-parser") as typeof FeedParserModule).parseFeed(xml);

export interface ParsedItem {
  id: string;
  title: string;
  url: string;
  summary: string;
  published: number | null;
}

const SUMMARY_CHARS = 320;

export function shorten(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  const space = cut.lastIndexOf(" ");
  return `${(space > max * 0.6 ? cut.slice(0, space) : cut).replace(/[\s,;:.]+$/, "")}…`;
}

export const itemId = (feedUrl: string, key: string) => new Bun.CryptoHasher("sha256").update(`${feedUrl}\n${key}`).digest("hex").slice(0, 16);

/** RSS 0.9x/1.0/2.0 or Atom, through a parser that knows their variants; items without a link are dropped. */
export function parseItems(feedUrl: string, xml: string): ParsedItem[] {
  const feed = parseFeed(xml);
  const out: ParsedItem[] = [];
  for (const it of feed.items) {
    const url = it.url;
    if (!url || !/^https?:\/\//.test(url)) continue;
    const title = plainFromHtml(it.title ?? "").trim();
    if (!title) continue;
    const when = it.published ?? it.updated;
    out.push({
      id: itemId(feedUrl, it.id || url),
      title,
      url,
      summary: shorten(plainFromHtml(it.description || it.content || ""), SUMMARY_CHARS),
      published: when && Number.isFinite(when.getTime()) ? when.getTime() : null,
    });
  }
  return out;
}

type Outcome =
  | { feed: FeedDef; kind: "changed"; etag: string | null; lastModified: string | null; items: ParsedItem[] }
  | { feed: FeedDef; kind: "unchanged" }
  | { feed: FeedDef; kind: "failed"; error: string };

async function pollOne(ctx: Ctx, feed: FeedDef, held: typeof feeds.$inferSelect | undefined): Promise<Outcome> {
  const headers: Record<string, string> = {
    "user-agent": userAgent(ctx.config),
    accept: "application/rss+xml, application/atom+xml, application/rdf+xml;q=0.9, application/xml;q=0.8, text/xml;q=0.8, */*;q=0.5",
  };
  if (held?.etag) headers["if-none-match"] = held.etag;
  if (held?.lastModified) headers["if-modified-since"] = held.lastModified;
  try {
    // Feeds are the operator's own choice (a bridge on the local network is fine), so their addresses are trusted.
    const res = await guardedFetch(feed.url, { field: "feed", trusted: true, accept: [304], headers, maxBytes: 10_000_000, timeoutMs: Number(ctx.config.NEWS_TIMEOUT_MS) || 15_000 });
    if (res.status === 304) return { feed, kind: "unchanged" };
    const parsed = parseItems(feed.url, decodeText(res.body, res.headers["content-type"]));
    return { feed, kind: "changed", etag: res.headers.etag ?? null, lastModified: res.headers["last-modified"] ?? null, items: parsed };
  } catch (e) {
    return { feed, kind: "failed", error: e instanceof Error ? e.message : String(e) };
  }
}

async function inTurns<T, R>(list: T[], width: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(list.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, list.length) }, async () => {
      while (next < list.length) {
        const i = next++;
        out[i] = await fn(list[i]);
      }
    }),
  );
  return out;
}

export interface PollReport extends CollectionRound {
  changed: number;
  unchanged: number;
  added: number;
}

/** Polls every followed feed, or only those not asked within `olderThanMs`. */
export async function pollFeeds(ctx: Ctx, opts: { olderThanMs?: number } = {}): Promise<PollReport> {
  const followed = followedFeeds(ctx.config);
  const state = new Map((await ctx.db.select().from(feeds).all()).map((r) => [r.url, r]));
  const now = ctx.clock.now().getTime();
  const due = followed.filter((f) => opts.olderThanMs === undefined || (state.get(f.url)?.polled ?? -Infinity) <= now - opts.olderThanMs);
  const outcomes = await inTurns(due, 4, (f) => pollOne(ctx, f, state.get(f.url)));
  warnFailures(ctx, "feeds", due.length, outcomes.flatMap((o) => (o.kind === "failed" ? [{ feed: o.feed.url, error: o.error }] : [])));
  const report: PollReport = { sources: due.length, changed: 0, unchanged: 0, failed: [], added: 0 };
  await ctx.writes(async (db) => {
    const at = ctx.clock.now().getTime();
    for (const o of outcomes) {
      const base = { url: o.feed.url, topic: o.feed.topic, name: o.feed.name, polled: at };
      if (o.kind === "failed") {
        report.failed.push({ source: o.feed.name, error: o.error });
        await db.insert(feeds).values({ ...base, error: o.error }).onConflictDoUpdate({ target: feeds.url, set: { ...base, error: o.error } }).run();
        continue;
      }
      report[o.kind]++;
      if (o.kind === "unchanged") {
        await db.insert(feeds).values({ ...base, error: null }).onConflictDoUpdate({ target: feeds.url, set: { ...base, error: null } }).run();
        continue;
      }
      const row = { ...base, etag: o.etag, lastModified: o.lastModified, changed: at, error: null };
      await db.insert(feeds).values(row).onConflictDoUpdate({ target: feeds.url, set: row }).run();
      for (const it of o.items) {
        const existing = await db.select({ title: items.title, summary: items.summary }).from(items).where(eq(items.id, it.id)).get();
        if (existing && existing.title === it.title && existing.summary === it.summary) continue;
        // A date in the future is a feed's mistake; it would pin the item to the top.
        const published = it.published !== null && it.published <= at + 3_600_000 ? it.published : at;
        if (existing) await db.update(items).set({ title: it.title, summary: it.summary, url: it.url }).where(eq(items.id, it.id)).run();
        else {
          await db.insert(items).values({ id: it.id, feed: o.feed.url, topic: o.feed.topic, source: o.feed.name, title: it.title, url: it.url, summary: it.summary, published, seen: at }).run();
          report.added++;
        }
        await ctx.index.put({ kind: "news", ref: it.id, owner: null, title: it.title, body: `${it.summary}\n${o.feed.name} · ${o.feed.topic}` });
      }
    }
  });
  return report;
}
