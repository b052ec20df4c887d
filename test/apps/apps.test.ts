// The apps methods over HTTP: create, edit, fork, read, search, test, run,
// their limits, and the starter apps an instance begins with.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startHearth, type Hearth } from "../harness.ts";
import { sqlAll, sqlGet } from "../sql.ts";
import { sanitiseIcon } from "../../plugins/apps/icon.ts";
import { STARTERS } from "../../plugins/apps/starters.ts";

let h: Hearth;
let alice: string;
let bob: string;

const page = (body: string, head = "<title>T</title>") => `<!doctype html><html><head>${head}</head><body>${body}</body></html>`;
const simple = page(`<p id="n"></p><script>hearth.store.get("n").then((v) => { document.getElementById("n").textContent = v; });</script>`);

beforeAll(async () => {
  h = await startHearth();
  alice = await h.token("alice");
  bob = await h.token("bob");
});
afterAll(() => h.stop());

test("the starter apps exist from the first start, owned by the instance", async () => {
  const r = await h.call("apps/search", {});
  expect(r.status).toBe(200);
  const slugs = r.body.result.map((a: any) => a.slug);
  expect(slugs).toEqual(expect.arrayContaining(["checklist", "counter", "habit-tracker"]));
  const counter = await h.call("apps/read", { slug: "counter" });
  expect(counter.body.result).toMatchObject({ name: "Counter", owner: "Hearth", starter: true, price: 0, mine: false });
  expect(counter.body.result.html).toContain("hearth.store.set");
  expect(counter.body.result.icon).toStartWith("<svg");
  // Nobody owns them, so nobody may edit them; anyone may fork them.
  const edit = await h.call("apps/edit", { slug: "counter", name: "Mine now" }, { token: alice });
  expect(edit.status).toBe(403);
});

test("each starter's icon is shipped as the sanitiser leaves it, so it is stored as it is, unsanitised at start", () => {
  for (const s of STARTERS) expect({ slug: s.slug, icon: sanitiseIcon(s.icon) }).toEqual({ slug: s.slug, icon: s.icon });
});

