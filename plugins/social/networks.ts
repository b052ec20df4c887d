// Where public posts come from, both keyless:
//
// - Bluesky's public AppView (public.api.bsky.app) serves feeds and account
//   timelines to anyone, no account or key, under the same lexicon the apps
//   use (app.bsky.feed.getFeed, app.bsky.feed.getAuthorFeed). It is the
//   reliable default. The Jetstream firehose would carry every post on the
//   network to this instance just to keep a few; polling a feed asks for
//   only what is shown.
// - Mastodon's /api/v1/timelines/public on servers the operator names. Off
//   by default: each server decides whether its timeline is readable without
//   signing in, and several large ones (mastodon.social among them) no
//   longer allow it, so it is only reliable for servers known to.
import { type Ctx, type CollectionRound, defineProvider, decodeText, guardedFetch, userAgent, plainFromHtml } from "hearth";

defineProvider({
  name: "BLUESKY",
  label: "Bluesky public AppView",
  url: "https://public.api.bsky.app",
  concurrency: 2,
  // Its published limit is 3000 requests per five minutes per address.
  rate: { count: 10, perMs: 1000 },
});

export interface Post {
  uri: string;
  network: "bluesky" | "mastodon";
  source: string;
  handle: string;
  name: string | null;
  text: string;
  url: string;
  created: number;
  likes: number | null;
  reposts: number | null;
  replies: number | null;
}

/** Labels that keep a post off a public instance's page. */
const HIDDEN_LABELS = new Set(["porn", "sexual", "nudity", "graphic-media", "gore", "!hide", "!warn"]);
const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : null);

/** A feed page ({feed: [{post, reason?}], cursor}) from getFeed or getAuthorFeed. */
export function blueskyPosts(body: any, source: string): Post[] {
  if (!body || !Array.isArray(body.feed)) throw new Error("no feed array");
  const out: Post[] = [];
  for (const entry of body.feed) {
    const p = entry?.post;
    const rec = p?.record;
    if (!p || typeof p.uri !== "string" || !rec || rec.$type !== "app.bsky.feed.post" || typeof rec.text !== "string") continue;
    if ((p.labels ?? []).some((l: any) => HIDDEN_LABELS.has(l?.val)) || (p.author?.labels ?? []).some((l: any) => HIDDEN_LABELS.has(l?.val))) continue;
    const handle = String(p.author?.handle ?? "");
    const rkey = p.uri.split("/").pop();
    const created = Date.parse(rec.createdAt ?? p.indexedAt);
    if (!handle || !rkey || !Number.isFinite(created)) continue;
    out.push({
      uri: p.uri,
      network: "bluesky",
      source,
      handle,
      name: typeof p.author?.displayName === "string" && p.author.displayName.trim() ? p.author.displayName.trim() : null,
      text: rec.text,
      url: `https://bsky.app/profile/${handle}/post/${rkey}`,
      created,
      likes: num(p.likeCount),
      reposts: num(p.repostCount),
      replies: num(p.replyCount),
    });
  }
  return out;
}

/** A public timeline: an array of Status entities; a boost is read as the post it boosts. */
export function mastodonPosts(body: any, server: string): Post[] {
  if (!Array.isArray(body)) throw new Error("not an array of statuses");
  const host = new URL(server).host;
  const out: Post[] = [];
  for (const outer of body) {
    const s = outer?.reblog ?? outer;
    if (!s || typeof s.uri !== "string" || s.visibility !== "public") continue;
    // Content behind a warning stays behind it.
    if (s.sensitive || (typeof s.spoiler_text === "string" && s.spoiler_text.trim())) continue;
    const created = Date.parse(s.created_at);
    const acct = String(s.account?.acct ?? "");
    if (!acct || !Number.isFinite(created)) continue;
    const text = plainFromHtml(String(s.content ?? ""));
    if (!text) continue;
    out.push({
      uri: s.uri,
      network: "mastodon",
      source: host,
      handle: acct.includes("@") ? acct : `${acct}@${host}`,
      name: typeof s.account?.display_name === "string" && s.account.display_name.trim() ? s.account.display_name.trim() : null,
      text,
      url: typeof s.url === "string" ? s.url : s.uri,
      created,
      likes: num(s.favourites_count),
      reposts: num(s.reblogs_count),
      replies: num(s.replies_count),
    });
  }
  return out;
}

export function listSetting(raw: string | undefined): string[] {
  return (raw ?? "")
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Posts read in one round, with how many sources were asked and which failed. */
export interface Read extends CollectionRound {
  posts: Post[];
}

export async function readBluesky(ctx: Ctx, ttl: number): Promise<Read> {
  const feeds = listSetting(ctx.config.SOCIAL_BLUESKY_FEEDS);
  const actors = listSetting(ctx.config.SOCIAL_BLUESKY_ACCOUNTS);
  const jobs = [
    ...feeds.map((feed) => ({ what: feed, path: "/xrpc/app.bsky.feed.getFeed", query: { feed, limit: 50 } })),
    ...actors.map((actor) => ({ what: actor, path: "/xrpc/app.bsky.feed.getAuthorFeed", query: { actor, limit: 50, filter: "posts_no_replies" } })),
  ];
  const settled = await Promise.allSettled(
    jobs.map((j) => ctx.http.get("BLUESKY", j.path, { query: j.query, ttl, revalidate: 0, parse: (b) => blueskyPosts(b, j.what) })),
  );
  const posts: Post[] = [];
  const failed: Read["failed"] = [];
  settled.forEach((s, i) => {
    if (s.status === "fulfilled") {
      if (!s.value.cached) posts.push(...s.value.data);
    } else failed.push({ source: jobs[i].what, error: String((s.reason as Error)?.message ?? s.reason) });
  });
  return { posts, sources: jobs.length, failed };
}

export async function readMastodon(ctx: Ctx): Promise<Read> {
  const servers = listSetting(ctx.config.SOCIAL_MASTODON_SERVERS).map((s) => (/^https?:\/\//.test(s) ? s : `https://${s}`).replace(/\/+$/, ""));
  const posts: Post[] = [];
  const failed: Read["failed"] = [];
  await Promise.all(
    servers.map(async (server) => {
      try {
        // Servers are the operator's own choice, like feeds; the answer is still size- and time-capped.
        const res = await guardedFetch(`${server}/api/v1/timelines/public?local=true&limit=40`, {
          field: "SOCIAL_MASTODON_SERVERS",
          trusted: true,
          maxBytes: 5_000_000,
          timeoutMs: 15_000,
          accept: [401, 422],
          headers: { "user-agent": userAgent(ctx.config), accept: "application/json" },
        });
        if (res.status !== 200) throw new Error(`${new URL(server).host} does not show its public timeline without signing in (HTTP ${res.status})`);
        posts.push(...mastodonPosts(JSON.parse(decodeText(res.body, res.headers["content-type"])), server));
      } catch (e) {
        failed.push({ source: server, error: String((e as Error)?.message ?? e) });
      }
    }),
  );
  return { posts, sources: servers.length, failed };
}
