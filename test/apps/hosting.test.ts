// Hosting over HTTP: the host page and its sandboxed frame, the per-person
// store behind the bridge, permissions, and priced opens through the ledger.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { sqlAll, sqlGet } from "../sql.ts";

let h: Hearth;
let alice: string;
let bob: string;
const clock = new TestClock();

const html = `<!doctype html><html><head><title>Tiny</title></head><body><p>tiny</p><script>hearth.store.get("k")</script></body></html>`;

beforeAll(async () => {
  h = await startHearth({ clock });
  alice = await h.token("alice");
  bob = await h.token("bob");
  await h.call("apps/create", { name: "Tiny", html }, { token: alice });
  await h.call("apps/create", { name: "Paid", html, price: 25 }, { token: alice });
});
afterAll(() => h.stop());

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${h.url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
const as = (token: string) => ({ authorization: `Bearer ${token}` });
const store = async (token: string, slug: string, body: Record<string, unknown>) => {
  const r = await post(`/apps/${slug}/store`, body, as(token));
  return { status: r.status, body: (await r.json()) as any };
};

test("the host page frames the app from the sandbox origin under a strict policy, and the instance's own origin serves it opaque", async () => {
  const r = await fetch(`${h.url}/apps/tiny`);
  expect(r.status).toBe(200);
  const text = await r.text();
  // An origin of its own: the same host name on the sandbox port, still sandboxed.
  expect(h.sandboxUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(h.sandboxUrl).not.toBe(h.url);
  expect(text).toMatch(/<iframe id="app-frame"[^>]*sandbox="allow-scripts allow-same-origin"/);
  expect(text).toContain(`"frame":"${h.sandboxUrl}/apps/tiny/frame"`);
  const csp = r.headers.get("content-security-policy")!;
  expect(csp).toContain(`frame-src ${h.sandboxUrl};`);
  expect(csp).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+';/);
  expect(csp).toContain("frame-ancestors 'none'");
  // The bridge's settings travel as data, never as script built from the app's fields.
  expect(text).toContain('<script type="application/json" id="app-data">');

  const frame = await fetch(`${h.url}/apps/tiny/frame`);
  expect(frame.status).toBe(200);
  const fcsp = frame.headers.get("content-security-policy")!;
  for (const part of ["sandbox allow-scripts", "default-src 'none'", "connect-src 'none'", "worker-src 'none'", "webrtc 'block'", "form-action 'none'", "frame-ancestors 'self'"]) expect(fcsp).toContain(part);
  expect(fcsp).not.toContain("allow-same-origin");
  const doc = await frame.text();
  // The guard and the SDK come first, right after the doctype, before anything the app runs.
  expect(doc).toStartWith("<!doctype html><script>(() => {");
  expect(doc).toContain("<p>tiny</p>");

  // On the sandbox origin the document keeps that origin, framed only by the instance's pages (any port of its name).
  const own = await fetch(`${h.sandboxUrl}/apps/tiny/frame`);
  expect(own.status).toBe(200);
  const ocsp = own.headers.get("content-security-policy")!;
  for (const part of ["sandbox allow-scripts allow-same-origin;", "connect-src 'none'", "form-action 'none'", "frame-ancestors http://127.0.0.1:*"]) expect(ocsp).toContain(part);
  expect(await own.text()).toStartWith("<!doctype html><script>(() => {");
});

test("the guard goes before the page's own code wherever that starts, and after a doctype, so the page keeps standards mode", async () => {
  const cases = [
    ["<script>early()</script><!doctype html><head></head>", "<script>(() => {"],
    ["<p>no doctype</p><head><script>late()</script></head>", "<script>(() => {"],
    ["  <!-- a note --> <!DOCTYPE html><script>early()</script><head>", "  <!-- a note --> <!DOCTYPE html><script>(() => {"],
    ["<!-- unclosed <!doctype html>", "<script>(() => {"],
  ];
  for (const [i, [page, start]] of cases.entries()) {
    expect((await h.call("apps/create", { name: `Order ${i}`, slug: `order-${i}`, html: page }, { token: alice })).status).toBe(200);
    const doc = await (await fetch(`${h.url}/apps/order-${i}/frame`)).text();
    expect(doc).toStartWith(start);
    expect(doc.indexOf("(() => {")).toBeLessThan(doc.search(/early|late|<p>|unclosed/));
  }
  // A closed shadow root made by the parser could hide a frame from the guard: the attribute is served inert.
  expect((await h.call("apps/create", { name: "Shadow", html: `<div><template shadowrootmode="closed"><iframe></iframe></template></div>` }, { token: alice })).status).toBe(200);
  const shadow = await (await fetch(`${h.url}/apps/shadow/frame`)).text();
  expect(shadow).not.toMatch(/ shadowrootmode=/i);
});

test("an app's name cannot break out of the host page", async () => {
  await h.call("apps/create", { name: `</script><script>alert(1)</script>`, slug: "xss", html, description: `<img src=x onerror=alert(2)>` }, { token: alice });
  const text = await (await fetch(`${h.url}/apps/xss`)).text();
  expect(text).not.toContain("<script>alert(1)");
  expect(text).not.toContain("<img src=x");
  expect(text).toContain("&lt;/script&gt;&lt;script&gt;alert(1)");
});

test("missing apps are a 404 page", async () => {
  expect((await fetch(`${h.url}/apps/no-such`)).status).toBe(404);
  expect((await fetch(`${h.url}/apps/no-such/frame`)).status).toBe(404);
  expect((await post("/apps/no-such/store", { op: "get", key: "k" }, as(alice))).status).toBe(404);
});

test("the directory lists apps, searches, and filters by tag", async () => {
  await h.call("apps/create", { name: "Sourdough timer", html, tags: "kitchen", description: "Feeds and folds" }, { token: bob });
  const all = await (await fetch(`${h.url}/apps`)).text();
  expect(all).toContain('href="/apps/counter"');
  expect(all).toContain('href="/apps/sourdough-timer"');
  expect(all).toContain('href="/apps?tag=kitchen"');
  const found = await (await fetch(`${h.url}/apps?q=folds`)).text();
  expect(found).toContain('href="/apps/sourdough-timer"');
  expect(found).not.toContain('href="/apps/counter"');
  const tagged = await (await fetch(`${h.url}/apps?tag=productivity`)).text();
  expect(tagged).toContain('href="/apps/checklist"');
  expect(tagged).toContain('href="/apps/habit-tracker"');
  expect(tagged).not.toContain('href="/apps/counter"');
  expect(await (await fetch(`${h.url}/apps?q=nothingmatchesthis`)).text()).toContain("No app matches.");
});

const allow = (token: string, slug: string, method: string, allow = true) => post(`/apps/${slug}/allow`, { method, allow }, as(token));

test("an app keeps data in someone's account only once they allow it, and not after they take it back", async () => {
  const before = await store(alice, "tiny", { op: "set", key: "k", value: 1 });
  expect(before.status).toBe(403);
  expect(before.body.error.message).toContain("not allowed");
  expect((await allow(alice, "tiny", "hearth.store")).status).toBe(200);
  expect((await store(alice, "tiny", { op: "set", key: "k", value: 1 })).status).toBe(200);
  expect((await store(alice, "tiny", { op: "get", key: "k" })).body.result).toBe(1);
  expect((await store(alice, "tiny", { op: "remove", key: "k" })).status).toBe(200);
  // Allowed per app and per person.
  expect((await store(alice, "counter", { op: "get", key: "k" })).status).toBe(403);
  expect((await store(bob, "tiny", { op: "get", key: "k" })).status).toBe(403);
  await allow(alice, "tiny", "hearth.store", false);
  expect((await store(alice, "tiny", { op: "get", key: "k" })).status).toBe(403);
  // Knowing who is looking is granted by name too; anything else is not a grant.
  expect((await allow(alice, "tiny", "hearth.user")).status).toBe(200);
  expect((await allow(alice, "tiny", "hearth.anything")).status).toBe(400);
  await allow(alice, "tiny", "hearth.user", false);
});

test("each app keeps a store per person, apart from other apps", async () => {
  for (const t of [alice, bob]) for (const slug of ["tiny", "counter"]) await allow(t, slug, "hearth.store");
  expect((await store(alice, "tiny", { op: "set", key: "note", value: { a: [1, 2] } })).status).toBe(200);
  expect((await store(alice, "tiny", { op: "get", key: "note" })).body.result).toEqual({ a: [1, 2] });
  expect((await store(bob, "tiny", { op: "get", key: "note" })).body.result).toBeNull();
  expect((await store(alice, "counter", { op: "get", key: "note" })).body.result).toBeNull();
  await store(alice, "tiny", { op: "set", key: "note2", value: 3 });
  await store(alice, "tiny", { op: "set", key: "other", value: "x" });
  expect((await store(alice, "tiny", { op: "keys" })).body.result).toEqual(["note", "note2", "other"]);
  expect((await store(alice, "tiny", { op: "keys", prefix: "note" })).body.result).toEqual(["note", "note2"]);
  await store(alice, "tiny", { op: "remove", key: "note" });
  expect((await store(alice, "tiny", { op: "get", key: "note" })).body.result).toBeNull();
  for (const t of [alice, bob]) for (const slug of ["tiny", "counter"]) await allow(t, slug, "hearth.store", false);
});

test("the store refuses strangers, bad requests and oversized values", async () => {
  await allow(alice, "tiny", "hearth.store");
  const nobody = await post("/apps/tiny/store", { op: "get", key: "k" });
  expect(nobody.status).toBe(401);
  const badOp = await store(alice, "tiny", { op: "drop" });
  expect(badOp.status).toBe(400);
  expect(badOp.body.error.field).toBe("op");
  const noKey = await store(alice, "tiny", { op: "get" });
  expect(noKey.body.error.field).toBe("key");
  const big = await store(alice, "tiny", { op: "set", key: "big", value: "x".repeat(64 * 1024) });
  expect(big.status).toBe(413);
  const deep = await fetch(`${h.url}/apps/tiny/store`, {
    method: "POST",
    headers: { ...as(alice), "content-type": "application/json" },
    body: `{"op": "set", "key": "deep", "value": ${"[".repeat(100_000)}${"]".repeat(100_000)}}`,
  });
  expect(deep.status).toBe(400);
  expect(((await deep.json()) as any).error).toMatchObject({ field: "value", message: expect.stringContaining("nested more than 100 levels") });
  expect((await store(alice, "tiny", { op: "get", key: "deep" })).body.result).toBeNull();
  const notJson = await fetch(`${h.url}/apps/tiny/store`, { method: "POST", headers: { ...as(alice), "content-type": "application/json" }, body: "{nope" });
  expect(notJson.status).toBe(400);
  await allow(alice, "tiny", "hearth.store", false);
});

test("a browser session must send its CSRF token to the store", async () => {
  const open = await startHearth({ env: { HEARTH_SIGNUP: "open" } });
  try {
    const s = await fetch(`${open.url}/signup`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username: "carol", password: "a long passphrase" }) });
    const cookie = s.headers.get("set-cookie")!.split(";")[0];
    const csrf = ((await s.json()) as any).result.csrf;
    const allowed = await fetch(`${open.url}/apps/counter/allow`, { method: "POST", headers: { cookie, "x-csrf-token": csrf, "content-type": "application/json" }, body: JSON.stringify({ method: "hearth.store" }) });
    expect(allowed.status).toBe(200);
    const without = await fetch(`${open.url}/apps/counter/store`, { method: "POST", headers: { cookie, "content-type": "application/json" }, body: JSON.stringify({ op: "set", key: "count", value: 1 }) });
    expect(without.status).toBe(403);
    const withToken = await fetch(`${open.url}/apps/counter/store`, {
      method: "POST",
      headers: { cookie, "x-csrf-token": csrf, "content-type": "application/json" },
      body: JSON.stringify({ op: "set", key: "count", value: 1 }),
    });
    expect(withToken.status).toBe(200);
    // The host page knows who is looking, and says so to the bridge.
    const page = await (await fetch(`${open.url}/apps/counter`, { headers: { cookie } })).text();
    expect(page).toContain('"signed_in":true,"username":"carol"');
  } finally {
    await open.stop();
  }
});