test("starters are made once: a restart on the same data adds none", async () => {
  const { mkdtempSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const dir = mkdtempSync(join(tmpdir(), "hearth-apps-"));
  const first = await startHearth({ dataDir: dir });
  await first.stop();
  const second = await startHearth({ dataDir: dir });
  try {
    const r = await second.call("apps/search", {});
    expect(r.body.result.filter((a: any) => a.starter).map((a: any) => a.slug).sort()).toEqual(["checklist", "counter", "habit-tracker"]);
  } finally {
    await second.stop();
  }
});

test("create needs an account, derives the slug and defaults the description", async () => {
  expect((await h.call("apps/create", { name: "Nope", html: simple })).status).toBe(401);
  const r = await h.call("apps/create", { name: "Water Log!", html: simple, tags: " Health, #water,health " }, { token: alice });
  expect(r.status).toBe(200);
  expect(r.body.result).toMatchObject({ slug: "water-log", name: "Water Log!", description: "Water Log!", tags: ["health", "water"], owner: "alice", mine: true, price: 0 });
  expect(r.body.result.url).toBe(`${h.url}/apps/water-log`);
  // The same name again: a suffix, not a refusal.
  const again = await h.call("apps/create", { name: "Water log", html: simple }, { token: bob });
  expect(again.body.result.slug).toBe("water-log-2");
});

test("a taken explicit slug is 409; a malformed or reserved one is 400", async () => {
  const taken = await h.call("apps/create", { name: "Other", html: simple, slug: "water-log" }, { token: bob });
  expect(taken.status).toBe(409);
  expect(taken.body.error.kind).toBe("conflict");
  const bad = await h.call("apps/create", { name: "Other", html: simple, slug: "Not A Slug" }, { token: bob });
  expect(bad.status).toBe(400);
  expect(bad.body.error.field).toBe("slug");
  const reserved = await h.call("apps/create", { name: "Other", html: simple, slug: "run" }, { token: bob });
  expect(reserved.status).toBe(400);
  expect(reserved.body.error.field).toBe("slug");
  const mine = await h.call("apps/create", { name: "Other", html: simple, slug: "my-other" }, { token: bob });
  expect(mine.body.result.slug).toBe("my-other");
});

test("HTML over 256 KB is 413, exactly 256 KB is accepted", async () => {
  const filler = (n: number) => page(`<!--${"x".repeat(n)}-->`);
  const overhead = new TextEncoder().encode(filler(0)).byteLength;
  const over = await h.call("apps/create", { name: "Big", html: filler(256 * 1024 - overhead + 1) }, { token: alice });
  expect(over.status).toBe(413);
  expect(over.body.error).toMatchObject({ kind: "too_large", field: "html" });
  const at = await h.call("apps/create", { name: "Big", html: filler(256 * 1024 - overhead) }, { token: alice });
  expect(at.status).toBe(200);
  expect(at.body.result.bytes).toBe(256 * 1024);
  // Multi-byte characters count as bytes, not characters.
  const wide = await h.call("apps/create", { name: "Wide", html: page("é".repeat(140 * 1024)) }, { token: alice });
  expect(wide.status).toBe(413);
});

test("price outside 0–1000 credits is 400", async () => {
  for (const price of [-1, 1001, 2.5]) {
    const r = await h.call("apps/create", { name: "Priced", html: simple, price }, { token: alice });
    expect(r.status).toBe(400);
    expect(r.body.error.field).toBe("price");
  }
  const ok = await h.call("apps/create", { name: "Priced", html: simple, price: 1000 }, { token: alice });
  expect(ok.body.result.price).toBe(1000);
});

test("the icon must be an SVG and is stripped of anything active", async () => {
  const notSvg = await h.call("apps/create", { name: "Iconic", html: simple, icon: "<img src=x onerror=alert(1)>" }, { token: alice });
  expect(notSvg.status).toBe(400);
  expect(notSvg.body.error.field).toBe("icon");
  const r = await h.call(
    "apps/create",
    { name: "Iconic", html: simple, icon: `<svg viewBox="0 0 10 10" onload="alert(1)"><script>alert(2)</script><a href="javascript:alert(3)"><circle cx="5" cy="5" r="4" fill="url(https://elsewhere.example/x.svg#p)"/></a></svg>` },
    { token: alice },
  );
  expect(r.status).toBe(200);
  expect(r.body.result.icon).toBe('<svg viewBox="0 0 10 10"><circle cx="5" cy="5" r="4"></circle></svg>');
});

test("edit is the owner's: others get 403, omitted fields keep their value, the same limits hold", async () => {
  const created = await h.call("apps/create", { name: "Editable", html: simple, description: "first", tags: "a,b", price: 5 }, { token: alice });
  const slug = created.body.result.slug;
  expect((await h.call("apps/edit", { slug, name: "Stolen" }, { token: bob })).status).toBe(403);
  expect((await h.call("apps/edit", { slug: "no-such-app", name: "x" }, { token: alice })).status).toBe(404);
  const r = await h.call("apps/edit", { slug, description: "second" }, { token: alice });
  expect(r.status).toBe(200);
  expect(r.body.result).toMatchObject({ name: "Editable", description: "second", tags: ["a", "b"], price: 5, html: simple });
  expect((await h.call("apps/edit", { slug, html: "x".repeat(256 * 1024 + 1) }, { token: alice })).status).toBe(413);
  const price = await h.call("apps/edit", { slug, price: 1001 }, { token: alice });
  expect(price.status).toBe(400);
  expect(price.body.error.field).toBe("price");
  expect((await h.call("apps/read", { slug })).body.result.price).toBe(5);
});

test("read shows a free app's page to anyone, a priced app's page only to its owner", async () => {
  const free = await h.call("apps/read", { slug: "water-log" });
  expect(free.body.result.html).toBe(simple);
  expect(free.body.result.mine).toBe(false);
  await h.call("apps/create", { name: "Secret sauce", html: simple, price: 20 }, { token: alice });
  const other = await h.call("apps/read", { slug: "secret-sauce" }, { token: bob });
  expect(other.body.result.price).toBe(20);
  expect(other.body.result.html).toBeUndefined();
  const owner = await h.call("apps/read", { slug: "secret-sauce" }, { token: alice });
  expect(owner.body.result.html).toBe(simple);
  expect((await h.call("apps/read", { slug: "missing" })).status).toBe(404);
});

test("fork copies into the caller's account with a generated or chosen slug", async () => {
  const r = await h.call("apps/fork", { slug: "counter" }, { token: bob });
  expect(r.status).toBe(200);
  expect(r.body.result).toMatchObject({ slug: "counter-bob", owner: "bob", mine: true, forked_from: "counter", name: "Counter", charged: 0 });
  expect(r.body.result.html).toBe((await h.call("apps/read", { slug: "counter" })).body.result.html);
  const again = await h.call("apps/fork", { slug: "counter" }, { token: bob });
  expect(again.body.result.slug).toBe("counter-bob-2");
  const chosen = await h.call("apps/fork", { slug: "counter", new_slug: "tally" }, { token: bob });
  expect(chosen.body.result.slug).toBe("tally");
  const taken = await h.call("apps/fork", { slug: "counter", new_slug: "tally" }, { token: alice });
  expect(taken.status).toBe(409);
  // The copy is bob's to edit.
  expect((await h.call("apps/edit", { slug: "tally", name: "Tally" }, { token: bob })).status).toBe(200);
  expect((await h.call("apps/fork", { slug: "counter" })).status).toBe(401);
});

test("forking someone's priced app costs its price, paid to its creator", async () => {
  await h.call("apps/create", { name: "Premium", html: simple, price: 30 }, { token: alice });
  const short = await h.call("apps/fork", { slug: "premium" }, { token: bob });
  expect(short.status).toBe(402);
  expect((await h.call("apps/read", { slug: "premium-bob" })).status).toBe(404);
  await h.grant("bob", 50);
  const before = (await h.call("credits/balance", {}, { token: alice })).body.result.balance;
  const r = await h.call("apps/fork", { slug: "premium" }, { token: bob });
  expect(r.status).toBe(200);
  expect(r.body.result).toMatchObject({ charged: 30, price: 0, html: simple });
  expect((await h.call("credits/balance", {}, { token: bob })).body.result.balance).toBe(20);
  expect((await h.call("credits/balance", {}, { token: alice })).body.result.balance).toBe(before + 30);
});

test("search finds by name, description and tag, and tag narrows", async () => {
  await h.call("apps/create", { name: "Plant waterer", html: simple, description: "Reminds you which pots are thirsty", tags: "garden,home" }, { token: alice });
  await h.call("apps/create", { name: "Grocery list", html: simple, description: "What to buy", tags: "home,lists" }, { token: bob });
  const slugs = async (args: Record<string, string>) => (await h.call("apps/search", args)).body.result.map((a: any) => a.slug);
  expect(await slugs({ query: "plant" })).toEqual(["plant-waterer"]);
  expect(await slugs({ query: "thirsty" })).toEqual(["plant-waterer"]);
  expect(await slugs({ query: "garden" })).toEqual(["plant-waterer"]);
  expect((await slugs({ tag: "home" })).sort()).toEqual(["grocery-list", "plant-waterer"]);
  expect(await slugs({ tag: "lists", query: "list" })).toEqual(expect.arrayContaining(["grocery-list"]));
  expect(await slugs({ tag: "garden", query: "grocery" })).toEqual([]);
  // Listings never carry the pages themselves.
  expect((await h.call("apps/search", { query: "grocery" })).body.result[0].html).toBeUndefined();
});

test("a listing gives a page's size in bytes of UTF-8, as the app's own details do", async () => {
  const wide = page("<p>é — 漢字 🌱</p>");
  const made = await h.call("apps/create", { name: "Wide letters", html: wide, tags: "sizes" }, { token: alice });
  expect(made.body.result.bytes).toBe(new TextEncoder().encode(wide).byteLength);
  const listed = (await h.call("apps/search", { tag: "sizes" })).body.result;
  expect(listed).toHaveLength(1);
  expect(listed[0]).toMatchObject({ slug: made.body.result.slug, bytes: new TextEncoder().encode(wide).byteLength });
  expect(listed[0].bytes).toBeGreaterThan(wide.length);
});

test("test reports what is broken in a page", async () => {
  const broken = page(
    `<div><p>unclosed <b>tag</p></div>
<script src="https://cdn.example/lib.js"></script>
<script>function ( { broken</script>
<script>hearth.call("nosuch/method", {}); document.getElementById("ghost");</script>`,
  );
  await h.call("apps/create", { name: "Broken", html: broken }, { token: alice });
  const r = await h.call("apps/test", { slug: "broken" });
  expect(r.status).toBe(200);
  const report = r.body.result;
  expect(report.ok).toBe(false);
  const kinds = report.problems.map((p: any) => p.kind);
  expect(kinds).toContain("external_script");
  expect(kinds).toContain("script_syntax");
  expect(kinds).toContain("unknown_method");
  expect(report.warnings.map((w: any) => w.kind)).toContain("missing_element");
  const parse = await h.call("apps/create", { name: "Bad markup", html: `<!doctype html><html><head><title>x</title></head><body><p a="1" a="2">x</p></body></html>` }, { token: alice });
  const p = await h.call("apps/test", { slug: parse.body.result.slug });
  expect(p.body.result.problems.map((x: any) => x.kind)).toEqual(["parse"]);
  expect(p.body.result.problems[0].message).toContain("duplicate-attribute");
  // A clean page passes.
  const clean = await h.call("apps/test", { slug: "counter" });
  expect(clean.body.result).toMatchObject({ ok: true, problems: [] });
  expect(clean.body.result.store_calls).toBeGreaterThan(0);
  expect((await h.call("apps/test", { slug: "missing" })).status).toBe(404);
});

test("test runs the page's read calls as the caller and checks its writes without running them", async () => {
  await h.call("notes/add", { title: "shopping", text: "eggs" }, { token: alice });
  const html = page(`<script>
hearth.call("notes/get", { title: "shopping" }).then(show);
hearth.call('notes/add', { title: 'never', text: 'written', });
hearth.call("notes/add", { title: "no text" });
hearth.call("notes/get", { title: someVariable });
</script>`);
  await h.call("apps/create", { name: "Caller", html }, { token: alice });
  const r = await h.call("apps/test", { slug: "caller" }, { token: alice });
  const calls = r.body.result.calls;
  expect(calls[0]).toMatchObject({ method: "notes/get", ran: true, ok: true, status: 200, result: { title: "shopping", text: "eggs" } });
  expect(calls[1]).toMatchObject({ method: "notes/add", args: { title: "never", text: "written" }, ran: false, ok: true });
  expect(calls[2]).toMatchObject({ method: "notes/add", ran: false, ok: false, status: 400 });
  expect(calls[2].error.field).toBe("text");
  expect(calls[3]).toMatchObject({ method: "notes/get", ran: false, args: null });
  expect(r.body.result.ok).toBe(false);
  expect((await h.call("notes/get", { title: "never" }, { token: alice })).status).toBe(404);
  // As someone else, the same read is theirs: bob has no such note.
  const asBob = await h.call("apps/test", { slug: "caller" }, { token: bob });
  expect(asBob.body.result.calls[0]).toMatchObject({ ran: true, ok: false, status: 404 });
  // As a stranger, the account's method answers 401.
  const asNobody = await h.call("apps/test", { slug: "caller" });
  expect(asNobody.body.result.calls[0]).toMatchObject({ ran: true, ok: false, status: 401 });
});

test("run publishes a snippet at a URL served in a sandbox, and returns no output", async () => {
  expect((await h.call("apps/run", { code: "1" })).status).toBe(401);
  const r = await h.call("apps/run", { code: "document.title = 'hi </script>'" }, { token: alice });
  expect(r.status).toBe(200);
  expect(Object.keys(r.body.result).sort()).toEqual(["bytes", "id", "url"]);
  const host = await fetch(r.body.result.url);
  expect(host.status).toBe(200);
  const hostHtml = await host.text();
  // Framed from the sandbox port, an origin of its own; on the instance's own origin the document stays opaque.
  expect(hostHtml).toContain(`sandbox="allow-scripts allow-same-origin" referrerpolicy="no-referrer" src="${h.sandboxUrl}/apps/run/${r.body.result.id}/frame"`);
  const own = await fetch(`${h.sandboxUrl}/apps/run/${r.body.result.id}/frame`);
  expect(own.headers.get("content-security-policy")).toStartWith("sandbox allow-scripts allow-same-origin;");
  expect(own.headers.get("content-security-policy")).toContain("connect-src 'none'");
  const frame = await fetch(`${r.body.result.url}/frame`);
  expect(frame.headers.get("content-security-policy")).toStartWith("sandbox allow-scripts;");
  expect(frame.headers.get("content-security-policy")).toContain("connect-src 'none'");
  // The code travels as JSON text, so "</script>" inside it cannot end the element.
  expect(await frame.text()).toContain(JSON.stringify("document.title = 'hi \u003c/script>'").replace("<", "\\u003c"));
  expect((await h.call("apps/run", { code: "x".repeat(256 * 1024 + 1) }, { token: alice })).status).toBe(413);
  expect((await fetch(`${h.url}/apps/run/nonesuch`)).status).toBe(404);
});

test("a created app is announced in the activity stream", async () => {
  const rows = (await sqlAll(h.rt, "SELECT type, text, url FROM activity WHERE service = 'apps' AND type = 'app.created'")) as any[];
  expect(rows.some((r) => r.text === 'alice made the app "Water Log!"' && r.url === `${h.url}/apps/water-log`)).toBe(true);
});
