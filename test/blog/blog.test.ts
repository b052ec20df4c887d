import { parseFeed } from "@rowanmanning/feed-parser";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHearth, TestClock, type Hearth } from "../harness.ts";

let h: Hearth;
const clock = new TestClock();
let alice: string;
let bob: string;
const long = (s: string) => `${s} ${"This sentence pads the post past fifty characters. ".repeat(2)}`;

beforeAll(async () => {
  h = await startHearth({ clock });
  alice = await h.token("alice");
  bob = await h.token("bob");
});
afterAll(() => h.stop());

const create = (args: Record<string, unknown>, token = alice) => {
  clock.advance(60_000);
  return h.call("blog/create", args, { token });
};

describe("blog/create", () => {
  test("content under 50 characters is a 400 saying how many it got", async () => {
    const r = await create({ content: "too short" });
    expect(r.status).toBe(400);
    expect(r.body.error.field).toBe("content");
    expect(r.body.error.message).toContain("at least 50 characters (got 9)");
  });

  test("writing needs an account; reading does not", async () => {
    expect((await h.call("blog/create", { content: long("x") })).status).toBe(401);
    expect((await h.call("blog/list")).status).toBe(200);
  });

  test("title from the first sentence when omitted; tags normalised", async () => {
    const r = await create({ content: "Spring is here at last! The garden needs digging and the beds need compost before planting.", tags: " Garden, #Food ,garden,, slow  cooking " });
    expect(r.status).toBe(200);
    expect(r.body.result.title).toBe("Spring is here at last!");
    expect(r.body.result.tags).toBe("garden,food,slow-cooking");
    expect(r.body.result.author).toBe("alice");
    const longFirst = await create({ content: `${"word ".repeat(60)}end.` });
    expect(longFirst.body.result.title.length).toBeLessThanOrEqual(80);
    expect(longFirst.body.result.title.endsWith("…")).toBe(true);
    const md = await create({ content: "# A *markdown* heading\n\nAnd then a body that is long enough to be accepted as a post." });
    expect(md.body.result.title).toBe("A markdown heading");
    // The title is looked for in a post's head; one whose head is all code takes its title from the first words after.
    const code = await create({ content: `\`\`\`\n${"let x = 1;\n".repeat(2000)}\`\`\`\n\nAfter the listing. It ran.` });
    expect(code.body.result.title).toBe("After the listing");
    const huge = await create({ content: `A long first sentence, ${"and on ".repeat(14_000)}to the end.` });
    expect(huge.body.result.title).toBe("A long first sentence, and on and on and on and on and on and on and on and on…");
  });
});

