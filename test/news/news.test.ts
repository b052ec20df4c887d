import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { schedulerOf } from "../../core/scheduler/index.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { recorded, startFixture } from "../upstream/fixture-server.ts";
import { sqlAll, sqlGet } from "../sql.ts";

// Each feed answers conditionally, as real publishers do: a matching
// If-None-Match or an unchanged If-Modified-Since gets 304 and no body.
const feedState = {
  bbc: { body: "", etag: '"bbc-1"' },
  verge: { body: "", modified: "Sat, 21 Nov 2026 09:30:12 GMT" },
  nasa: { body: "", etag: 'W/"nasa-1"', modified: "Fri, 20 Nov 2026 21:38:47 GMT" },
};
let articleHits = 0;

function conditional(req: Request, body: string, type: string, v: { etag?: string; modified?: string }) {
  const inm = req.headers.get("if-none-match");
  const ims = req.headers.get("if-modified-since");
  const headers: Record<string, string> = { "content-type": type };
  if (v.etag) headers.etag = v.etag;
  if (v.modified) headers["last-modified"] = v.modified;
  if ((v.etag && inm === v.etag) || (!v.etag && v.modified && ims === v.modified)) return new Response(null, { status: 304, headers });
  return new Response(body, { headers });
}

const site = startFixture({
  "/bbc/world.xml": (_q, req) => conditional(req, feedState.bbc.body, "application/xml", feedState.bbc),
  "/verge/index.xml": (_q, req) => conditional(req, feedState.verge.body, "application/atom+xml; charset=utf-8", feedState.verge),
  "/nasa/feed/": (_q, req) => conditional(req, feedState.nasa.body, "application/rss+xml; charset=UTF-8", feedState.nasa),
  "/news/articles/*": () => {
    articleHits++;
    return new Response(recorded("web", "article.html"), { headers: { "content-type": "text/html; charset=utf-8" } });
  },
});
// The BBC's article links lead to the fixture server, so articles can be read.
feedState.bbc.body = recorded("rss", "bbc-world.xml").replaceAll("https://www.bbc.com", site.url);
feedState.verge.body = recorded("atom", "verge.xml");
feedState.nasa.body = recorded("rss", "nasa.xml");

const dir = mkdtempSync(join(tmpdir(), "hearth-news-"));
const feedsFile = join(dir, "feeds.json");
writeFileSync(
  feedsFile,
  JSON.stringify({
    feeds: [
      { topic: "world", name: "BBC News: World", url: `${site.url}/bbc/world.xml` },
      { topic: "technology", name: "The Verge", url: `${site.url}/verge/index.xml` },
      { topic: "science", name: "NASA", url: `${site.url}/nasa/feed/` },
    ],
  }),
);

const clock = new TestClock(new Date("2026-11-21T10:07:00Z").getTime());
let h: Hearth;
beforeAll(async () => {
  h = await startHearth({ clock, env: { HEARTH_COLLECTORS: "news", NEWS_FEEDS_FILE: feedsFile, NEWS_POLL_MINUTES: "15", WEB_FETCH_ALLOW_LOOPBACK: "true" } });
});
afterAll(async () => {
  await h.stop();
  site.stop();
});

const at = async (iso: string) => {
  clock.set(iso);
  return schedulerOf(h.rt).runDue();
};
const feedHits = () => site.seen.filter((s) => !s.path.startsWith("/news/articles/")).length;

