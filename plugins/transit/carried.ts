// The configured feeds and their imports: a feed never imported is imported
// before the first answer that needs it; one older than a week is refreshed
// in the background while the held timetable keeps answering.
import { eq } from "drizzle-orm";
import type { Ctx } from "hearth";
import { configuredFeeds, type ConfiguredFeed } from "./feeds-config.ts";
import { importFeed } from "./gtfs-import.ts";
import { transitFeeds } from "./schema.ts";

const REFRESH_MS = 7 * 86_400_000;
// After a failure, wait this long before trying the same feed again.
const RETRY_MS = 3_600_000;

// Per instance (its settings object), so two instances in one process keep apart.
const byInstance = new WeakMap<object, Map<string, Promise<void>>>();
const all = new Set<Promise<void>>();

/** Imports under way, awaited when the instance stops. */
export const importsUnderWay = () => [...all];

function start(ctx: Ctx, feed: ConfiguredFeed): Promise<void> {
  let running = byInstance.get(ctx.config);
  if (!running) byInstance.set(ctx.config, (running = new Map()));
  const key = feed.id;
  let job = running.get(key);
  if (!job) {
    const m = running;
    job = importFeed(ctx, feed).finally(() => {
      m.delete(key);
      all.delete(job!);
    });
    running.set(key, job);
    all.add(job);
  }
  return job;
}

export type FeedRow = typeof transitFeeds.$inferSelect;

/** The carried feeds, importing or refreshing as needed; waits only for feeds with nothing held yet. */
export async function carriedFeeds(ctx: Ctx): Promise<{ feed: ConfiguredFeed; row: FeedRow | undefined }[]> {
  const feeds = configuredFeeds(ctx.config.TRANSIT_FEEDS);
  const now = ctx.clock.now().getTime();
  const waits: Promise<void>[] = [];
  for (const f of feeds) {
    const row = await ctx.db.select().from(transitFeeds).where(eq(transitFeeds.id, f.id)).get();
    const never = !row || (row.state !== "ready" && row.imported === null);
    const failedLately = row?.state === "failed" && row.checked !== null && now - row.checked < RETRY_MS;
    if (never && !failedLately) waits.push(start(ctx, f));
    else if (row && row.url !== f.url) waits.push(start(ctx, f));
    else if (row && !failedLately && (row.checked === null || now - row.checked > REFRESH_MS)) void start(ctx, f);
  }
  await Promise.all(waits);
  return Promise.all(feeds.map(async (feed) => ({ feed, row: await ctx.db.select().from(transitFeeds).where(eq(transitFeeds.id, feed.id)).get() })));
}

/** Starts imports of feeds not yet held, without waiting (at start). */
export async function warm(ctx: Ctx) {
  const feeds = configuredFeeds(ctx.config.TRANSIT_FEEDS);
  if (feeds.unusable) ctx.log.warn("TRANSIT_FEEDS entries that are not http(s) URLs are ignored", { entries: feeds.unusable });
  for (const f of feeds) {
    const row = await ctx.db.select().from(transitFeeds).where(eq(transitFeeds.id, f.id)).get();
    if (!row || row.state !== "ready") void start(ctx, f);
  }
}
