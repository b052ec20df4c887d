import { Type as T } from "@sinclair/typebox";
import { desc, eq, inArray, max } from "drizzle-orm";
import { invalid, notFound, definePlugin, read, type Ctx, fetchReadable, collectRound, freshness, mayCollect, pollMinutes, pollOnSchedule, warm } from "hearth";
import { followedFeeds, topicsOf } from "./feeds.ts";
import { pollFeeds } from "./poll.ts";
import { articles, feeds, items } from "./schema.ts";
import { newsCard } from "./card.ts";

type Item = typeof items.$inferSelect;

const shape = (i: Item) => ({
  id: i.id,
  title: i.title,
  summary: i.summary,
  url: i.url,
  source: i.source,
  topic: i.topic,
  published: new Date(i.published).toISOString(),
});

/** Takes from each topic in turn, newest first within each, so one busy topic cannot fill the list. */
function balanced(byTopic: Item[][], limit: number): Item[] {
  const out: Item[] = [];
  const seen = new Set<string>();
  for (let round = 0; out.length < limit; round++) {
    let any = false;
    for (const list of byTopic) {
      const it = list[round];
      if (!it) continue;
      any = true;
      // The same story syndicated to two feeds is shown once.
      const key = it.url;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(it);
      if (out.length >= limit) break;
    }
    if (!any) break;
  }
  return out;
}

async function lastPolled(ctx: Ctx): Promise<string | null> {
  const row = await ctx.db.select({ at: max(feeds.polled) }).from(feeds).get();
  return row?.at ? new Date(row.at).toISOString() : null;
}

const interval = (ctx: Ctx) => pollMinutes(ctx.config.NEWS_POLL_MINUTES, 15, "NEWS_POLL_MINUTES");

const FEW = 5;
const ID = /^[0-9a-f]{16}$/;

