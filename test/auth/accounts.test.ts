// Accounts for people: sign-up rules and policy, the first admin, invitations,
// sign-in, and the growing wait after failed sign-ins.
import { afterEach, describe, expect, test } from "bun:test";
import { delayAfter, FREE_SPREAD } from "../../core/auth/backoff.ts";
import { rawRequest } from "../hardening/raw.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { get, post, signIn, signUp } from "./people.ts";

let h: Hearth | null = null;
afterEach(async () => {
  await h?.stop();
  h = null;
});

describe("sign-up", () => {
  test("the first account is the admin; the next is not", async () => {
    h = await startHearth({ env: { HEARTH_SIGNUP: "open" } });
    const a = await post(h, "/signup", { username: "Alice", password: "a long passphrase" });
    expect(a.status).toBe(200);
    expect(a.body.result).toMatchObject({ username: "alice", admin: true });
    const b = await post(h, "/signup", { username: "bob", password: "another passphrase" });
    expect(b.body.result).toMatchObject({ username: "bob", admin: false });
    const row = (await h.row<{ password: string }>("SELECT password FROM accounts WHERE username = 'bob'"))!;
    expect(row.password.startsWith("$argon2id$")).toBe(true);
    expect(row.password).not.toContain("another passphrase");
  });

  test("usernames are lowercase handles of 3-32 a-z0-9_-, reserved names refused, taken names conflict", async () => {
    h = await startHearth({ env: { HEARTH_SIGNUP: "open" } });
    for (const [username, pattern] of [
      ["ab", /3 to 32/],
      ["a".repeat(33), /3 to 32/],
      ["al ice", /3 to 32/],
      ["élise", /3 to 32/],
      ["admin", /reserved/],
      ["postmaster", /reserved/],
    ] as const) {
      const r = await post(h, "/signup", { username, password: "a long passphrase" });
      expect(r.status).toBe(400);
      expect(r.body.error.field).toBe("username");
      expect(r.body.error.message).toMatch(pattern);
    }
    await signUp(h, "carol");
    const again = await post(h, "/signup", { username: "CAROL", password: "a long passphrase" });
    expect(again.status).toBe(409);
    expect(again.body.error.kind).toBe("conflict");
  });

  test("passwords need 8 to 256 characters and may not be the username", async () => {
    h = await startHearth({ env: { HEARTH_SIGNUP: "open" } });
    for (const password of ["short", "x".repeat(257), "dave-the-user"]) {
      const r = await post(h, "/signup", { username: "dave-the-user", password });
      expect(r.status).toBe(400);
      expect(r.body.error.field).toBe("password");
    }
    const none = (await h.row<{ n: number }>("SELECT count(*) AS n FROM accounts"))!;
    expect(none.n).toBe(0);
  });

  test("invite-only by default once the admin exists; an admin's code works once", async () => {
    h = await startHearth();
    const admin = await signUp(h, "alice");
    const refused = await post(h, "/signup", { username: "bob", password: "a long passphrase" });
    expect(refused.status).toBe(400);
    expect(refused.body.error.field).toBe("invite");
    const bad = await post(h, "/signup", { username: "bob", password: "a long passphrase", invite: "made-up" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/not valid/);

    const inv = await post(h, "/invites", {}, { cookie: admin.cookie, "x-csrf-token": admin.csrf });
    expect(inv.status).toBe(200);
    expect(inv.body.result.url).toBe(`${h.url}/signup?invite=${inv.body.result.code}`);
    const bob = await signUp(h, "bob", "a long passphrase", { invite: inv.body.result.code });
    expect(bob.cookie).toStartWith("hearth_session=");
    const reused = await post(h, "/signup", { username: "carol", password: "a long passphrase", invite: inv.body.result.code });
    expect(reused.status).toBe(400);
    expect(reused.body.error.field).toBe("invite");

    // Only an admin invites.
    const byBob = await post(h, "/invites", {}, { cookie: bob.cookie, "x-csrf-token": bob.csrf });
    expect(byBob.status).toBe(403);
  });

  test("an invitation expires after its days", async () => {
    const clock = new TestClock();
    h = await startHearth({ clock });
    const admin = await signUp(h, "alice");
    const inv = await post(h, "/invites", {}, { cookie: admin.cookie, "x-csrf-token": admin.csrf });
    clock.advance(8 * 86_400_000);
    const late = await post(h, "/signup", { username: "bob", password: "a long passphrase", invite: inv.body.result.code });
    expect(late.status).toBe(400);
    expect(late.body.error.field).toBe("invite");
  });

  test("closed sign-up refuses everyone after the admin with 403", async () => {
    h = await startHearth({ env: { HEARTH_SIGNUP: "closed" } });
    await signUp(h, "alice");
    const r = await post(h, "/signup", { username: "bob", password: "a long passphrase" });
    expect(r.status).toBe(403);
    expect(r.body.error.message).toMatch(/closed/);
    const page = await get(h, "/signup", { accept: "text/html" });
    expect(page.text).toContain("Sign-up is closed");
  });

  test("a form posted from another site is refused", async () => {
    h = await startHearth();
    const r = await post(h, "/signup", { username: "alice", password: "a long passphrase" }, { origin: "https://evil.example" });
    expect(r.status).toBe(403);
    const none = (await h.row<{ n: number }>("SELECT count(*) AS n FROM accounts"))!;
    expect(none.n).toBe(0);
  });
});

describe("sign-in", () => {
  test("right password signs in; a wrong one or an unknown name gets the same 401", async () => {
    h = await startHearth();
    await signUp(h, "alice");
    const s = await signIn(h, "alice");
    expect(s.csrf.length).toBeGreaterThan(20);
    const wrong = await post(h, "/signin", { username: "alice", password: "not the passphrase" });
    const unknown = await post(h, "/signin", { username: "nobody-here", password: "not the passphrase" });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body.error.message).toBe(unknown.body.error.message);
    expect(wrong.headers.get("set-cookie")).toBeNull();
  });

  test("an account made without a password cannot be signed into", async () => {
    h = await startHearth();
    await h.token("eve");
    const r = await post(h, "/signin", { username: "eve", password: "anything at all" });
    expect(r.status).toBe(401);
  });

  test("failures make that username wait longer each time; others are not slowed; success resets", async () => {
    const clock = new TestClock();
    h = await startHearth({ clock, env: { HEARTH_RATE_SIGNIN: "0", HEARTH_SIGNUP: "open" } });
    await signUp(h, "alice");
    await signUp(h, "zed", "zed's passphrase");
    const miss = () => post(h!, "/signin", { username: "alice", password: "wrong guess!" });
    for (let i = 0; i < 3; i++) expect((await miss()).status).toBe(401);
    // The third miss starts a 1 s wait; during it even the right password is refused unchecked.
    const waiting = await post(h, "/signin", { username: "alice", password: "a long passphrase" });
    expect(waiting.status).toBe(429);
    expect(waiting.body.error.kind).toBe("rate_limited");
    expect(waiting.headers.get("retry-after")).toBe("1");
    // Someone else signs in meanwhile.
    expect((await signIn(h, "zed", "zed's passphrase")).cookie).toStartWith("hearth_session=");

    clock.advance(1000);
    expect((await miss()).status).toBe(401);
    const longer = await miss();
    expect(longer.status).toBe(429);
    expect(longer.headers.get("retry-after")).toBe("2");
    clock.advance(2000);
    expect((await signIn(h, "alice")).cookie).toStartWith("hearth_session=");
    // Success wiped the count: the next miss is free again.
    expect((await miss()).status).toBe(401);
    expect((await miss()).status).toBe(401);
  });

  test("misses from other addresses never hold back the person: each client waits for its own, and a device that signed in before passes the account-wide cap", async () => {
    const clock = new TestClock();
    h = await startHearth({ clock, env: { HEARTH_RATE_SIGNIN: "0", HEARTH_SIGNUP: "open" } });
    const port = Number(new URL(h.url).port);
    const up = await fetch(`${h.url}/signup`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username: "alice", password: "a long passphrase" }) });
    expect(up.status).toBe(200);
    const attempt = async (from: string, password: string, cookie?: string) =>
      (
        await rawRequest(port, {
          path: "/signin",
          from,
          headers: { "content-type": "application/json", ...(cookie ? { cookie } : {}) },
          body: JSON.stringify({ username: "alice", password }),
        })
      ).status;
    const RIGHT = "a long passphrase";

    // One stranger's misses make that stranger wait, and no one else.
    for (let i = 0; i < 3; i++) expect(await attempt("127.0.0.2", "wrong guess!")).toBe(401);
    expect(await attempt("127.0.0.2", "wrong guess!")).toBe(429);
    expect(await attempt("127.0.0.1", RIGHT)).toBe(200);
    expect(await attempt("127.0.0.3", RIGHT)).toBe(200);

    // Signing up (or in) left a cookie that marks this browser as the account's.
    const device = up.headers.getSetCookie().find((c) => c.startsWith("hearth_device="));
    expect(device).toContain("HttpOnly");
    const own = device!.split(";")[0];

    // Guessing spread over many addresses: past the account-wide allowance, every client the account does not know waits...
    // (the first stranger's three misses count towards it too)
    for (let i = 3; i < FREE_SPREAD; i++) expect(await attempt(`127.0.1.${i}`, `guess number ${i}`)).toBe(401);
    expect(await attempt("127.0.2.1", RIGHT)).toBe(429);
    expect(await attempt("127.0.0.1", RIGHT)).toBe(429);
    // ...but the person's own browser, recognised by its cookie, signs in from anywhere.
    expect(await attempt("127.0.0.1", RIGHT, own)).toBe(200);
    expect(await attempt("127.0.2.2", RIGHT, own)).toBe(200);
    // A cookie that is forged, or another account's, is no one's.
    const [name, value] = own.split("=");
    const parts = value.split(".");
    const forged = `${name}=${[...parts.slice(0, 3), parts[3].replace(/^./, (c) => (c === "A" ? "B" : "A"))].join(".")}`;
    expect(await attempt("127.0.0.1", RIGHT, forged)).toBe(429);
    expect(await attempt("127.0.0.1", RIGHT, own.replace("=alice.", "=bob.."))).toBe(429);
    // A recognised device still waits for the misses of the account's devices.
    for (let i = 0; i < 3; i++) expect(await attempt("127.0.0.1", "my typo here", own)).toBe(401);
    expect(await attempt("127.0.0.1", RIGHT, own)).toBe(429);

    // The account-wide wait passes like any other.
    clock.advance(delayAfter(FREE_SPREAD, FREE_SPREAD));
    expect(await attempt("127.0.2.3", RIGHT)).toBe(200);
  });

  test("the account's recognised devices wait for their misses together: more device cookies buy no more tries", async () => {
    const clock = new TestClock();
    h = await startHearth({ clock, env: { HEARTH_RATE_SIGNIN: "0", HEARTH_SIGNUP: "open" } });
    const deviceOf = (r: { headers: Headers }) => r.headers.getSetCookie().find((c) => c.startsWith("hearth_device="))!.split(";")[0];
    const up = await post(h, "/signup", { username: "alice", password: "a long passphrase" });
    // Each sign-in leaves a cookie of its own.
    const devices = [deviceOf(up)];
    for (let i = 0; i < 3; i++) devices.push(deviceOf(await post(h, "/signin", { username: "alice", password: "a long passphrase" })));
    expect(new Set(devices).size).toBe(4);
    const attempt = async (cookie: string, password: string) => (await post(h!, "/signin", { username: "alice", password }, { cookie })).status;
    // Three misses spread over three of the cookies use up the devices' allowance...
    for (let i = 0; i < 3; i++) expect(await attempt(devices[i], "wrong guess!")).toBe(401);
    // ...so the fourth cookie waits as the first three do, even with the right password.
    expect(await attempt(devices[3], "a long passphrase")).toBe(429);
    expect(await attempt(devices[0], "a long passphrase")).toBe(429);
    // A stranger's address has a count of its own and is not held back by the devices' misses.
    expect((await post(h, "/signin", { username: "alice", password: "a long passphrase" })).status).toBe(200);
    clock.advance(1000);
    expect(await attempt(devices[3], "a long passphrase")).toBe(200);
  });

  test("the wait doubles and stops at 15 minutes", () => {
    expect([1, 2, 3, 4, 5, 6].map((n) => delayAfter(n))).toEqual([0, 0, 1000, 2000, 4000, 8000]);
    expect(delayAfter(40)).toBe(15 * 60_000);
  });

  test("sign-in attempts per address have their own tight limit with Retry-After", async () => {
    const clock = new TestClock();
    h = await startHearth({ clock, env: { HEARTH_RATE_SIGNIN: "2" } });
    const a = await post(h, "/signin", { username: "a1234", password: "whatever123" });
    const b = await post(h, "/signin", { username: "b1234", password: "whatever123" });
    expect([a.status, b.status]).toEqual([401, 401]);
    const c = await post(h, "/signin", { username: "c1234", password: "whatever123" });
    expect(c.status).toBe(429);
    expect(Number(c.headers.get("retry-after"))).toBe(30);
    // API calls are counted apart from sign-ins.
    expect((await h.call("notes/list")).status).toBe(401);
    clock.advance(30_000);
    expect((await post(h, "/signin", { username: "c1234", password: "whatever123" })).status).toBe(401);
  });
});