describe("blog list and read", () => {
  let pub: any;
  let priv: any;
  beforeAll(async () => {
    pub = (await create({ title: "Bread Baking Notes", content: long("Flour and water.") })).body.result;
    priv = (await create({ title: "Secret Diary", content: long("Nobody reads this."), private: true })).body.result;
  });

  test("newest first with titles, snippets and ids; private only to the author", async () => {
    const mine = (await h.call("blog/list", {}, { token: alice })).body.result;
    expect(mine[0].id).toBe(priv.id);
    expect(mine[1].id).toBe(pub.id);
    expect(mine[1].snippet.startsWith("Flour and water.")).toBe(true);
    for (const list of [(await h.call("blog/list", {}, { token: bob })).body.result, (await h.call("blog/list")).body.result]) {
      expect(list.some((p: any) => p.id === priv.id)).toBe(false);
      expect(list[0].id).toBe(pub.id);
    }
    expect((await h.call("blog/list", { limit: 1 }, { token: alice })).body.result.length).toBe(1);
  });

  test("mine lists only the caller's own posts, private ones too; a stranger is asked to sign in; a bad value is 400 naming it", async () => {
    const other = (await create({ title: "Bob's Garden", content: long("Beans.") }, bob)).body.result;
    const ids = (r: { body: { result: { id: string }[] } }) => r.body.result.map((p) => p.id);
    const alices = await h.call("blog/list", { mine: true }, { token: alice });
    expect(alices.status).toBe(200);
    expect(ids(alices)).toContain(priv.id);
    expect(ids(alices)).toContain(pub.id);
    expect(ids(alices)).not.toContain(other.id);
    expect(ids(await h.call("blog/list", { mine: true }, { token: bob }))).toEqual([other.id]);
    // Over GET too, as a query string's text, and false is the whole blog as before.
    expect(ids(await h.call("blog/list", { mine: "true" }, { token: bob, method: "GET" }))).toEqual([other.id]);
    expect(ids(await h.call("blog/list", { mine: false }, { token: bob }))).toContain(pub.id);
    expect((await h.call("blog/list", { mine: true })).status).toBe(401);
    const bad = await h.call("blog/list", { mine: "maybe" }, { token: alice });
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe("mine");
    expect((await h.call("blog/delete", { id: other.id }, { token: bob })).status).toBe(200);
  });

  test("read by id, by case-insensitive prefix or substring of the title", async () => {
    expect((await h.call("blog/read", { id: pub.id })).body.result.content).toBe(pub.content);
    expect((await h.call("blog/read", { title: "bread bak" })).body.result.id).toBe(pub.id);
    expect((await h.call("blog/read", { title: "BAKING" })).body.result.id).toBe(pub.id);
    expect((await h.call("blog/read", { title: "secret" }, { token: alice })).body.result.id).toBe(priv.id);
    expect((await h.call("blog/read", { title: "secret" }, { token: bob })).status).toBe(404);
    expect((await h.call("blog/read", { id: priv.id }, { token: bob })).status).toBe(404);
    expect((await h.call("blog/read", { id: priv.id })).status).toBe(404);
    const none = await h.call("blog/read", {});
    expect(none.status).toBe(400);
    expect(none.body.error.field).toBe("id");
  });

  test("several matching titles is 409 with the candidates; an exact title wins", async () => {
    const a = (await create({ title: "Soup one", content: long("a") })).body.result;
    const b = (await create({ title: "Soup two", content: long("b") })).body.result;
    const r = await h.call("blog/read", { title: "soup" });
    expect(r.status).toBe(409);
    expect(r.body.error.candidates.map((c: any) => c.id).sort()).toEqual([a.id, b.id].sort());
    const c = (await create({ title: "Soup", content: long("c") })).body.result;
    expect((await h.call("blog/read", { title: "soup" })).body.result.id).toBe(c.id);
  });
});

describe("blog update and delete", () => {
  test("update keeps omitted fields; only the author may", async () => {
    const p = (await create({ title: "Original", content: long("First version."), tags: "one" })).body.result;
    const u = await h.call("blog/update", { id: p.id, title: "Renamed" }, { token: alice });
    expect(u.status).toBe(200);
    expect(u.body.result.title).toBe("Renamed");
    expect(u.body.result.content).toBe(p.content);
    expect(u.body.result.tags).toBe("one");
    const short = await h.call("blog/update", { id: p.id, content: "short" }, { token: alice });
    expect(short.status).toBe(400);
    expect(short.body.error.field).toBe("content");
    const other = await h.call("blog/update", { id: p.id, title: "Hijacked" }, { token: bob });
    expect(other.status).toBe(403);
    expect((await h.call("blog/read", { id: p.id })).body.result.title).toBe("Renamed");
    expect((await h.call("blog/update", { id: "missing" }, { token: alice })).status).toBe(404);
  });

  test("delete by id or title, own posts only, ambiguous title 409, neither 400", async () => {
    const p = (await create({ title: "Delete me please", content: long("x") })).body.result;
    expect((await h.call("blog/delete", { id: p.id }, { token: bob })).status).toBe(403);
    expect((await h.call("blog/delete", { title: "delete me" }, { token: bob })).status).toBe(403);
    const neither = await h.call("blog/delete", {}, { token: alice });
    expect(neither.status).toBe(400);
    expect(neither.body.error.field).toBe("id");
    await create({ title: "Twin post A", content: long("a") });
    await create({ title: "Twin post B", content: long("b") });
    const amb = await h.call("blog/delete", { title: "twin post" }, { token: alice });
    expect(amb.status).toBe(409);
    expect(amb.body.error.candidates.length).toBe(2);
    const d = await h.call("blog/delete", { title: "delete me" }, { token: alice });
    expect(d.status).toBe(200);
    expect(d.body.result.deleted).toBe(p.id);
    expect((await h.call("blog/read", { id: p.id })).status).toBe(404);
    const byId = (await create({ title: "Gone by id", content: long("x") })).body.result;
    expect((await h.call("blog/delete", { id: byId.id }, { token: alice })).status).toBe(200);
    expect((await h.call("blog/delete", { id: byId.id }, { token: alice })).status).toBe(404);
    // A private post of someone else is not found, not forbidden: its existence does not leak.
    const hidden = (await create({ title: "Bob private", content: long("x"), private: true }, bob)).body.result;
    expect((await h.call("blog/delete", { id: hidden.id }, { token: alice })).status).toBe(404);
    expect((await h.call("blog/delete", { title: "Bob private" }, { token: alice })).status).toBe(404);
  });
});

