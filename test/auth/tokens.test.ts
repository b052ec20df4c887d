// Tokens made by people: POST /token, GET /token, POST /token/revoke and the
// page; scopes from the registry; expiry and revocation refused at once.
import { afterEach, describe, expect, test } from "bun:test";
import { safeEqual } from "../../core/auth/ids.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { form, get, GUESTBOOK, post, signUp, type Signed } from "./people.ts";

let h: Hearth | null = null;
afterEach(async () => {
  await h?.stop();
  h = null;
});

const make = (hh: Hearth, s: Signed, body: Record<string, unknown>) => post(hh, "/token", body, { cookie: s.cookie, "x-csrf-token": s.csrf });

describe("POST /token", () => {
  test("returns the token once, with id, scopes and expiry; only its hash is stored", async () => {
    const clock = new TestClock();
    h = await startHearth({ clock });
    const s = await signUp(h, "alice");
    const r = await make(h, s, { name: "laptop", scopes: ["notes"], days: 30 });
    expect(r.status).toBe(200);
    const t = r.body.result;
    expect(Object.keys(t).sort()).toEqual(["expires", "id", "scopes", "token"]);
    expect(t.token).toStartWith("hth_");
    expect(t.scopes).toEqual(["notes"]);
    expect(t.expires).toBe(new Date(clock.t + 30 * 86_400_000).toISOString());
    const dump = JSON.stringify(await h.rows("SELECT * FROM tokens"));
    expect(dump).not.toContain(t.token);
    expect(dump).not.toContain(t.token.slice(4));
    const listed = await get(h, "/token", { cookie: s.cookie });
    expect(JSON.stringify(listed.body)).not.toContain(t.token);
  });

  test("scopes are the registry's services: all by default, unknown names refused by name", async () => {
    h = await startHearth();
    const s = await signUp(h, "alice");
    expect((await make(h, s, { name: "all" })).body.result.scopes).toBe("*");
    expect((await make(h, s, { name: "star", scopes: "*" })).body.result.scopes).toBe("*");
    expect((await make(h, s, { name: "two", scopes: "tasks,notes" })).body.result.scopes).toEqual(["notes", "tasks"]);
    const bad = await make(h, s, { name: "bad", scopes: ["notes", "nonesuch"] });
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe("scopes");
    expect(bad.body.error.message).toContain('"nonesuch"');
    for (const svc of h.rt.registry.services()) expect(bad.body.error.message).toContain(svc);
    expect((await make(h, s, { name: "empty", scopes: [] })).status).toBe(400);
  });

  test("name and expiry are checked, each refusal naming its field", async () => {
    h = await startHearth();
    const s = await signUp(h, "alice");
    for (const [body, field] of [
      [{}, "name"],
      [{ name: "x".repeat(101) }, "name"],
      [{ name: "a", expires: "tomorrow" }, "expires"],
      [{ name: "a", expires: "2001-01-01T00:00:00Z" }, "expires"],
      [{ name: "a", days: -1 }, "days"],
    ] as const) {
      const r = await make(h, s, body);
      expect(r.status).toBe(400);
      expect(r.body.error.field).toBe(field);
    }
  });

  test("needs a session: no cookie is 401, and a bearer token alone cannot mint tokens", async () => {
    h = await startHearth();
    const token = await h.token("alice");
    expect((await post(h, "/token", { name: "x" })).status).toBe(401);
    expect((await post(h, "/token", { name: "x" }, { authorization: `Bearer ${token}` })).status).toBe(401);
  });
});

