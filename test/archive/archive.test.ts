import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { settle } from "../../core/upstream/index.ts";
import { indexFor } from "../../core/db/fts.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { json, recorded, startFixture } from "../upstream/fixture-server.ts";

// Every kind is collected by its own service through the real stack: news
// and videos from their feeds, a market snapshot from a conversion, a
// reflection from prayer, posts from the blog.
const providers = startFixture({
  "/feed.xml": () => new Response(recorded("rss", "nasa.xml"), { headers: { "content-type": "application/rss+xml" } }),
  "/feeds/videos.xml": () => new Response(recorded("youtube", "UCHnyfMqiRRG1u-2MsSQLbXA.xml"), { headers: { "content-type": "text/xml" } }),
  "/v1/latest": () => json(recorded("frankfurter", "latest.json")),
  "/hadith-api/editions/eng-bukhari.min.json": () => json(recorded("hadith-api", "eng-bukhari.min.json")),
  "/reminder/names/data/names.json": () => json(recorded("asim-reminder", "names.json")),
});
const dir = mkdtempSync(join(tmpdir(), "hearth-archive-"));
writeFileSync(join(dir, "feeds.json"), JSON.stringify({ feeds: [{ topic: "science", name: "NASA", url: `${providers.url}/feed.xml` }] }));
writeFileSync(join(dir, "channels.json"), JSON.stringify({ channels: [{ id: "UCHnyfMqiRRG1u-2MsSQLbXA", name: "Veritasium" }] }));

const clock = new TestClock(new Date("2026-11-21T10:05:00Z").getTime());
let h: Hearth;
let alice: string;
let publicPost: string;
let privatePost: string;

beforeAll(async () => {
  h = await startHearth({
    clock,
    env: {
      NEWS_FEEDS_FILE: join(dir, "feeds.json"),
      VIDEO_CHANNELS_FILE: join(dir, "channels.json"),
      YOUTUBE_URL: providers.url,
      FRANKFURTER_URL: providers.url,
      PRAYER_HADITH_URL: `${providers.url}/hadith-api`,
      PRAYER_NAMES_URL: `${providers.url}/reminder`,
      UPSTREAM_RETRY_MS: "1",
    },
  });
  alice = await h.token("alice");
  expect((await h.call("news/list", {})).status).toBe(200);
  expect((await h.call("video/list", {})).status).toBe(200);
  expect((await h.call("markets/convert", { amount: 10, from: "EUR", to: "GBP" })).status).toBe(200);
  expect((await h.call("prayer/reflection", {})).status).toBe(200);
  const pub = await h.call(
    "blog/create",
    { title: "Watching the eclipse from Luxor", content: "We have booked a rooftop in Luxor for the August 2027 eclipse, six minutes of totality if the sky is clear.", tags: "travel" },
    { token: alice },
  );
  publicPost = pub.body.result.id;
  const priv = await h.call(
    "blog/create",
    { title: "Private eclipse budget", content: "The eclipse trip budget: flights, rooftop, glasses; this stays between us and is not for the archive.", private: true },
    { token: alice },
  );
  privatePost = priv.body.result.id;
  await settle(h.rt);
  // A private record of a collected kind, as a service keeping one for its owner would write it.
  const owner = (await h.row<{ id: string }>("SELECT id FROM accounts WHERE username = 'alice'"))!.id;
  await indexFor(h.rt.store, "markets", false).put({ kind: "market", ref: "watchlist", owner, title: "Private eclipse watchlist", body: "eclipse stocks alice follows" });
});
afterAll(async () => {
  await settle(h.rt);
  await h.stop();
  providers.stop();
});