describe("blog pages and feed", () => {
  test("/blog and /blog/<id> show public posts as plain HTML; private posts are 404", async () => {
    const p = (await create({ title: "Page <test>", content: long("Hello **world**. <script>alert(1)</script>"), tags: "web" })).body.result;
    const q = (await create({ title: "Hidden page", content: long("hidden"), private: true })).body.result;
    const index = await fetch(`${h.url}/blog`);
    expect(index.status).toBe(200);
    const html = await index.text();
    expect(html).toContain("Page &lt;test&gt;");
    expect(html).not.toContain("Hidden page");
    expect(html).toContain('type="application/atom+xml"');
    const one = await fetch(p.url);
    const body = await one.text();
    expect(one.status).toBe(200);
    expect(body).toContain("<strong>world</strong>");
    expect(body).not.toContain("<script>alert");
    expect(one.headers.get("content-security-policy")).toContain("script-src 'none'");
    expect((await fetch(q.url)).status).toBe(404);
    // The author sees their private post's page with their own credentials.
    expect((await fetch(q.url, { headers: { authorization: `Bearer ${alice}` } })).status).toBe(200);
    expect((await fetch(q.url, { headers: { authorization: `Bearer ${bob}` } })).status).toBe(404);
    expect((await fetch(`${h.url}/blog/nothing-here`)).status).toBe(404);
  });

  test("the Atom feed parses with a real feed parser and holds only public posts", async () => {
    const p = (await create({ title: "Feed & friends", content: long("Feeds *are* nice."), tags: "feeds, xml" })).body.result;
    await create({ title: "Not in feed", content: long("x"), private: true });
    const res = await fetch(`${h.url}/blog/feed.xml`);
    expect(res.headers.get("content-type")).toContain("application/atom+xml");
    const text = await res.text();
    const feed = parseFeed(text);
    expect(feed.meta.type).toBe("atom");
    expect(feed.title).toBe("Blog");
    expect(feed.self).toBe(`${h.url}/blog/feed.xml`);
    const item = feed.items.find((i) => i.id === p.url)!;
    expect(item.title).toBe("Feed & friends");
    expect(item.url).toBe(p.url);
    expect(item.content).toContain("<em>are</em>");
    expect(item.authors[0].name).toBe("alice");
    expect(item.categories.map((c) => c.term)).toEqual(["feeds", "xml"]);
    expect(item.published?.toISOString()).toBe(p.created);
    expect(feed.items.some((i) => i.title === "Not in feed" || i.title === "Secret Diary")).toBe(false);
    expect(feed.updated?.getTime()).toBeGreaterThanOrEqual(new Date(p.updated).getTime());
  });

  test("publishing announces on the stream; a private post never does; deleting takes the announcement back", async () => {
    const p = (await create({ title: "Announced", content: long("x") })).body.result;
    await create({ title: "Never announced", content: long("x"), private: true });
    let stream = (await h.call("stream/list", { limit: 100 })).body.result;
    const entry = stream.find((e: any) => e.url === p.url);
    expect(entry).toMatchObject({ service: "blog", type: "post.published", text: 'alice published "Announced"' });
    expect(JSON.stringify(stream)).not.toContain("Never announced");
    await h.call("blog/delete", { id: p.id }, { token: alice });
    stream = (await h.call("stream/list", { limit: 100 })).body.result;
    expect(stream.some((e: any) => e.url === p.url)).toBe(false);
  });
});
