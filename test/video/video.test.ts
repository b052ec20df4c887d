import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { schedulerOf } from "../../core/scheduler/index.ts";
import { settle } from "../../core/upstream/index.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { recorded, startFixture } from "../upstream/fixture-server.ts";

const GONE = "UCaaaaaaaaaaaaaaaaaaaaaa";
const xml = (s: string) => new Response(s, { headers: { "content-type": "text/xml; charset=UTF-8" } });
const bodies: Record<string, string> = {
  "UCYO_jab_esuFRV4b17AJtAw": recorded("youtube", "UCYO_jab_esuFRV4b17AJtAw.xml"),
  "UCHnyfMqiRRG1u-2MsSQLbXA": recorded("youtube", "UCHnyfMqiRRG1u-2MsSQLbXA.xml"),
};
const yt = startFixture({
  "/feeds/videos.xml": (q) => {
    const body = bodies[q.get("channel_id") ?? ""];
    // YouTube answers a feed for a channel that no longer exists with 404.
    return body ? xml(body) : new Response("", { status: 404, headers: { "content-type": "text/html; charset=utf-8" } });
  },
});

const dir = mkdtempSync(join(tmpdir(), "hearth-video-"));
const channelsFile = join(dir, "channels.json");
writeFileSync(
  channelsFile,
  JSON.stringify({
    channels: [
      { id: "UCYO_jab_esuFRV4b17AJtAw", name: "3Blue1Brown" },
      { id: "UCHnyfMqiRRG1u-2MsSQLbXA", name: "Veritasium" },
      { id: GONE, name: "A channel since deleted" },
    ],
  }),
);

const clock = new TestClock(new Date("2026-11-21T10:05:00Z").getTime());
let h: Hearth;
beforeAll(async () => {
  h = await startHearth({ clock, env: { HEARTH_COLLECTORS: "video", VIDEO_CHANNELS_FILE: channelsFile, VIDEO_POLL_MINUTES: "30", YOUTUBE_URL: yt.url, UPSTREAM_RETRY_MS: "1" } });
});
afterAll(async () => {
  await settle(h.rt);
  await h.stop();
  yt.stop();
});

describe("video", () => {
  test("the channels' feeds are read at the scheduled half hour, keyless, and every video archived", async () => {
    expect(yt.hits("/feeds/videos.xml")).toBe(0);
    clock.set("2026-11-21T10:30:00Z");
    const report = await schedulerOf(h.rt).runDue();
    expect(report.fired.filter((f) => f.service === "video").map((f) => f.status)).toEqual(["done"]);
    const asked = yt.seen.map((s) => s.query.get("channel_id")).sort();
    expect(asked).toEqual([GONE, "UCHnyfMqiRRG1u-2MsSQLbXA", "UCYO_jab_esuFRV4b17AJtAw"].sort());
    expect(yt.seen.every((s) => !s.query.has("key"))).toBe(true);
    const archived = await h.rows<{ ref: string; owner: null }>("SELECT ref, owner FROM search_index WHERE kind = 'video'");
    expect(archived.map((a) => a.ref).sort()).toEqual(["Qm7k1aT9xZc", "e9Wk2sLqB4M", "pR3v8Lw2Hd0", "tY0nQ5aB7cE"].sort());
    expect(archived.every((a) => a.owner === null)).toBe(true);
  });

  test("list gives the latest across channels, newest first, with views and thumbnails", async () => {
    const r = await h.call("video/list", {});
    expect(r.status).toBe(200);
    const v = r.body.result.videos;
    expect(v.map((x: any) => x.id)).toEqual(["e9Wk2sLqB4M", "Qm7k1aT9xZc", "pR3v8Lw2Hd0", "tY0nQ5aB7cE"]);
    expect(v[0]).toMatchObject({
      title: "Why the longest eclipse of the century will happen in 2027",
      channel: "Veritasium",
      url: "https://www.youtube.com/watch?v=e9Wk2sLqB4M",
      published: "2026-11-20T14:02:51.000Z",
      thumbnail: "https://i2.ytimg.com/vi/e9Wk2sLqB4M/hqdefault.jpg",
      views: 2210334,
    });
    expect(v[3].title).toBe("The surprising physics of a falling slinky & other toys");
    expect((await h.call("video/list", { limit: 2 })).body.result.videos).toHaveLength(2);
    expect((await h.call("video/list", { limit: 201 })).status).toBe(400);
  });

  test("search finds within the curated channels by words, URL or id", async () => {
    const words = await h.call("video/search", { query: "fourier" });
    expect(words.body.result.followed).toBe(true);
    expect(words.body.result.videos.map((x: any) => x.id)).toEqual(["Qm7k1aT9xZc"]);
    const byChannel = await h.call("video/search", { query: "veritasium" });
    expect(byChannel.body.result.videos.map((x: any) => x.id).sort()).toEqual(["e9Wk2sLqB4M", "tY0nQ5aB7cE"]);
    const byUrl = await h.call("video/search", { query: "https://youtu.be/pR3v8Lw2Hd0?si=abc" });
    expect(byUrl.body.result.videos[0].title).toBe("The hardest problem on the hardest test");
  });

  test("a miss says the video is not followed here and names the channels that are", async () => {
    const r = await h.call("video/search", { query: "cooking pasta" });
    expect(r.status).toBe(200);
    expect(r.body.result.followed).toBe(false);
    expect(r.body.result.videos).toEqual([]);
    expect(r.body.result.note).toContain("not followed here");
    expect(r.body.result.note).toContain("3Blue1Brown, Veritasium");
    const url = await h.call("video/search", { query: "https://www.youtube.com/watch?v=dQw4w9WgXcQ" });
    expect(url.body.result.note).toStartWith("That video is not followed here");
  });

  test("a new upload appears at the next scheduled read", async () => {
    bodies["UCYO_jab_esuFRV4b17AJtAw"] = bodies["UCYO_jab_esuFRV4b17AJtAw"].replace(
      " <entry>",
      ` <entry>
  <id>yt:video:Zz9Yy8Xx7Ww</id>
  <yt:videoId>Zz9Yy8Xx7Ww</yt:videoId>
  <yt:channelId>UCYO_jab_esuFRV4b17AJtAw</yt:channelId>
  <title>Topology of the eclipse shadow</title>
  <link rel="alternate" href="https://www.youtube.com/watch?v=Zz9Yy8Xx7Ww"/>
  <published>2026-11-21T10:40:00+00:00</published>
  <updated>2026-11-21T10:40:00+00:00</updated>
  <media:group>
   <media:title>Topology of the eclipse shadow</media:title>
   <media:thumbnail url="https://i2.ytimg.com/vi/Zz9Yy8Xx7Ww/hqdefault.jpg" width="480" height="360"/>
   <media:description>Why the umbra is an ellipse.</media:description>
   <media:community><media:statistics views="0"/></media:community>
  </media:group>
 </entry>
 <entry>`,
    );
    clock.set("2026-11-21T11:00:00Z");
    await schedulerOf(h.rt).runDue();
    const r = await h.call("video/list", { limit: 1 });
    expect(r.body.result.videos[0]).toMatchObject({ id: "Zz9Yy8Xx7Ww", channel: "3Blue1Brown", views: 0 });
  });
});
