// A person who lost their phone and their recovery codes: an admin turns
// their two-factor sign-in off and removes their passkeys from /people, or
// the owner does at the shell with `hearth password --reset-2fa`. Their
// sessions end, the activity log says so, and the person is told the next
// time they sign in; an admin doing it to themselves gives their password.
import { afterEach, expect, test } from "bun:test";
import { rmSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Secret, TOTP } from "otpauth";
import { startHearth, storeEnv, TestClock, type Hearth } from "../harness.ts";
import { form, get, post, signIn, signUp, type Signed } from "../auth/people.ts";

let h: Hearth | null = null;
afterEach(async () => {
  await h?.stop();
  h = null;
});

const as = (s: Signed) => ({ cookie: s.cookie, "x-csrf-token": s.csrf });
const codeAt = (secret: string, t: number) => new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: "SHA1" }).generate({ timestamp: t });

async function withTotp(hh: Hearth, clock: TestClock, s: Signed) {
  const { secret } = (await post(hh, "/account/totp/start", {}, as(s))).body.result;
  expect((await post(hh, "/account/totp/confirm", { code: codeAt(secret, clock.t) }, as(s))).status).toBe(200);
}

/** A passkey row as registration leaves it: what the reset must remove (registering one needs a browser, test/settings/browser.test.ts). */
async function withPasskey(hh: Hearth, username: string, name: string) {
  const acc = (await hh.row<{ id: string }>("SELECT id FROM accounts WHERE username = ?", username))!;
  await hh.exec("INSERT INTO passkeys (id, account, name, public_key, counter, created) VALUES (?, ?, ?, ?, 0, ?)", `cred-${name}`, acc.id, name, "AAAA", Date.now());
}

const activity = async (hh: Hearth, s: Signed) => ((await get(hh, "/activity", { cookie: s.cookie })).body.result.entries as any[]).filter((e) => e.method === "reset_two_factor");

test("an admin turns off a person's two-factor sign-in and passkeys: sessions end, the log says so, and the person is told once", async () => {
  const clock = new TestClock();
  h = await startHearth({ clock, env: { HEARTH_RATE_SIGNIN: "0", HEARTH_SIGNUP: "open" } });
  const admin = await signUp(h, "alice");
  const bob = await signUp(h, "bob");
  await withTotp(h, clock, bob);
  await withPasskey(h, "bob", "phone");
  const other = await post(h, "/signin", { username: "bob", password: "a long passphrase" });
  expect(other.body.result.second_factor).toBe("code");

  // Someone who is not an admin may not.
  expect((await post(h, "/people", { action: "reset2fa", user: "alice" }, as(bob))).status).toBe(403);

  const r = await post(h, "/people", { action: "reset2fa", user: "bob" }, as(admin));
  expect(r.status).toBe(200);
  expect(r.body.result).toEqual({ user: "bob", two_factor: false, passkeys_removed: 1, sessions_ended: 1 });
  expect((await get(h, "/session", { cookie: bob.cookie })).status).toBe(401);
  expect(await h.row("SELECT account FROM totp_secrets")).toBeUndefined();
  expect(await h.row("SELECT account FROM recovery_codes")).toBeUndefined();
  expect(await h.row("SELECT id FROM passkeys")).toBeUndefined();

  // Nothing left to turn off: said, and nothing written.
  const again = await post(h, "/people", { action: "reset2fa", user: "bob" }, as(admin));
  expect(again.status).toBe(409);

  // The password alone signs bob in; a browser lands on /account, which tells them once.
  const signed = await form(h, "/signin", [["username", "bob"], ["password", "a long passphrase"], ["next", "/notes"]]);
  expect(signed.status).toBe(303);
  expect(signed.headers.get("location")).toBe("/account");
  const cookie = signed.headers.get("set-cookie")!.split(";")[0];
  const page = await get(h, "/account", { cookie, accept: "text/html" });
  expect(page.text).toContain("The admin alice turned off your two-factor sign-in and removed your passkeys");
  expect((await get(h, "/account", { cookie, accept: "text/html" })).text).not.toContain("turned off your two-factor");
  const state = (await get(h, "/account", { cookie })).body.result;
  expect(state.two_factor.on).toBe(false);
  expect(state.passkeys).toEqual([]);

  // Both activity logs have it; the person's names who did it.
  const seen = await signIn(h, "bob");
  const bobs = await activity(h, seen);
  expect(bobs).toHaveLength(1);
  expect(bobs[0]).toMatchObject({ service: "people", outcome: "ok", args: { user: "bob", by: "alice" } });
  expect(await activity(h, admin)).toHaveLength(1);
});