export default definePlugin({
  name: "news",
  card: newsCard,
  description: "Headlines from followed RSS and Atom feeds across topics, polled on a schedule and kept in the archive; articles read in full.",
  needs: ["db", "index", "schedule", "writes"],
  settings: ["HEARTH_COLLECTORS", "HEARTH_CONTACT", "HEARTH_PUBLIC_URL", "WEB_FETCH_ALLOW_LOOPBACK", "WEB_FETCH_DNS", "WEB_FETCH_MAX_BYTES", "WEB_FETCH_TIMEOUT_MS"],
  config: {
    NEWS_FEEDS_FILE: { default: "", description: "JSON file of feeds to follow ({\"feeds\": [{\"topic\", \"name\", \"url\"}]}); plugins/news/feeds.json when empty." },
    NEWS_POLL_MINUTES: { default: "15", description: "Minutes between polls of the feeds: 5, 10, 15, 20, 30 or 60. Each poll asks only for what changed (ETag / Last-Modified)." },
    NEWS_TIMEOUT_MS: { default: "15000", description: "Time allowed one feed per poll, in milliseconds." },
  },
  methods: {
    list: read({
      description:
        "Recent headlines with short summaries, balanced across topics (newest of each topic in turn), from the followed feeds. `topic` narrows to one (world, uk, business, technology, science, health, sport, crypto by default); `limit` default 30, max 100. The answer says whether the collection is `stale` (the last poll failed, or none has worked for two intervals), its `last_success` and the last poll's `error`.",
      args: T.Object({
        topic: T.Optional(T.String({ minLength: 1, maxLength: 40, description: "One topic of the followed feeds." })),
        limit: T.Optional(T.Integer({ minimum: 1, maximum: 100, description: "Headlines, default 30, max 100." })),
      }),
      access: "public",
      untrusted: true,
      // Polls the feeds itself when it holds nothing yet.
      openWorld: true,
      async run(args, ctx) {
        const followed = followedFeeds(ctx.config);
        const topics = topicsOf(followed);
        const topic = args.topic?.trim().toLowerCase();
        if (topic !== undefined && !topics.includes(topic)) throw invalid("topic", `topic must be one of ${topics.join(", ")} (got ${JSON.stringify(args.topic)})`);
        const limit = args.limit ?? 30;
        // Polls now when nothing has been collected yet (a fresh instance), so the first answer is not empty.
        const holdsAny = !!(await ctx.db.select({ id: items.id }).from(items).limit(1).get());
        await warm(ctx, interval(ctx), () => holdsAny, (c) => pollFeeds(c));
        const wanted = topic ? [topic] : topics;
        const byTopic = await Promise.all(
          wanted.map((t) => ctx.db.select().from(items).where(eq(items.topic, t)).orderBy(desc(items.published), desc(items.seen)).limit(limit).all()),
        );
        const chosen = balanced(byTopic, limit);
        return { items: chosen.map(shape), count: chosen.length, topics, polled_at: await lastPolled(ctx), ...(await freshness(ctx, interval(ctx))) };
      },
    }),

    read: read({
      description:
        "One article in full, by the id news/list or news/search gave or by its URL: fetched from the publisher once, cleaned to readable text, and kept. A URL must be one of the followed feeds' articles (web/fetch reads any page).",
      args: T.Object({ id: T.String({ minLength: 1, maxLength: 4000, description: "An article id from news/list or news/search, or the article's URL." }) }),
      access: "public",
      untrusted: true,
      openWorld: true,
      async run({ id }, ctx) {
        const key = id.trim();
        let item: Item | undefined;
        if (ID.test(key)) item = await ctx.db.select().from(items).where(eq(items.id, key)).get();
        else if (/^https?:\/\//i.test(key)) item = await ctx.db.select().from(items).where(eq(items.url, key)).orderBy(desc(items.published)).get();
        else throw invalid("id", `id must be an article id from news/list (16 hex characters) or an article URL (got ${JSON.stringify(key.slice(0, 100))})`);
        if (!item)
          throw notFound(
            ID.test(key) ? `no article with id ${key}` : `${key} is not an article from the feeds followed here; web/fetch reads any page for account holders`,
          );
        const about = shape(item);
        const kept = await ctx.db.select().from(articles).where(eq(articles.url, item.url)).get();
        if (kept) return { ...about, byline: kept.byline, site: kept.site, text: kept.text, full: true, fetched_at: new Date(kept.fetched).toISOString() };
        let page;
        try {
          page = await fetchReadable(ctx, item.url, "id");
        } catch (e) {
          // Paywalls and refusals leave the feed's own summary, which is still the article's gist.
          const why = e instanceof Error ? e.message : String(e);
          return { ...about, byline: null, site: null, text: item.summary, full: false, unavailable: why };
        }
        const fetched = ctx.clock.now().getTime();
        await ctx.writes((db) =>
          db
            .insert(articles)
            .values({ url: item.url, title: page.title, byline: page.byline, site: page.site, published: page.published, text: page.text, fetched })
            .onConflictDoNothing()
            .run(),
        );
        return { ...about, byline: page.byline, site: page.site, text: page.text, full: true, fetched_at: new Date(fetched).toISOString() };
      },
    }),

    search: read({
      description:
        "Searches the headlines and summaries collected from the followed feeds; when fewer than 5 match, the feeds not asked in the last 5 minutes are polled live first and the search repeated.",
      args: T.Object({ query: T.String({ minLength: 1, maxLength: 200, description: "Words to find." }) }),
      access: "public",
      untrusted: true,
      // Polls the feeds live when few collected items match.
      openWorld: true,
      async run({ query }, ctx) {
        if (!query.trim()) throw invalid("query", "query must not be blank");
        const find = async () => {
          const hits = await ctx.index.search({ query, kind: "news", owner: "public", limit: 50 });
          if (!hits.length) return [];
          const rows = await ctx.db.select().from(items).where(inArray(items.id, hits.map((h) => h.ref))).all();
          const byId = new Map(rows.map((r) => [r.id, r]));
          return hits.flatMap((h) => {
            const r = byId.get(h.ref);
            return r ? [{ ...shape(r), snippet: h.snippet }] : [];
          });
        };
        let found = await find();
        let live = false;
        if (found.length < FEW && (await mayCollect(ctx, interval(ctx)))) {
          const report = await collectRound(ctx, (c) => pollFeeds(c, { olderThanMs: 5 * 60_000 }));
          live = report.sources > report.failed.length;
          if (report.added > 0) found = await find();
        }
        return { query, items: found, count: found.length, live, polled_at: await lastPolled(ctx), ...(await freshness(ctx, interval(ctx))) };
      },
    }),
  },

  async start(ctx) {
    followedFeeds(ctx.config);
    await pollOnSchedule(ctx, interval(ctx), (fctx) => pollFeeds(fctx));
  },
});
