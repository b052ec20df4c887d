import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { schedulerOf } from "../../core/scheduler/index.ts";
import { settle } from "../../core/upstream/index.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { json, recorded, startFixture } from "../upstream/fixture-server.ts";

const DISCOVER = "at://did:plc:z72i7hdynmk6r22z27h6tvur/app.bsky.feed.generator/whats-hot";
let timelineOpen = true;
const net = startFixture({
  "/xrpc/app.bsky.feed.getFeed": (q) =>
    q.get("feed") === DISCOVER
      ? json(recorded("bluesky", "getFeed-whats-hot.json"))
      : json('{"error":"UnknownFeed","message":"Unknown feed"}', 400),
  "/api/v1/timelines/public": (q) =>
    timelineOpen && q.get("local") === "true"
      ? json(recorded("mastodon", "timelines-public-local.json"))
      : json('{"error":"This method requires an authenticated user"}', 422),
});

const clock = new TestClock(new Date("2026-11-21T10:05:00Z").getTime());
let h: Hearth;
beforeAll(async () => {
  h = await startHearth({
    clock,
    env: { HEARTH_COLLECTORS: "social", BLUESKY_URL: net.url, SOCIAL_MASTODON_SERVERS: net.url, SOCIAL_POLL_MINUTES: "15", UPSTREAM_RETRY_MS: "1" },
  });
});
afterAll(async () => {
  await settle(h.rt);
  await h.stop();
  net.stop();
});

describe("social", () => {
  test("Bluesky's Discover feed and a Mastodon server's local timeline are read at the scheduled quarter hour, keyless", async () => {
    clock.set("2026-11-21T10:15:00Z");
    const report = await schedulerOf(h.rt).runDue();
    expect(report.fired.filter((f) => f.service === "social").map((f) => f.status)).toEqual(["done"]);
    const feed = net.last("/xrpc/app.bsky.feed.getFeed")!;
    expect(feed.query.get("feed")).toBe(DISCOVER);
    expect(feed.headers.get("authorization")).toBeNull();
    expect(net.last("/api/v1/timelines/public")!.headers.get("authorization")).toBeNull();
  });

  test("list gives the latest posts, newest first; labelled and content-warned posts are left out", async () => {
    const r = await h.call("social/list", {});
    expect(r.status).toBe(200);
    const p = r.body.result.posts;
    expect(p.map((x: any) => x.author)).toEqual(["skyandtelescope.org", `kara@${new URL(net.url).host}`, "atproto.com"]);
    expect(p[0]).toMatchObject({
      network: "bluesky",
      name: "Sky & Telescope",
      url: "https://bsky.app/profile/skyandtelescope.org/post/3mbq2xk7ryc2w",
      created: "2026-11-21T09:58:41.512Z",
      likes: 611,
      reposts: 88,
      replies: 14,
    });
    expect(p[1]).toMatchObject({
      network: "mastodon",
      name: "Kara Ng",
      text: "Released v2.0 of our tiny #Rust RSS reader: conditional requests, so feeds that have not changed cost their servers a 304 & nothing more.",
      url: "https://fosstodon.example/@kara/115584012233445566",
    });
    const texts = p.map((x: any) => x.text).join(" ");
    expect(texts).not.toContain("adult-content");
    expect(texts).not.toContain("lighthouse");
    expect((await h.call("social/list", { limit: 1 })).body.result.posts).toHaveLength(1);
  });

  test("search covers only the posts held here", async () => {
    const r = await h.call("social/search", { query: "meteor" });
    expect(r.status).toBe(200);
    expect(r.body.result.posts.map((x: any) => x.author)).toEqual(["skyandtelescope.org"]);
    const author = await h.call("social/search", { query: "telescope" });
    expect(author.body.result.count).toBe(1);
    const before = net.seen.length;
    const none = await h.call("social/search", { query: "volcano" });
    expect(none.body.result.posts).toEqual([]);
    // Searching never reaches out to the networks.
    expect(net.seen.length).toBe(before);
    expect((await h.call("social/search", { query: "x", limit: 101 })).status).toBe(400);
  });

  test("a server that closes its timeline to strangers is reported in the log and the rest still arrive", async () => {
    timelineOpen = false;
    clock.set("2026-11-21T10:30:00Z");
    const report = await schedulerOf(h.rt).runDue();
    expect(report.fired.filter((f) => f.service === "social").map((f) => f.status)).toEqual(["done"]);
    const history = (await h.row<{ detail: string }>("SELECT detail FROM schedule_firings WHERE service = 'social' ORDER BY due DESC LIMIT 1"))!;
    expect(JSON.parse(history.detail).failed[0].error).toContain("does not show its public timeline without signing in (HTTP 422)");
    expect((await h.call("social/list", {})).body.result.count).toBe(3);
  });
});
