import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHearth, TestClock, type Hearth } from "../harness.ts";

let h: Hearth;
const clock = new TestClock();
let alice: string;
let bob: string;

beforeAll(async () => {
  h = await startHearth({ clock });
  alice = await h.token("alice");
  bob = await h.token("bob");
});
afterAll(() => h.stop());

const write = (args: Record<string, unknown>, token = alice) => h.call("docs/write", args, { token });

describe("docs", () => {
  test("needs an account", async () => {
    expect((await h.call("docs/list")).status).toBe(401);
    expect((await h.call("docs/write", { title: "x", content: "y" })).status).toBe(401);
  });

  test("write creates a private document; read and list return it", async () => {
    const w = await write({ title: "Plans", content: "# Garden\nTomatoes and *beans*." });
    expect(w.status).toBe(200);
    const doc = w.body.result;
    expect(doc.public).toBe(false);
    expect(doc.url).toBeNull();
    expect(doc.content).toBe("# Garden\nTomatoes and *beans*.");
    const r = await h.call("docs/read", { id: doc.id }, { token: alice });
    expect(r.body.result.title).toBe("Plans");
    const byTitle = await h.call("docs/read", { title: "Plans" }, { token: alice });
    expect(byTitle.body.result.id).toBe(doc.id);
    // The private page is not reachable by a stranger.
    const pageRes = await fetch(`${h.url}/docs/${doc.id}`);
    expect(pageRes.status).toBe(404);
    expect(await pageRes.text()).not.toContain("Tomatoes");
    expect((await fetch(`${h.url}/docs/${doc.id}`, { headers: { authorization: `Bearer ${bob}` } })).status).toBe(404);
    // Its owner may preview it, marked private and kept out of caches and search engines.
    const own = await fetch(`${h.url}/docs/${doc.id}`, { headers: { authorization: `Bearer ${alice}` } });
    expect(own.status).toBe(200);
    expect(own.headers.get("cache-control")).toBe("private, no-store");
    expect(await own.text()).toContain("only you can see this page");
  });

  test("write with an id replaces; someone else's id is 404 and changes nothing", async () => {
    const { id } = (await write({ title: "Draft", content: "one" })).body.result;
    clock.advance(1000);
    const w = await write({ id, title: "Draft 2", content: "two" });
    expect(w.body.result.id).toBe(id);
    expect(w.body.result.content).toBe("two");
    const other = await write({ id, title: "Mine now", content: "stolen" }, bob);
    expect(other.status).toBe(404);
    expect(other.body.error.kind).toBe("not_found");
    const unknown = await write({ id: "nope", title: "x", content: "y" });
    expect(unknown.status).toBe(404);
    expect(other.body.error.message).toBe(unknown.body.error.message.replace('"nope"', JSON.stringify(id)));
    expect((await h.call("docs/read", { id }, { token: alice })).body.result.title).toBe("Draft 2");
  });

  test("list: most recently changed first, query through the index, limit default 50", async () => {
    const t = await h.token("lister");
    for (let i = 0; i < 55; i++) {
      clock.advance(1000);
      await write({ title: `Doc ${i}`, content: i === 3 ? "about zucchini soup" : `body ${i}` }, t);
    }
    const all = await h.call("docs/list", {}, { token: t });
    expect(all.body.result.length).toBe(50);
    expect(all.body.result[0].title).toBe("Doc 54");
    expect(all.body.result[1].title).toBe("Doc 53");
    // Touching an old one brings it to the top.
    const doc3 = (await h.call("docs/read", { title: "Doc 3" }, { token: t })).body.result;
    clock.advance(1000);
    await write({ id: doc3.id, title: "Doc 3", content: "about zucchini soup, revised" }, t);
    expect((await h.call("docs/list", { limit: 2 }, { token: t })).body.result.map((d: any) => d.title)).toEqual(["Doc 3", "Doc 54"]);
    const q = await h.call("docs/list", { query: "zucchini" }, { token: t });
    expect(q.body.result.map((d: any) => d.title)).toEqual(["Doc 3"]);
    expect((await h.call("docs/list", { query: "Doc 12" }, { token: t })).body.result.map((d: any) => d.title)).toEqual(["Doc 12"]);
    expect((await h.call("docs/list", { limit: 0 }, { token: t })).status).toBe(400);
    expect((await h.call("docs/list", { limit: 501 }, { token: t })).body.error.field).toBe("limit");
    // Another account's words never match.
    expect((await h.call("docs/list", { query: "zucchini" }, { token: alice })).body.result).toEqual([]);
  });

  test("read by title: several with that title is 409 listing ids; neither id nor title is 400", async () => {
    const a = (await write({ title: "Twin", content: "a" })).body.result.id;
    const b = (await write({ title: "Twin", content: "b" })).body.result.id;
    const r = await h.call("docs/read", { title: "Twin" }, { token: alice });
    expect(r.status).toBe(409);
    expect(r.body.error.candidates.map((c: any) => c.id).sort()).toEqual([a, b].sort());
    expect((await h.call("docs/read", { title: "twin" }, { token: alice })).status).toBe(404);
    const none = await h.call("docs/read", {}, { token: alice });
    expect(none.status).toBe(400);
    expect(none.body.error.field).toBe("id");
  });

  test("a public document has a page with sanitised HTML, and an activity entry", async () => {
    const w = await write({
      title: "Recipe <b>",
      content: "# Bread\n\nFlour, **water**.\n\n<script>alert(1)</script>\n\n[bad](javascript:alert(1)) <img src=x onerror=alert(2)>",
      public: true,
    });
    const doc = w.body.result;
    expect(doc.url).toBe(`${h.url}/docs/${doc.id}`);
    const res = await fetch(doc.url);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(res.headers.get("content-security-policy")).toContain("script-src 'none'");
    const html = await res.text();
    expect(html).toContain("<h1>Bread</h1>");
    expect(html).toContain("<strong>water</strong>");
    expect(html).toContain("<title>Recipe &lt;b&gt;</title>");
    expect(html).not.toContain("<script");
    expect(html).not.toContain("javascript:");
    expect(html).not.toContain("onerror");
    // Readable by read-by-id for another account; not changeable by it.
    expect((await h.call("docs/read", { id: doc.id }, { token: bob })).body.result.title).toBe("Recipe <b>");
    expect((await h.call("docs/delete", { id: doc.id }, { token: bob })).status).toBe(404);
    const stream = (await h.call("stream/list")).body.result;
    expect(stream.some((e: any) => e.type === "doc.published" && e.url === doc.url)).toBe(true);
    // Made private again: the page and the announcement go.
    await write({ id: doc.id, title: "Recipe <b>", content: "gone" });
    expect((await fetch(doc.url)).status).toBe(404);
    expect((await h.call("stream/list")).body.result.some((e: any) => e.url === doc.url)).toBe(false);
  });

  test("delete removes the document and its index entry; only the owner may", async () => {
    const { id } = (await write({ title: "Temporary", content: "quokka" })).body.result;
    expect((await h.call("docs/delete", { id }, { token: bob })).status).toBe(404);
    const d = await h.call("docs/delete", { id }, { token: alice });
    expect(d.status).toBe(200);
    expect((await h.call("docs/read", { id }, { token: alice })).status).toBe(404);
    expect((await h.call("docs/list", { query: "quokka" }, { token: alice })).body.result).toEqual([]);
    expect((await h.call("docs/delete", { id }, { token: alice })).status).toBe(404);
    expect((await h.call("docs/delete", { id }, { token: alice, method: "GET" })).status).toBe(405);
  });

  test("limits are 400s naming the field", async () => {
    const r = await write({ title: "", content: "x" });
    expect(r.status).toBe(400);
    expect(r.body.error.field).toBe("title");
    expect((await write({ title: "t" })).body.error.field).toBe("content");
  });
});