describe("scheduled polling", () => {
  test("nothing is fetched before the first poll is due; at the quarter hour every feed is read", async () => {
    expect(feedHits()).toBe(0);
    const report = await at("2026-11-21T10:15:00Z");
    expect(report.fired.map((f) => [f.service, f.status])).toContainEqual(["news", "done"]);
    expect(site.hits("/bbc/world.xml")).toBe(1);
    expect(site.hits("/verge/index.xml")).toBe(1);
    expect(site.hits("/nasa/feed/")).toBe(1);
    const rows = (await sqlAll(h.rt, "SELECT kind, owner, title FROM search_index WHERE service = 'news'")) as { kind: string; owner: string | null; title: string }[];
    expect(rows.length).toBe(8);
    expect(rows.every((r) => r.kind === "news" && r.owner === null)).toBe(true);
  });

  test("the next poll asks only for what changed, with the validators each feed gave", async () => {
    await at("2026-11-21T10:30:00Z");
    expect(site.last("/bbc/world.xml")!.headers.get("if-none-match")).toBe('"bbc-1"');
    expect(site.last("/verge/index.xml")!.headers.get("if-modified-since")).toBe("Sat, 21 Nov 2026 09:30:12 GMT");
    expect(site.last("/nasa/feed/")!.headers.get("if-none-match")).toBe('W/"nasa-1"');
    expect(site.last("/nasa/feed/")!.headers.get("if-modified-since")).toBe("Fri, 20 Nov 2026 21:38:47 GMT");
    const feeds = (await sqlAll(h.rt, "SELECT url, polled, changed FROM news_feeds")) as { polled: number; changed: number }[];
    expect(feeds.every((f) => f.polled === Date.parse("2026-11-21T10:30:00Z") && f.changed === Date.parse("2026-11-21T10:15:00Z"))).toBe(true);
  });

  test("a changed feed's new item arrives at the next poll and leads its topic", async () => {
    feedState.bbc.etag = '"bbc-2"';
    feedState.bbc.body = feedState.bbc.body.replace(
      "<item>",
      `<item>
            <title><![CDATA[Volcanic ash grounds flights in Sicily]]></title>
            <description><![CDATA[Catania airport closed after an overnight eruption of Etna.]]></description>
            <link>${site.url}/news/articles/c7etna2026xo</link>
            <guid isPermaLink="false">${site.url}/news/articles/c7etna2026xo#0</guid>
            <pubDate>Sat, 21 Nov 2026 10:40:00 GMT</pubDate>
        </item>
        <item>`,
    );
    // Claimed twenty seconds late, as a busy timer might: it still runs.
    await at("2026-11-21T10:45:20Z");
    const r = await h.call("news/list", { topic: "world" });
    expect(r.status).toBe(200);
    expect(r.body.result.items[0].title).toBe("Volcanic ash grounds flights in Sicily");
    expect(r.body.result.items).toHaveLength(5);
    expect(r.body.result.polled_at).toBe("2026-11-21T10:45:20.000Z");
  });
});

