// Sessions: the cookie's flags, reads on the cookie, CSRF on cookie POSTs to
// the API and to plugin routes, sign-out, sign-out everywhere, expiry.
import { afterEach, describe, expect, test } from "bun:test";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { form, get, GUESTBOOK, post, signIn, signUp } from "./people.ts";

let h: Hearth | null = null;
afterEach(async () => {
  await h?.stop();
  h = null;
});

const notesOf = async (hh: Hearth) => (await hh.row<{ n: number }>("SELECT count(*) AS n FROM notes"))!.n;

describe("the session cookie", () => {
  test("is HttpOnly, SameSite=Lax, path /, and not Secure over plain http", async () => {
    h = await startHearth();
    const s = await signUp(h, "alice");
    const flags = s.setCookie.split(";").map((p) => p.trim());
    expect(flags).toContain("HttpOnly");
    expect(flags).toContain("SameSite=Lax");
    expect(flags).toContain("Path=/");
    expect(flags).not.toContain("Secure");
    // Only a hash of the cookie's secret is stored.
    const secret = s.cookie.split("=")[1];
    const rows = await h.rows<{ hash: string }>("SELECT hash FROM sessions");
    expect(rows.length).toBe(1);
    expect(rows[0].hash).not.toBe(secret);
  });

  test("is Secure behind a proxy that says the page is https", async () => {
    h = await startHearth();
    const r = await post(h, "/signup", { username: "alice", password: "a long passphrase" }, { "x-forwarded-proto": "https" });
    expect(r.headers.get("set-cookie")!.split(";").map((p) => p.trim())).toContain("Secure");
  });

  test("works for reads with no CSRF token", async () => {
    h = await startHearth();
    const s = await signUp(h, "alice");
    const r = await h.call("notes/list", {}, { headers: { cookie: s.cookie } });
    expect(r.status).toBe(200);
    expect(r.body.result).toEqual([]);
    const who = await get(h, "/session", { cookie: s.cookie });
    expect(who.body.result).toMatchObject({ username: "alice", admin: true, csrf: s.csrf });
  });
});

