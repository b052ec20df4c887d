import { Type as T } from "@sinclair/typebox";
import { desc, eq, inArray, max } from "drizzle-orm";
import { invalid, definePlugin, read, type Ctx, type CollectionRound, freshness, pollMinutes, pollOnSchedule, warm, warnFailures } from "hearth";
import { readBluesky, readMastodon, type Post } from "./networks.ts";
import { posts } from "./schema.ts";

type Row = typeof posts.$inferSelect;

const shape = (p: Row) => ({
  network: p.network,
  author: p.handle,
  name: p.name,
  text: p.text,
  url: p.url,
  created: new Date(p.created).toISOString(),
  likes: p.likes,
  reposts: p.reposts,
  replies: p.replies,
  via: p.source,
});

const interval = (ctx: Ctx) => pollMinutes(ctx.config.SOCIAL_POLL_MINUTES, 15, "SOCIAL_POLL_MINUTES");

async function collect(ctx: Ctx): Promise<CollectionRound & { read: number; added: number }> {
  const ttl = interval(ctx) * 60 - 30;
  const [bsky, masto] = await Promise.all([readBluesky(ctx, ttl), readMastodon(ctx)]);
  const failed = [...bsky.failed, ...masto.failed];
  warnFailures(ctx, "sources", bsky.sources + masto.sources, failed);
  const got: Post[] = [...bsky.posts, ...masto.posts];
  let added = 0;
  if (got.length)
    await ctx.writes(async (db) => {
      const at = ctx.clock.now().getTime();
      for (const p of got) {
        const held = await db.select({ text: posts.text }).from(posts).where(eq(posts.uri, p.uri)).get();
        const counts = { likes: p.likes, reposts: p.reposts, replies: p.replies, name: p.name };
        // One statement either way: a round running at once may store the same post first.
        await db
          .insert(posts)
          .values({ ...p, seen: at })
          .onConflictDoUpdate({ target: posts.uri, set: { ...counts, text: p.text } })
          .run();
        if (!held) added++;
        if (!held || held.text !== p.text) await ctx.index.put({ kind: "post", ref: p.uri, owner: null, title: p.name ? `${p.name} (@${p.handle})` : `@${p.handle}`, body: p.text });
      }
    });
  return { sources: bsky.sources + masto.sources, read: got.length, added, failed };
}

const asOf = async (ctx: Ctx) => {
  const at = (await ctx.db.select({ at: max(posts.seen) }).from(posts).get())?.at;
  return at ? new Date(at).toISOString() : null;
};

export default definePlugin({
  name: "social",
  description: "Public posts from Bluesky (keyless public AppView) and, where configured, Mastodon servers' public timelines, collected on a schedule and searchable here.",
  needs: ["db", "http", "index", "schedule", "writes"],
  providers: ["BLUESKY"],
  settings: ["HEARTH_COLLECTORS", "HEARTH_CONTACT", "HEARTH_PUBLIC_URL", "WEB_FETCH_ALLOW_LOOPBACK", "WEB_FETCH_DNS", "WEB_FETCH_MAX_BYTES", "WEB_FETCH_TIMEOUT_MS"],
  config: {
    SOCIAL_BLUESKY_FEEDS: {
      default: "at://did:plc:z72i7hdynmk6r22z27h6tvur/app.bsky.feed.generator/whats-hot",
      description: "Bluesky feed generators to read (at:// URIs, comma-separated); the default is Bluesky's Discover feed.",
    },
    SOCIAL_BLUESKY_ACCOUNTS: { default: "", description: "Bluesky accounts whose own posts to read (handles or DIDs, comma-separated)." },
    SOCIAL_MASTODON_SERVERS: {
      default: "",
      description: "Mastodon servers whose local public timeline to read (host names, comma-separated); only servers that show it without signing in.",
    },
    SOCIAL_POLL_MINUTES: { default: "15", description: "Minutes between reads of the sources: 5, 10, 15, 20, 30 or 60." },
    BLUESKY_URL: { default: "", description: "Base URL of the Bluesky AppView (https://public.api.bsky.app when empty)." },
  },
  methods: {
    list: read({
      description: "Latest public posts collected from the network, newest first, with author, text, link and counts. `limit` default 50 (the recent ones), max 200. The answer says whether the collection is `stale` (the last read failed, or none has worked for two intervals), its `last_success` and the last read's `error`.",
      args: T.Object({ limit: T.Optional(T.Integer({ minimum: 1, maximum: 200, description: "Posts, default 50, max 200." })) }),
      access: "public",
      untrusted: true,
      // Reads the sources itself when it holds nothing yet.
      openWorld: true,
      async run(args, ctx) {
        // Reads the sources when nothing is held yet, unless a round failed recently.
        const holdsAny = !!(await ctx.db.select({ uri: posts.uri }).from(posts).limit(1).get());
        await warm(ctx, interval(ctx), () => holdsAny, collect);
        const list = await ctx.db.select().from(posts).orderBy(desc(posts.created)).limit(args.limit ?? 50).all();
        return { posts: list.map(shape), count: list.length, as_of: await asOf(ctx), ...(await freshness(ctx, interval(ctx))) };
      },
    }),
    search: read({
      description: "Searches the public posts held on this instance (collected from the network), best match first. Nothing is searched on the networks themselves. `limit` default 20, max 100.",
      args: T.Object({
        query: T.String({ minLength: 1, maxLength: 200, description: "Words to find." }),
        limit: T.Optional(T.Integer({ minimum: 1, maximum: 100, description: "Posts, default 20, max 100." })),
      }),
      access: "public",
      untrusted: true,
      async run({ query, limit }, ctx) {
        if (!query.trim()) throw invalid("query", "query must not be blank");
        const hits = await ctx.index.search({ query, kind: "post", owner: "public", limit: limit ?? 20 });
        const rows = hits.length ? new Map((await ctx.db.select().from(posts).where(inArray(posts.uri, hits.map((h) => h.ref))).all()).map((r) => [r.uri, r])) : new Map<string, Row>();
        const found = hits.flatMap((h) => rows.get(h.ref) ?? []);
        return { query, posts: found.map(shape), count: found.length, as_of: await asOf(ctx), ...(await freshness(ctx, interval(ctx))) };
      },
    }),
  },
  async start(ctx) {
    await pollOnSchedule(ctx, interval(ctx), (fctx) => collect(fctx));
  },
});
