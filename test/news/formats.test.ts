// one store: the feed parser on its own; starts no instance of the pass's store
// The three feed formats in the wild, through the parser the poller uses.
import { expect, test } from "bun:test";
import { parseItems } from "../../plugins/news/poll.ts";
import { recorded } from "../upstream/fixture-server.ts";

test("RSS 1.0 (RDF), as Nature publishes it", () => {
  const items = parseItems("https://feeds.nature.com/nature/rss/current", recorded("rdf", "nature.rdf"));
  expect(items.map((i) => [i.title, i.url, new Date(i.published!).toISOString()])).toEqual([
    ["A coronal origin for the 2027 eclipse shadow bands", "https://www.nature.com/articles/s41586-026-09123-4", "2026-11-19T00:00:00.000Z"],
    ["Daily briefing: the smallest frog yet", "https://www.nature.com/articles/d41586-026-03456-7", "2026-11-20T00:00:00.000Z"],
  ]);
  expect(items[0].summary).toContain("Shadow bands seen before totality");
});

test("RSS 2.0 and Atom give the same fields; ids are stable per feed and item", () => {
  const rss = parseItems("https://feeds.bbci.co.uk/news/world/rss.xml", recorded("rss", "bbc-world.xml"));
  const again = parseItems("https://feeds.bbci.co.uk/news/world/rss.xml", recorded("rss", "bbc-world.xml"));
  expect(rss.map((i) => i.id)).toEqual(again.map((i) => i.id));
  expect(rss[2].summary).toBe("Heavy rain has forced the closure of hundreds of schools in Piedmont and Lombardy & rivers are still rising.");
  const atom = parseItems("https://www.theverge.com/rss/index.xml", recorded("atom", "verge.xml"));
  expect(atom[0]).toMatchObject({ title: "Framework’s new laptop mainboard runs cooler and longer", published: Date.parse("2026-11-21T09:00:00Z") });
  // The same item in another feed is another entry.
  expect(parseItems("https://example.com/other", recorded("rss", "bbc-world.xml"))[0].id).not.toBe(rss[0].id);
});

test("something that is not a feed is refused", () => {
  expect(() => parseItems("https://example.com/", "<html><body>Not a feed</body></html>")).toThrow();
});
