import { Type as T } from "@sinclair/typebox";
import { eq, inArray, max } from "drizzle-orm";
import { invalid, definePlugin, read, type Ctx, freshness, pollMinutes, pollOnSchedule, warm } from "hearth";
import { curatedChannels } from "./channels.ts";
import { latest, pollChannels } from "./feed.ts";
import { videos } from "./schema.ts";

type Video = typeof videos.$inferSelect;

const shape = (v: Video) => ({
  id: v.id,
  title: v.title,
  channel: v.channel,
  url: v.url,
  published: new Date(v.published).toISOString(),
  description: v.description.length > 400 ? `${v.description.slice(0, 400).replace(/\s+\S*$/, "")}…` : v.description,
  thumbnail: v.thumbnail,
  views: v.views,
});

const interval = (ctx: Ctx) => pollMinutes(ctx.config.VIDEO_POLL_MINUTES, 30, "VIDEO_POLL_MINUTES");
/** Just under the poll interval, so each scheduled poll asks YouTube afresh. */
const ttl = (ctx: Ctx) => interval(ctx) * 60 - 30;

/** Reads the channels when nothing is held yet, unless a round failed recently. */
const warmed = async (ctx: Ctx) => {
  const holdsAny = !!(await ctx.db.select({ id: videos.id }).from(videos).limit(1).get());
  await warm(ctx, interval(ctx), () => holdsAny, (c) => pollChannels(c, ttl(c)));
};

/** A watch, short or share URL, or a bare 11-character id. */
function videoIdIn(text: string): string | null {
  const t = text.trim();
  if (/^[\w-]{11}$/.test(t) && /\d|[A-Z].*[a-z]|[a-z].*[A-Z]|[-_]/.test(t)) return t;
  const m = /(?:youtube\.com\/(?:watch\?(?:.*&)?v=|shorts\/|live\/|embed\/)|youtu\.be\/)([\w-]{11})/.exec(t);
  return m ? m[1] : null;
}

const followedNames = (ctx: Ctx) => curatedChannels(ctx.config).map((c) => c.name);
const asOf = async (ctx: Ctx) => {
  const at = (await ctx.db.select({ at: max(videos.seen) }).from(videos).get())?.at;
  return at ? new Date(at).toISOString() : null;
};

export default definePlugin({
  name: "video",
  description: "Latest videos from curated YouTube channels, read from their public feeds on a schedule and kept in the archive.",
  needs: ["db", "http", "index", "schedule", "writes"],
  providers: ["YOUTUBE"],
  settings: ["HEARTH_COLLECTORS"],
  config: {
    VIDEO_CHANNELS_FILE: { default: "", description: "JSON file of YouTube channels to follow ({\"channels\": [{\"id\": \"UC...\", \"name\"}]}); plugins/video/channels.json when empty." },
    VIDEO_POLL_MINUTES: { default: "30", description: "Minutes between reads of the channels' feeds: 5, 10, 15, 20, 30 or 60." },
    YOUTUBE_URL: { default: "", description: "Base URL of YouTube's channel feeds (https://www.youtube.com when empty)." },
  },
  methods: {
    list: read({
      description: "Latest videos from the curated channels, newest first, with channel, link, date, description and views. `limit` default 50, max 200. The answer says whether the collection is `stale` (the last read failed, or none has worked for two intervals), its `last_success` and the last read's `error`.",
      args: T.Object({ limit: T.Optional(T.Integer({ minimum: 1, maximum: 200, description: "Videos, default 50, max 200." })) }),
      access: "public",
      untrusted: true,
      // Reads the channels itself when it holds nothing yet.
      openWorld: true,
      async run(args, ctx) {
        await warmed(ctx);
        const list = (await latest(ctx, args.limit ?? 50)).map(shape);
        return { videos: list, count: list.length, channels: followedNames(ctx), as_of: await asOf(ctx), ...(await freshness(ctx, interval(ctx))) };
      },
    }),
    search: read({
      description:
        "Searches the videos of the curated channels only (titles, descriptions, channel names), or finds one by its YouTube URL or id. A miss means the video is not followed here: it says so and names the channels that are.",
      args: T.Object({ query: T.String({ minLength: 1, maxLength: 200, description: "Words, a YouTube URL, or a video id." }) }),
      access: "public",
      untrusted: true,
      // Reads the channels itself when it holds nothing yet.
      openWorld: true,
      async run({ query }, ctx) {
        if (!query.trim()) throw invalid("query", "query must not be blank");
        await warmed(ctx);
        const channels = followedNames(ctx);
        const id = videoIdIn(query);
        const isUrl = /^https?:/i.test(query.trim());
        let found: Video[] = [];
        if (id) found = await ctx.db.select().from(videos).where(eq(videos.id, id)).all();
        if (!found.length && !isUrl) {
          const hits = await ctx.index.search({ query, kind: "video", owner: "public", limit: 50 });
          if (hits.length) {
            const rows = new Map((await ctx.db.select().from(videos).where(inArray(videos.id, hits.map((h) => h.ref))).all()).map((v) => [v.id, v]));
            found = hits.flatMap((h) => rows.get(h.ref) ?? []);
          }
        }
        if (!found.length)
          return {
            query,
            videos: [],
            count: 0,
            followed: false,
            note: `${isUrl ? "That video is" : `No video matching ${JSON.stringify(query.trim())} is`} not followed here: this instance follows only ${channels.length} curated channels (${channels.join(", ")}).`,
            ...(await freshness(ctx, interval(ctx))),
          };
        return { query, videos: found.map(shape), count: found.length, followed: true, ...(await freshness(ctx, interval(ctx))) };
      },
    }),
  },
  async start(ctx) {
    curatedChannels(ctx.config);
    await pollOnSchedule(ctx, interval(ctx), (fctx) => pollChannels(fctx, ttl(fctx)));
  },
});
