// A channel's public feed, https://www.youtube.com/feeds/videos.xml?channel_id=UC...:
// Atom with yt:videoId, and a media:group holding the description, the
// thumbnail and media:community/media:statistics@views. It carries the
// channel's 15 latest uploads and needs no key.
import type * as FeedParserModule from "@rowanmanning/feed-parser";
import { desc, eq } from "drizzle-orm";
import { type Ctx, type CollectionRound, defineProvider, warnFailures } from "hearth";
import { curatedChannels, type Channel } from "./channels.ts";
import { videos } from "./schema.ts";

// Loaded on first parse, so a process that never reads a feed does not pay for the parser at start.
let feedParser: typeof FeedParserModule | undefined;
const parseFeed = (xml: string) => (feedParser ??= require("@rowanmanning/feed-parser") as typeof FeedParserModule).parseFeed(xml);

defineProvider({ name: "YOUTUBE", label: "YouTube", url: "https://www.youtube.com", concurrency: 2, rate: { count: 2, perMs: 1000 } });

export interface FeedVideo {
  id: string;
  title: string;
  description: string;
  url: string;
  thumbnail: string | null;
  published: number;
  views: number | null;
}

export function parseChannelFeed(xml: string): FeedVideo[] {
  const feed = parseFeed(xml);
  const out: FeedVideo[] = [];
  for (const it of feed.items) {
    const el = it.element;
    const id = el.findElementWithName("videoId")?.textContent.trim() || /^yt:video:([\w-]{11})$/.exec(it.id ?? "")?.[1];
    if (!id || !/^[\w-]{11}$/.test(id)) continue;
    const group = el.findElementWithName("group");
    const views = group?.findElementWithName("community")?.findElementWithName("statistics")?.getAttributeAsNumber("views") ?? null;
    const when = it.published ?? it.updated;
    out.push({
      id,
      title: (it.title ?? "").trim() || id,
      description: group?.findElementWithName("description")?.textContent.trim() ?? "",
      url: it.url && /^https:\/\/www\.youtube\.com\//.test(it.url) ? it.url : `https://www.youtube.com/watch?v=${id}`,
      thumbnail: group?.findElementWithName("thumbnail")?.getAttribute("url") ?? null,
      published: when ? when.getTime() : 0,
      views,
    });
  }
  return out;
}

async function readChannel(ctx: Ctx, ch: Channel, ttl: number) {
  const f = await ctx.http.get("YOUTUBE", "/feeds/videos.xml", { query: { channel_id: ch.id }, ttl, revalidate: 0, as: "text", parse: parseChannelFeed, accept: [404] });
  if (f.status === 404) throw new Error("the channel's feed is not found");
  if (f.cached) return;
  await ctx.writes(async (db) => {
    const at = ctx.clock.now().getTime();
    for (const v of f.data) {
      const held = await db.select({ title: videos.title, description: videos.description }).from(videos).where(eq(videos.id, v.id)).get();
      const row = { channelId: ch.id, channel: ch.name, title: v.title, description: v.description, url: v.url, thumbnail: v.thumbnail, published: v.published || at, views: v.views };
      // One statement either way: a read of the same channel at once may store the video first.
      await db.insert(videos).values({ id: v.id, ...row, seen: at }).onConflictDoUpdate({ target: videos.id, set: row }).run();
      if (!held || held.title !== v.title || held.description !== v.description)
        await ctx.index.put({ kind: "video", ref: v.id, owner: null, title: v.title, body: `${v.description}\n${ch.name}` });
    }
  });
}

/** Reads every curated channel's feed; one failing channel leaves the others. */
export async function pollChannels(ctx: Ctx, ttlSeconds: number): Promise<CollectionRound> {
  const channels = curatedChannels(ctx.config);
  const results = await Promise.allSettled(channels.map((c) => readChannel(ctx, c, ttlSeconds)));
  const failed = results.flatMap((r, i) => (r.status === "rejected" ? [{ source: channels[i].name, error: String((r.reason as Error)?.message ?? r.reason) }] : []));
  warnFailures(ctx, "channels", channels.length, failed);
  return { sources: channels.length, failed };
}

export const latest = (ctx: Ctx, limit: number) => ctx.db.select().from(videos).orderBy(desc(videos.published)).limit(limit).all();