describe("scope, expiry and revocation on calls", () => {
  test("a token scoped to notes gets 403 on tasks/list and works on notes", async () => {
    h = await startHearth();
    const s = await signUp(h, "alice");
    const { token } = (await make(h, s, { name: "notes only", scopes: ["notes"] })).body.result;
    const tasks = await h.call("tasks/list", {}, { token });
    expect(tasks.status).toBe(403);
    expect(tasks.body.error.kind).toBe("forbidden");
    expect((await h.call("notes/add", { title: "a", text: "b" }, { token })).status).toBe(200);
    expect((await h.call("notes/get", { title: "a" }, { token })).body.result.text).toBe("b");
  });

  test("on a plugin's own pages a token out of scope carries no account", async () => {
    h = await startHearth({ env: { HEARTH_PLUGINS: GUESTBOOK } });
    const narrow = await h.token("alice", { scopes: ["notes"] });
    const wide = await h.token("alice", { scopes: ["guestbook"] });
    const sign = (token: string) => fetch(`${h!.url}/guestbook/sign`, { method: "POST", headers: { authorization: `Bearer ${token}` }, body: "hi" });
    expect((await sign(narrow)).status).toBe(201);
    expect((await sign(wide)).status).toBe(201);
    const who = (await h.rows<{ who: string }>("SELECT who FROM guestbook_entries")).map((r) => r.who);
    expect(who).toEqual(["stranger", "alice"]);
  });

  test("a revoked token is 401 on the very next call", async () => {
    h = await startHearth();
    const s = await signUp(h, "alice");
    const { token, id } = (await make(h, s, { name: "soon gone" })).body.result;
    // Warm the token cache, so revocation has to clear it.
    expect((await h.call("notes/list", {}, { token })).status).toBe(200);
    const r = await post(h, "/token/revoke", { id }, { cookie: s.cookie, "x-csrf-token": s.csrf });
    expect(r.body.result).toEqual({ revoked: id });
    const after = await h.call("notes/list", {}, { token });
    expect(after.status).toBe(401);
    expect(after.body.error.kind).toBe("unauthenticated");
    const listed = await get(h, "/token", { cookie: s.cookie });
    expect(listed.body.result.map((t: { id: string }) => t.id)).not.toContain(id);
  });

  test("one cannot revoke another person's token", async () => {
    h = await startHearth({ env: { HEARTH_SIGNUP: "open" } });
    const a = await signUp(h, "alice");
    const b = await signUp(h, "bob");
    const { token, id } = (await make(h, a, { name: "mine" })).body.result;
    const r = await post(h, "/token/revoke", { id }, { cookie: b.cookie, "x-csrf-token": b.csrf });
    expect(r.status).toBe(404);
    expect((await h.call("notes/list", {}, { token })).status).toBe(200);
  });

  test("an expired token is 401 as soon as its time passes, and is listed as expired", async () => {
    const clock = new TestClock();
    h = await startHearth({ clock });
    const s = await signUp(h, "alice");
    const { token } = (await make(h, s, { name: "a day", days: 1 })).body.result;
    expect((await h.call("notes/list", {}, { token })).status).toBe(200);
    clock.advance(86_400_000);
    const r = await h.call("notes/list", {}, { token });
    expect(r.status).toBe(401);
    expect(r.body.error.message).toMatch(/expired/);
    const listed = await get(h, "/token", { cookie: s.cookie });
    expect(listed.body.result[0]).toMatchObject({ name: "a day", expired: true });
  });

  test("the list shows name, scope, created and last use", async () => {
    const clock = new TestClock();
    h = await startHearth({ clock });
    const s = await signUp(h, "alice");
    const { token } = (await make(h, s, { name: "phone", scopes: ["notes"], expires: "2026-06-01T00:00:00Z" })).body.result;
    let listed = (await get(h, "/token", { cookie: s.cookie })).body.result;
    expect(listed[0]).toMatchObject({ name: "phone", scopes: ["notes"], created: clock.now().toISOString(), last_used: null, expires: "2026-06-01T00:00:00.000Z" });
    await h.call("notes/list", {}, { token });
    listed = (await get(h, "/token", { cookie: s.cookie })).body.result;
    expect(listed[0].last_used).toBe(clock.now().toISOString());
  });
});

describe("the /token page", () => {
  test("without a session it sends the browser to sign in", async () => {
    h = await startHearth();
    const r = await get(h, "/token", { accept: "text/html" });
    expect(r.status).toBe(303);
    expect(r.headers.get("location")).toBe("/signin?next=/token");
  });

  test("lists every registered service as a scope, and makes a token shown once", async () => {
    h = await startHearth();
    const s = await signUp(h, "alice");
    const p = await get(h, "/token", { cookie: s.cookie, accept: "text/html" });
    expect(p.status).toBe(200);
    for (const svc of h.rt.registry.services()) expect(p.text).toContain(`name="scopes" value="${svc}"`);
    expect(p.text).toContain(`<meta name="csrf-token" content="${s.csrf}">`);

    const made = await form(h, "/token", [["csrf", s.csrf], ["name", "script <b>"], ["scope", "some"], ["scopes", "notes"], ["days", "7"]], { cookie: s.cookie });
    expect(made.status).toBe(200);
    const token = /<code class="secret" id="new-token">([^<]+)<\/code>/.exec(made.text)![1];
    expect((await h.call("notes/list", {}, { token })).status).toBe(200);
    expect((await h.call("tasks/list", {}, { token })).status).toBe(403);
    // The name is escaped, not markup.
    expect(made.text).toContain("script &lt;b&gt;");
    // Shown once: the page afterwards does not have it.
    const again = await get(h, "/token", { cookie: s.cookie, accept: "text/html" });
    expect(again.text).not.toContain(token);
    expect(again.text).toContain("script &lt;b&gt;");
  });

  test("the form without its CSRF field is refused and makes nothing", async () => {
    h = await startHearth();
    const s = await signUp(h, "alice");
    const r = await form(h, "/token", [["name", "x"]], { cookie: s.cookie });
    expect(r.status).toBe(403);
    expect((await h.row<{ n: number }>("SELECT count(*) AS n FROM tokens"))!.n).toBe(0);
  });

  test("choosing some services but ticking none is refused with the form kept", async () => {
    h = await startHearth();
    const s = await signUp(h, "alice");
    const r = await form(h, "/token", [["csrf", s.csrf], ["name", "keep me"], ["scope", "some"]], { cookie: s.cookie });
    expect(r.status).toBe(400);
    expect(r.text).toContain('role="alert"');
    expect(r.text).toContain('value="keep me"');
  });

  test("revoking from the page", async () => {
    h = await startHearth();
    const s = await signUp(h, "alice");
    const { token, id } = (await make(h, s, { name: "old" })).body.result;
    const r = await form(h, "/token/revoke", [["csrf", s.csrf], ["id", id]], { cookie: s.cookie });
    expect(r.status).toBe(303);
    expect(r.headers.get("location")).toBe("/token?done=revoked");
    expect((await h.call("notes/list", {}, { token })).status).toBe(401);
  });
});

test("secrets are compared in constant time for their length", () => {
  expect(safeEqual("abc", "abc")).toBe(true);
  expect(safeEqual("abc", "abd")).toBe(false);
  expect(safeEqual("abc", "abcd")).toBe(false);
  expect(safeEqual("", "")).toBe(true);
});