describe("CSRF", () => {
  test("a cookie POST without X-CSRF-Token is 403 and changes nothing; with it, it runs", async () => {
    h = await startHearth();
    const s = await signUp(h, "alice");
    const bare = await h.call("notes/add", { title: "t", text: "x" }, { headers: { cookie: s.cookie } });
    expect(bare.status).toBe(403);
    expect(bare.body.error.kind).toBe("forbidden");
    expect(bare.body.error.message).toContain("X-CSRF-Token");
    expect(await notesOf(h)).toBe(0);

    const wrong = await h.call("notes/add", { title: "t", text: "x" }, { headers: { cookie: s.cookie, "x-csrf-token": s.csrf.slice(0, -1) + (s.csrf.endsWith("A") ? "B" : "A") } });
    expect(wrong.status).toBe(403);
    expect(await notesOf(h)).toBe(0);

    // A read sent as POST rests on the cookie too.
    const readPost = await h.call("notes/list", {}, { method: "POST", headers: { cookie: s.cookie } });
    expect(readPost.status).toBe(403);

    const ok = await h.call("notes/add", { title: "t", text: "x" }, { headers: { cookie: s.cookie, "x-csrf-token": s.csrf } });
    expect(ok.status).toBe(200);
    expect(await notesOf(h)).toBe(1);
  });

  test("another session's CSRF token does not do", async () => {
    h = await startHearth({ env: { HEARTH_SIGNUP: "open" } });
    const a = await signUp(h, "alice");
    const b = await signUp(h, "bob");
    const r = await h.call("notes/add", { title: "t", text: "x" }, { headers: { cookie: a.cookie, "x-csrf-token": b.csrf } });
    expect(r.status).toBe(403);
    expect(await notesOf(h)).toBe(0);
  });

  test("a token request never needs it, even with a cookie beside it", async () => {
    h = await startHearth();
    const s = await signUp(h, "alice");
    const token = await h.token("alice", { scopes: ["notes"] });
    const r = await h.call("notes/add", { title: "t", text: "x" }, { token, headers: { cookie: s.cookie } });
    expect(r.status).toBe(200);
  });

  test("cookie POSTs to plugin routes need it as well", async () => {
    h = await startHearth({ env: { HEARTH_PLUGINS: GUESTBOOK } });
    const s = await signUp(h, "alice");
    const signs = async () => (await h!.rows<{ who: string }>("SELECT who FROM guestbook_entries")).map((r) => r.who);
    const bare = await fetch(`${h.url}/guestbook/sign`, { method: "POST", headers: { cookie: s.cookie }, body: "hello" });
    expect(bare.status).toBe(403);
    expect(await signs()).toEqual([]);
    const ok = await fetch(`${h.url}/guestbook/sign`, { method: "POST", headers: { cookie: s.cookie, "x-csrf-token": s.csrf }, body: "hello" });
    expect(ok.status).toBe(201);
    expect(await signs()).toEqual(["alice"]);
  });

  test("a GET that costs credits rests on the cookie only with X-CSRF-Token or from this instance's own pages", async () => {
    h = await startHearth({ env: { HEARTH_METER_ACCOUNTS: "all", HEARTH_PLUGINS: GUESTBOOK } });
    const s = await signUp(h, "alice");
    await h.grant("alice", 20);
    const balance = async () => (await h!.call("credits/balance", {}, { headers: { cookie: s.cookie } })).body.result.balance as number;
    const appraise = (headers: Record<string, string>) => h!.call("guestbook/appraise", {}, { headers: { cookie: s.cookie, ...headers } });
    // What another site can make a signed-in browser send: a link or an image (cross-site), or a page with no fetch metadata at all.
    const foreign: Record<string, string>[] = [
      { "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate" },
      {},
      { "sec-fetch-site": "same-site" },
    ];
    for (const headers of foreign) {
      const r = await appraise(headers);
      expect(r.status).toBe(403);
      expect(r.body.error.message).toContain("X-CSRF-Token");
    }
    // A request another origin's page made carries no session at all: it is a stranger's, asked to pay.
    expect((await appraise({ "sec-fetch-site": "same-origin", origin: "https://elsewhere.example" })).status).toBe(402);
    expect(await balance()).toBe(20);
    // Free reads still rest on the cookie alone.
    expect((await h.call("guestbook/list", {}, { headers: { cookie: s.cookie, "sec-fetch-site": "cross-site" } })).status).toBe(200);
    // The session's token, or a fetch from this instance's own page, may spend.
    expect((await appraise({ "x-csrf-token": s.csrf })).status).toBe(200);
    expect((await appraise({ "sec-fetch-site": "same-origin" })).status).toBe(200);
    expect((await appraise({ "sec-fetch-site": "same-origin", origin: h.url })).status).toBe(200);
    expect(await balance()).toBe(14);
    // The services page's form sends the token with the call, so it still runs there.
    const tried = await form(h, "/services", [["csrf", s.csrf], ["method", "guestbook/appraise"]], { cookie: s.cookie });
    expect(tried.status).toBe(200);
    expect(tried.text).toContain("HTTP 200");
    expect(await balance()).toBe(12);
  });

  test("the JSON token routes need it too", async () => {
    h = await startHearth();
    const s = await signUp(h, "alice");
    const r = await post(h, "/token", { name: "laptop" }, { cookie: s.cookie });
    expect(r.status).toBe(403);
    const count = (await h.row<{ n: number }>("SELECT count(*) AS n FROM tokens"))!;
    expect(count.n).toBe(0);
  });
});