describe("archive/list", () => {
  test("without kind: a summary of every kind with counts and the newest of each, private records left out", async () => {
    const r = await h.call("archive/list", {});
    expect(r.status).toBe(200);
    const byKind = Object.fromEntries(r.body.result.kinds.map((k: any) => [k.kind, k]));
    expect(Object.keys(byKind)).toEqual(["news", "video", "market", "blog", "prayer"]);
    expect(byKind.news.count).toBe(2);
    expect(byKind.video.count).toBe(2);
    expect(byKind.market.count).toBe(1);
    expect(byKind.blog).toEqual({ kind: "blog", count: 1, newest: "Watching the eclipse from Luxor" });
    expect(byKind.prayer.count).toBe(1);
    expect(byKind.market.newest).toMatch(/^ECB reference rates \d{4}-\d{2}-\d{2}$/);
    expect(r.body.result.total).toBe(7);
  });

  test("with kind: the most recent entries of that kind, with where to read them", async () => {
    const news = await h.call("archive/list", { kind: "news" });
    expect(news.body.result.entries.map((e: any) => e.title)).toEqual(
      expect.arrayContaining(["NASA Maps the Path of the 2027 Eclipse Across Three Continents", "Artemis III Crew Completes Lunar Surface Suit Tests"]),
    );
    expect(news.body.result.entries[0].link).toContain("/api/v1/news/read?id=");
    const video = await h.call("archive/list", { kind: "video", limit: 1 });
    expect(video.body.result.entries).toHaveLength(1);
    expect(video.body.result.entries[0].link).toMatch(/^https:\/\/www\.youtube\.com\/watch\?v=/);
    const blog = await h.call("archive/list", { kind: "blog" });
    expect(blog.body.result.entries.map((e: any) => e.ref)).toEqual([publicPost]);
    const prayer = await h.call("archive/list", { kind: "prayer" });
    expect(prayer.body.result.entries[0].when).toBe("2026-11-21");
    const market = await h.call("archive/list", { kind: "MARKET" });
    expect(market.body.result.entries.map((e: any) => e.ref)).not.toContain("watchlist");
  });

  test("limit stops at 100 (101 is refused) and kind must be a known one", async () => {
    const over = await h.call("archive/list", { kind: "news", limit: 101 });
    expect(over.status).toBe(400);
    expect(over.body.error.field).toBe("limit");
    expect((await h.call("archive/list", { kind: "news", limit: 100 })).status).toBe(200);
    const bad = await h.call("archive/list", { kind: "notes" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe("kind");
    expect(bad.body.error.message).toContain("news, video, market, blog, prayer");
  });
});

describe("archive/search", () => {
  test("searches across every kind at once", async () => {
    const r = await h.call("archive/search", { query: "eclipse" });
    expect(r.status).toBe(200);
    const kinds = new Set(r.body.result.entries.map((e: any) => e.kind));
    expect(kinds).toEqual(new Set(["news", "video", "blog"]));
    const titles = r.body.result.entries.map((e: any) => e.title);
    expect(titles).toContain("Watching the eclipse from Luxor");
    expect(titles).not.toContain("Private eclipse budget");
    expect(titles).not.toContain("Private eclipse watchlist");
  });

  test("kind narrows; market and prayer entries are found by their words", async () => {
    const videos = await h.call("archive/search", { query: "eclipse", kind: "video" });
    expect(videos.body.result.entries.map((e: any) => e.kind)).toEqual(["video"]);
    const gbp = await h.call("archive/search", { query: "GBP", kind: "market" });
    expect(gbp.body.result.entries).toHaveLength(1);
    expect(gbp.body.result.entries[0].text).toContain("GBP");
    const reflection = (await h.call("archive/list", { kind: "prayer" })).body.result.entries[0];
    const word = reflection.title.split(/[\s;:]+/).filter((w: string) => /^[A-Za-z]{4,}$/.test(w)).pop();
    const prayer = await h.call("archive/search", { query: word, kind: "prayer" });
    expect(prayer.body.result.entries.map((e: any) => e.ref)).toEqual([reflection.ref]);
    const blog = await h.call("archive/search", { query: "rooftop luxor", kind: "blog" });
    expect(blog.body.result.entries.map((e: any) => e.ref)).toEqual([publicPost]);
    const budget = await h.call("archive/search", { query: "budget" }, { token: alice });
    // Not even its author sees a private post here.
    expect(budget.body.result.entries.map((e: any) => e.ref)).not.toContain(privatePost);
    expect(budget.body.result.count).toBe(0);
  });

  test("limit and kind are checked", async () => {
    const two = await h.call("archive/search", { query: "eclipse", limit: 2 });
    expect(two.body.result.entries).toHaveLength(2);
    expect((await h.call("archive/search", { query: "eclipse", limit: 101 })).status).toBe(400);
    expect((await h.call("archive/search", { query: "eclipse", kind: "post" })).body.error.field).toBe("kind");
  });
});

describe("blog posts in the archive", () => {
  // The archive finds posts in the shared index, where the blog files its public ones: it reads no table of the blog's.
  test("an edit is searchable, a deleted post is gone, and a public post from before the blog indexed them is found after a start", async () => {
    const post = (await h.call("blog/create", { title: "Night trains", content: "Sleeper trains across the Alps are back, with couchettes from Zurich to Vienna every night." }, { token: alice })).body.result.id;
    expect((await h.call("blog/update", { id: post, content: "Sleeper trains across the Alps are back: the Nightjet leaves Zurich for Vienna every night." }, { token: alice })).status).toBe(200);
    expect((await h.call("archive/search", { query: "nightjet", kind: "blog" })).body.result.entries.map((e: any) => e.ref)).toEqual([post]);
    expect((await h.call("blog/delete", { id: post }, { token: alice })).status).toBe(200);
    expect((await h.call("archive/search", { query: "sleeper", kind: "blog" })).body.result.entries).toEqual([]);

    const owner = (await h.row<{ id: string }>("SELECT id FROM accounts WHERE username = 'alice'"))!.id;
    await h.exec(
      "INSERT INTO blog_posts (id, author, author_name, title, content, tags, private, created, updated) VALUES ('older', ?, 'alice', 'An older post', 'Written before public posts were in the index: the harbour at dawn.', '', 0, 1, 1)",
      owner,
    );
    expect((await h.call("archive/search", { query: "harbour", kind: "blog" })).body.result.entries).toEqual([]);
    await h.rt.registry.plugins.get("blog")!.def.start!(h.rt.instanceCtx("blog"));
    expect((await h.call("archive/search", { query: "harbour", kind: "blog" })).body.result.entries.map((e: any) => e.ref)).toEqual(["older"]);
    expect((await h.call("archive/list", {})).body.result.kinds.find((k: any) => k.kind === "blog").count).toBe(2);
  });
});