test("allowing a method is remembered per person and app; unknown methods are refused", async () => {
  const unknown = await post("/apps/tiny/allow", { method: "nope/nothing" }, as(alice));
  expect(unknown.status).toBe(400);
  expect(((await unknown.json()) as any).error.field).toBe("method");
  expect((await post("/apps/tiny/allow", { method: "notes/list" })).status).toBe(401);
  expect((await post("/apps/tiny/allow", { method: "notes/list" }, as(alice))).status).toBe(200);
  const grants = (token: string) => fetch(`${h.url}/apps/tiny`, { headers: as(token) }).then(async (r) => JSON.parse(/id="app-data">(.*?)<\/script>/.exec(await r.text())![1]).granted);
  expect(await grants(alice)).toEqual(["notes/list"]);
  expect(await grants(bob)).toEqual([]);
  await post("/apps/tiny/allow", { method: "notes/list", allow: false }, as(alice));
  expect(await grants(alice)).toEqual([]);
});

test("a priced app charges the opener once per open and credits its creator", async () => {
  const balance = async (token: string) => (await h.call("credits/balance", {}, { token })).body.result.balance;
  // Without paying, the frame is not served.
  expect((await fetch(`${h.url}/apps/paid/frame`, { headers: as(bob) })).status).toBe(402);
  const page = await (await fetch(`${h.url}/apps/paid`, { headers: as(bob) })).text();
  expect(page).toContain("Open for 25 credits");
  expect(page).toContain('"needs_ticket":true');

  const short = await post("/apps/paid/open", {}, as(bob));
  expect(short.status).toBe(402);
  expect(((await short.json()) as any).error.kind).toBe("payment_required");
  expect((await post("/apps/paid/open", {})).status).toBe(401);

  await h.grant("bob", 60);
  const creatorBefore = await balance(alice);
  const opened = (await (await post("/apps/paid/open", {}, as(bob))).json()) as any;
  expect(opened.result).toMatchObject({ charged: 25, balance: 35 });
  expect(await balance(bob)).toBe(35);
  expect(await balance(alice)).toBe(creatorBefore + 25);

  const frame = (token: string, ticket: string) => fetch(`${h.url}/apps/paid/frame?ticket=${encodeURIComponent(ticket)}`, { headers: as(token) });
  expect((await frame(bob, opened.result.ticket)).status).toBe(200);
  // Reloading the same open is not charged again.
  expect((await frame(bob, opened.result.ticket)).status).toBe(200);
  expect(await balance(bob)).toBe(35);
  // A ticket is its opener's alone.
  const carol = await h.token("carol");
  expect((await frame(carol, opened.result.ticket)).status).toBe(402);
  expect((await frame(bob, "made-up")).status).toBe(402);
  // An open does not last for ever.
  clock.advance(13 * 60 * 60 * 1000);
  expect((await frame(bob, opened.result.ticket)).status).toBe(402);

  // A second open is a second charge.
  await post("/apps/paid/open", {}, as(bob));
  expect(await balance(bob)).toBe(10);
  // The ledger says what each entry was.
  const rows = (await sqlAll(h.rt, "SELECT delta, reason, method, note FROM pay_ledger WHERE reason IN ('app','app_sale') ORDER BY id"));
  expect(rows).toEqual([
    { delta: -25, reason: "app", method: "apps/open", note: "open paid" },
    { delta: 25, reason: "app_sale", method: "apps/open", note: "open paid" },
    { delta: -25, reason: "app", method: "apps/open", note: "open paid" },
    { delta: 25, reason: "app_sale", method: "apps/open", note: "open paid" },
  ]);
});

test("the creator opens their own priced app free", async () => {
  const page = await (await fetch(`${h.url}/apps/paid`, { headers: as(alice) })).text();
  expect(page).toContain('"needs_ticket":false');
  expect((await fetch(`${h.url}/apps/paid/frame`, { headers: as(alice) })).status).toBe(200);
});

test("with metering off, priced apps open free", async () => {
  const free = await startHearth({ env: { HEARTH_METERING: "off" } });
  try {
    const t = await free.token("dave");
    const e = await free.token("erin");
    await free.call("apps/create", { name: "Paid", html, price: 10 }, { token: t });
    expect((await fetch(`${free.url}/apps/paid/frame`, { headers: { authorization: `Bearer ${e}` } })).status).toBe(200);
  } finally {
    await free.stop();
  }
});