describe("news/list", () => {
  test("balances headlines across topics, newest of each in turn, with short summaries", async () => {
    const r = await h.call("news/list", {});
    expect(r.status).toBe(200);
    const list = r.body.result.items;
    expect(r.body.result.topics).toEqual(["world", "technology", "science"]);
    expect(list.slice(0, 3).map((i: any) => i.topic)).toEqual(["world", "technology", "science"]);
    expect(list.slice(3, 6).map((i: any) => i.topic)).toEqual(["world", "technology", "science"]);
    expect(list).toHaveLength(9);
    expect(list[1]).toMatchObject({
      title: "Framework’s new laptop mainboard runs cooler and longer",
      summary: "The upgrade kit drops into existing Framework Laptop 13 chassis and promises two more hours of battery life.",
      url: "https://www.theverge.com/news/829101/framework-laptop-13-mainboard-battery",
      source: "The Verge",
      published: "2026-11-21T09:00:00.000Z",
    });
    // HTML in a description becomes text.
    expect(list[2].summary).toStartWith("A new map shows where the Moon’s shadow will fall on Aug. 2, 2027");
    expect(list[2].summary).not.toContain("<p>");
    const four = await h.call("news/list", { limit: 4 });
    expect(four.body.result.items.map((i: any) => i.topic)).toEqual(["world", "technology", "science", "world"]);
  });

  test("topic narrows; an unknown topic or a limit over 100 is refused naming the field", async () => {
    const tech = await h.call("news/list", { topic: "technology" });
    expect(tech.body.result.items.map((i: any) => i.source)).toEqual(["The Verge", "The Verge"]);
    const bad = await h.call("news/list", { topic: "gossip" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe("topic");
    expect(bad.body.error.message).toContain("world, technology, science");
    const over = await h.call("news/list", { limit: 101 });
    expect(over.status).toBe(400);
    expect(over.body.error.field).toBe("limit");
  });
});

describe("news/read", () => {
  test("fetches the article once, cleans it, and serves the kept copy after", async () => {
    const list = (await h.call("news/list", { topic: "world" })).body.result.items;
    const eclipse = list.find((i: any) => i.title.startsWith("Spain prepares"));
    const r = await h.call("news/read", { id: eclipse.id });
    expect(r.status).toBe(200);
    expect(r.body.result.full).toBe(true);
    expect(r.body.result.text).toContain("six minutes and twenty-three seconds");
    expect(r.body.result.text).not.toContain("Subscribe");
    expect(articleHits).toBe(1);
    const byUrl = await h.call("news/read", { id: eclipse.url });
    expect(byUrl.body.result.id).toBe(eclipse.id);
    expect(byUrl.body.result.text).toBe(r.body.result.text);
    expect(articleHits).toBe(1);
  });

  test("a feed link to an internal address is never fetched; the summary is given instead", async () => {
    const list = (await h.call("news/list", { topic: "world" })).body.result.items;
    const inside = list.find((i: any) => i.url.startsWith("http://169.254.169.254"));
    const r = await h.call("news/read", { id: inside.id });
    expect(r.status).toBe(200);
    expect(r.body.result.full).toBe(false);
    expect(r.body.result.unavailable).toContain("metadata");
    expect(r.body.result.text).toBe(inside.summary);
  });

  test("an unknown id or a URL not from the feeds is 404; a malformed id is 400", async () => {
    expect((await h.call("news/read", { id: "0123456789abcdef" })).status).toBe(404);
    const other = await h.call("news/read", { id: "https://example.com/some-story" });
    expect(other.status).toBe(404);
    expect(other.body.error.message).toContain("web/fetch");
    const bad = await h.call("news/read", { id: "latest" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe("id");
  });
});

describe("news/search", () => {
  test("finds collected headlines and summaries", async () => {
    const r = await h.call("news/search", { query: "eclipse" });
    expect(r.status).toBe(200);
    const titles = r.body.result.items.map((i: any) => i.title);
    expect(titles).toContain("Spain prepares for record crowds as eclipse tourism books out Cádiz");
    expect(titles).toContain("NASA Maps the Path of the 2027 Eclipse Across Three Continents");
    // Few hits, but every feed was asked within five minutes: nothing is polled.
    expect(r.body.result.live).toBe(false);
  });

  test("with few hits the feeds are polled live and new items found", async () => {
    feedState.nasa.etag = 'W/"nasa-2"';
    feedState.nasa.modified = "Sat, 21 Nov 2026 10:50:00 GMT";
    feedState.nasa.body = feedState.nasa.body.replace(
      "<item>",
      `<item>
		<title>Europa Clipper Returns First Images of Jupiter's Ice Moon</title>
		<link>https://www.nasa.gov/missions/europa-clipper/first-images/</link>
		<pubDate>Sat, 21 Nov 2026 10:48:00 +0000</pubDate>
		<guid isPermaLink="false">https://www.nasa.gov/?p=812399</guid>
		<description><![CDATA[<p>The spacecraft imaged cracked ice plains during a distant flyby.</p>]]></description>
	</item>
	<item>`,
    );
    clock.set("2026-11-21T10:52:00Z");
    const before = site.hits("/nasa/feed/");
    const r = await h.call("news/search", { query: "europa clipper" });
    expect(r.status).toBe(200);
    expect(r.body.result.live).toBe(true);
    expect(site.hits("/nasa/feed/")).toBe(before + 1);
    expect(r.body.result.items.map((i: any) => i.title)).toEqual(["Europa Clipper Returns First Images of Jupiter's Ice Moon"]);
  });

  test("a blank query is refused", async () => {
    const r = await h.call("news/search", { query: "  " });
    expect(r.status).toBe(400);
    expect(r.body.error.field).toBe("query");
  });
});

describe("the feed list", () => {
  test("a bad feeds file stops the start, naming the file and the entry", async () => {
    const bad = join(dir, "bad.json");
    writeFileSync(bad, JSON.stringify({ feeds: [{ topic: "world", name: "Nowhere", url: "ftp://example.com/feed" }] }));
    await expect(startHearth({ env: { NEWS_FEEDS_FILE: bad } })).rejects.toThrow(`news feeds ${bad}: feeds[0].url must be an http or https URL`);
  });
});