describe("signing out", () => {
  test("sign-out ends this session at once; a stale cookie is nobody", async () => {
    h = await startHearth();
    const s = await signUp(h, "alice");
    const out = await post(h, "/signout", {}, { cookie: s.cookie, "x-csrf-token": s.csrf });
    expect(out.status).toBe(200);
    expect(out.headers.get("set-cookie")).toContain("Max-Age=0");
    const after = await h.call("notes/list", {}, { headers: { cookie: s.cookie } });
    expect(after.status).toBe(401);
    expect((await get(h, "/session", { cookie: s.cookie })).status).toBe(401);
  });

  test("sign-out needs the CSRF token, so another site cannot sign a person out", async () => {
    h = await startHearth();
    const s = await signUp(h, "alice");
    expect((await post(h, "/signout", {}, { cookie: s.cookie })).status).toBe(403);
    expect((await h.call("notes/list", {}, { headers: { cookie: s.cookie } })).status).toBe(200);
  });

  test("sign-out everywhere ends every session of the account, and no one else's", async () => {
    h = await startHearth({ env: { HEARTH_SIGNUP: "open" } });
    const one = await signUp(h, "alice");
    const two = await signIn(h, "alice");
    const bob = await signUp(h, "bob");
    const r = await post(h, "/signout/all", {}, { cookie: one.cookie, "x-csrf-token": one.csrf });
    expect(r.body.result.signed_out).toBe(2);
    expect((await h.call("notes/list", {}, { headers: { cookie: two.cookie } })).status).toBe(401);
    expect((await h.call("notes/list", {}, { headers: { cookie: bob.cookie } })).status).toBe(200);
  });

  test("a session expires after HEARTH_SESSION_DAYS", async () => {
    const clock = new TestClock();
    h = await startHearth({ clock, env: { HEARTH_SESSION_DAYS: "2" } });
    const s = await signUp(h, "alice");
    expect(s.setCookie).toContain(`Max-Age=${2 * 86_400}`);
    clock.advance(2 * 86_400_000 - 1000);
    expect((await h.call("notes/list", {}, { headers: { cookie: s.cookie } })).status).toBe(200);
    // Use is noted coarsely, not on every request.
    await h.call("notes/list", {}, { headers: { cookie: s.cookie } });
    expect((await h.row<{ last_seen: number }>("SELECT last_seen FROM sessions"))!.last_seen).toBe(clock.t);
    clock.advance(2000);
    expect((await h.call("notes/list", {}, { headers: { cookie: s.cookie } })).status).toBe(401);
  });
});

describe("pages", () => {
  test("sign-in form sets the cookie and goes where it was asked, but only on this instance", async () => {
    h = await startHearth();
    await signUp(h, "alice");
    const signin = (next: string) =>
      fetch(`${h!.url}/signin`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", origin: h!.url },
        body: new URLSearchParams({ username: "alice", password: "a long passphrase", next }).toString(),
        redirect: "manual",
      });
    const local = await signin("/token");
    expect(local.status).toBe(303);
    expect(local.headers.get("location")).toBe("/token");
    expect(local.headers.get("set-cookie")).toContain("HttpOnly");
    // With no return address, or one elsewhere, sign-in lands on the home page.
    for (const away of ["", "https://evil.example/", "//evil.example/x", "/\\evil.example"]) {
      expect((await signin(away)).headers.get("location")).toBe("/");
    }
  });

  test("a wrong password on the form shows the form again with the message, announced as an alert", async () => {
    h = await startHearth();
    await signUp(h, "alice");
    const r = await fetch(`${h.url}/signin`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: h.url },
      body: "username=alice&password=nope-nope-nope",
    });
    expect(r.status).toBe(401);
    const text = await r.text();
    expect(text).toContain('role="alert"');
    expect(text).toContain("username or password is wrong");
    expect(text).toContain('value="alice"');
    expect(text).not.toContain("nope-nope-nope");
  });

  test("pages are self-contained: no script but the instance's own passkey script, no asset from elsewhere, a viewport for phones, not cached", async () => {
    h = await startHearth();
    for (const path of ["/signin", "/signup"]) {
      const r = await get(h, path, { accept: "text/html" });
      expect(r.status).toBe(200);
      expect(r.headers.get("cache-control")).toBe("no-store");
      expect(r.headers.get("content-security-policy")).toContain("default-src 'none'");
      expect(r.text).toContain('<meta name="viewport"');
      expect(r.text).toContain('<html lang="en">');
      // Sign-in may run the passkey script this instance serves, and nothing inline or from elsewhere.
      expect(r.headers.get("content-security-policy")).not.toMatch(/script-src[^;]*(unsafe|http|\*)/);
      expect(r.text.replace('<script src="/passkeys.js" defer></script>', "")).not.toMatch(/<script|<link[^>]+stylesheet|src="http|href="http/);
      // Every input has a label pointing at it.
      for (const [, id] of r.text.matchAll(/<input type="(?:text|password)" id="([^"]+)"/g)) expect(r.text).toContain(`<label for="${id}">`);
    }
  });
});
