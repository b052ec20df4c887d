// Collectors (news, video, social) whose providers fail: the answer says the
// collection is stale, when it last worked and why it fails, and a request
// after a failed round does not ask the provider again until the back-off
// has passed.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { settle } from "../../core/upstream/index.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { json, recorded, startFixture } from "../upstream/fixture-server.ts";

const CHANNEL = "UCYO_jab_esuFRV4b17AJtAw";
const provider = startFixture({
  "/feed.xml": () => new Response(recorded("rss", "nasa.xml"), { headers: { "content-type": "application/rss+xml; charset=UTF-8" } }),
  "/feeds/videos.xml": () => new Response(recorded("youtube", `${CHANNEL}.xml`), { headers: { "content-type": "text/xml; charset=UTF-8" } }),
  "/xrpc/app.bsky.feed.getFeed": () => json(recorded("bluesky", "getFeed-whats-hot.json")),
});

/** A loopback port nothing listens on: a connection to it is refused at once. */
function closedPort(): number {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = s.port!;
  s.stop(true);
  return port;
}

function settings(base: string) {
  const dir = mkdtempSync(join(tmpdir(), "hearth-collectors-"));
  const feeds = join(dir, "feeds.json");
  writeFileSync(feeds, JSON.stringify({ feeds: [{ topic: "science", name: "NASA", url: `${base}/feed.xml` }] }));
  const channels = join(dir, "channels.json");
  writeFileSync(channels, JSON.stringify({ channels: [{ id: CHANNEL, name: "3Blue1Brown" }] }));
  return { NEWS_FEEDS_FILE: feeds, VIDEO_CHANNELS_FILE: channels, YOUTUBE_URL: base, BLUESKY_URL: base, SOCIAL_MASTODON_SERVERS: "", UPSTREAM_RETRY_MS: "1" };
}

const lists = [
  { path: "news/list", held: "items", route: "/feed.xml", source: "NASA" },
  { path: "video/list", held: "videos", route: "/feeds/videos.xml", source: "3Blue1Brown: YouTube" },
  { path: "social/list", held: "posts", route: "/xrpc/app.bsky.feed.getFeed", source: "Bluesky public AppView" },
] as const;

const clock = new TestClock(new Date("2026-11-21T10:07:00Z").getTime());
let offline: Hearth;
let flaky: Hearth;
beforeAll(async () => {
  offline = await startHearth({ clock, env: settings(`http://127.0.0.1:${closedPort()}`) });
  flaky = await startHearth({ clock, env: settings(provider.url) });
});
afterAll(async () => {
  for (const h of [offline, flaky]) {
    await settle(h.rt);
    await h.stop();
  }
  provider.stop();
});

describe("with no network", () => {
  for (const l of lists)
    test(`${l.path} says it has never collected anything and names the provider that cannot be reached`, async () => {
      const r = await offline.call(l.path, {});
      expect(r.status).toBe(200);
      expect(r.body.result[l.held]).toEqual([]);
      expect(r.body.result).toMatchObject({ stale: true, last_success: null });
      expect(r.body.result.error).toStartWith("no source answered: ");
      expect(r.body.result.error).toContain("could not be reached");
      expect(r.body.result.error).toContain(l.path === "news/list" ? "NASA: 127.0.0.1:" : l.source);
    });
});

describe("a provider that fails, then recovers", () => {
  test("each list asks once, backs off, asks again after the back-off, and says when it last worked", async () => {
    provider.fail = "503";
    for (const l of lists) {
      const first = await flaky.call(l.path, {});
      expect(first.status).toBe(200);
      expect(first.body.result).toMatchObject({ [l.held]: [], stale: true, last_success: null });
      expect(first.body.result.error).toContain(l.source);
      const asked = provider.hits(l.route);
      expect(asked).toBeGreaterThan(0);
      // Right after a failed round, a request answers from what is held without asking.
      const again = await flaky.call(l.path, {});
      expect(again.body.result).toMatchObject({ [l.held]: [], stale: true, last_success: null, error: first.body.result.error });
      expect(provider.hits(l.route)).toBe(asked);
    }
    // A minute on, each asks once more; the next wait is two minutes.
    clock.advance(60_000);
    const asked = new Map<string, number>();
    for (const l of lists) {
      const before = provider.hits(l.route);
      expect((await flaky.call(l.path, {})).body.result.stale).toBe(true);
      expect(provider.hits(l.route)).toBeGreaterThan(before);
      asked.set(l.route, provider.hits(l.route));
    }
    clock.advance(60_000);
    for (const l of lists) {
      expect((await flaky.call(l.path, {})).body.result.error).toContain(l.source);
      expect(provider.hits(l.route)).toBe(asked.get(l.route)!);
    }
    // Recovered: the next request past the back-off collects, and the answer is fresh.
    provider.fail = null;
    clock.advance(60_000);
    for (const l of lists) {
      const r = await flaky.call(l.path, {});
      expect(r.body.result[l.held].length).toBeGreaterThan(0);
      expect(r.body.result).toMatchObject({ stale: false, last_success: clock.now().toISOString(), error: null });
    }
  });
});