test("a program signing in is told in the answer", async () => {
  const clock = new TestClock();
  h = await startHearth({ clock, env: { HEARTH_RATE_SIGNIN: "0", HEARTH_SIGNUP: "open" } });
  const admin = await signUp(h, "alice");
  const bob = await signUp(h, "bob");
  await withTotp(h, clock, bob);
  expect((await post(h, "/people", { action: "reset2fa", user: "bob" }, as(admin))).status).toBe(200);
  const r = await post(h, "/signin", { username: "bob", password: "a long passphrase" });
  expect(r.status).toBe(200);
  expect(r.body.result.notices).toHaveLength(1);
  expect(r.body.result.notices[0]).toContain("turned off your two-factor sign-in");
  expect((await post(h, "/signin", { username: "bob", password: "a long passphrase" })).body.result.notices).toBeUndefined();
});

test("an admin turning off their own needs their password; this session stays, the others end", async () => {
  const clock = new TestClock();
  h = await startHearth({ clock, env: { HEARTH_RATE_SIGNIN: "0" } });
  const admin = await signUp(h, "alice");
  await withPasskey(h, "alice", "laptop");
  const elsewhere = await signIn(h, "alice");
  for (const password of [undefined, "not my password"]) {
    const r = await post(h, "/people", { action: "reset2fa", user: "alice", password }, as(admin));
    expect(r.status).toBe(400);
    expect(r.body.error.field).toBe("password");
  }
  expect(await h.row("SELECT id FROM passkeys")).toBeTruthy();
  expect((await get(h, "/session", { cookie: elsewhere.cookie })).status).toBe(200);

  const r = await post(h, "/people", { action: "reset2fa", user: "alice", password: "a long passphrase" }, as(admin));
  expect(r.status).toBe(200);
  expect(r.body.result).toMatchObject({ passkeys_removed: 1, sessions_ended: 1 });
  expect((await get(h, "/session", { cookie: admin.cookie })).status).toBe(200);
  expect((await get(h, "/session", { cookie: elsewhere.cookie })).status).toBe(401);
  // Nobody else did it: nothing to be told.
  expect((await post(h, "/signin", { username: "alice", password: "a long passphrase" })).body.result.notices).toBeUndefined();
});

test("hearth password --reset-2fa does it at the shell", async () => {
  const dir = mkdtempSync(join(tmpdir(), "hearth-reset2fa-"));
  const stores = await storeEnv(dir);
  const clock = new TestClock(Date.now());
  try {
    h = await startHearth({ clock, dataDir: dir, env: { ...stores, HEARTH_RATE_SIGNIN: "0" } });
    const bob = await signUp(h, "bob");
    await withTotp(h, clock, bob);
    const run = async (args: string[]) => {
      const p = Bun.spawn(["bun", join(import.meta.dir, "../../core/cli/main.ts"), ...args], {
        env: { ...process.env, ...stores, HEARTH_DATA: dir, HEARTH_LOG: "off", HEARTH_URL: "http://hearth.test" },
        stdout: "pipe",
        stderr: "pipe",
      });
      const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
      return { stdout: stdout.trim(), stderr: stderr.trim(), code };
    };
    const none = await run(["password", "--user", "nobody", "--reset-2fa"]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('no account named "nobody"');

    const done = await run(["password", "--user", "bob", "--reset-2fa"]);
    expect(done.stderr).toBe("bob signs in with their password alone now, and is told what happened when they do");
    expect(done.code).toBe(0);
    expect(done.stdout).toBe("bob: two-factor sign-in turned off; signed out of 1 browser session");
    expect((await get(h, "/session", { cookie: bob.cookie })).status).toBe(401);
    const r = await post(h, "/signin", { username: "bob", password: "a long passphrase" });
    expect(r.status).toBe(200);
    expect(r.body.result.notices[0]).toStartWith("The server's owner, at its command line, turned off your two-factor sign-in");
    const log = await activity(h, { cookie: r.headers.get("set-cookie")!.split(";")[0], csrf: r.body.result.csrf, setCookie: "" });
    expect(log[0]).toMatchObject({ via: "local", surface: "local", args: { by: "command line" } });

    expect((await run(["password", "--user", "bob", "--reset-2fa"])).code).toBe(1);
  } finally {
    await h?.stop();
    h = null;
    rmSync(dir, { recursive: true, force: true });
  }
});
