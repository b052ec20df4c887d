// Two-factor sign-in, sessions and password change over the JSON routes a
// program holding a session uses: wrong codes wait like wrong passwords, a
// recovery code works once, turning codes off needs a code or the password,
// tokens are untouched by it all, and every write is whole or not at all.
import { afterEach, expect, test } from "bun:test";
import { Secret, TOTP } from "otpauth";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { get, post, signUp, type Signed } from "./people.ts";

let h: Hearth | null = null;
afterEach(async () => {
  await h?.stop();
  h = null;
});

const codeAt = (secret: string, t: number) => new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: "SHA1" }).generate({ timestamp: t });
const as = (s: Signed) => ({ cookie: s.cookie, "x-csrf-token": s.csrf });
const cookieOf = (headers: Headers, name: string) =>
  headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .find((c) => c.startsWith(`${name}=`))!;

async function withTotp(hh: Hearth, clock: TestClock, s: Signed) {
  const started = await post(hh, "/account/totp/start", {}, as(s));
  expect(started.status).toBe(200);
  const { secret, uri } = started.body.result;
  expect(uri).toStartWith("otpauth://totp/");
  expect(uri).toContain(`secret=${secret}`);
  const confirmed = await post(hh, "/account/totp/confirm", { code: codeAt(secret, clock.t) }, as(s));
  expect(confirmed.status).toBe(200);
  expect(confirmed.body.result.recovery_codes).toHaveLength(10);
  return { secret: secret as string, recovery: confirmed.body.result.recovery_codes as string[] };
}

/** POSTs the password; returns the step cookie the code goes with. */
async function password(hh: Hearth, username: string, pw = "a long passphrase"): Promise<string> {
  const r = await post(hh, "/signin", { username, password: pw });
  expect(r.status).toBe(200);
  expect(r.body.result).toEqual({ second_factor: "code", continue: "/signin/code" });
  // No session yet: only the step's cookie, scoped to /signin.
  expect(r.headers.getSetCookie().some((c) => c.startsWith("hearth_session="))).toBe(false);
  return cookieOf(r.headers, "hearth_signin_step");
}

test("wrong codes wait like wrong passwords; a right code starts a session, and a recovery code works once", async () => {
  const clock = new TestClock();
  h = await startHearth({ clock, env: { HEARTH_RATE_SIGNIN: "1000" } });
  const s = await signUp(h, "alice");
  const token = await h.token("alice");
  const { secret, recovery } = await withTotp(h, clock, s);

  const step = await password(h, "alice");
  for (let i = 0; i < 3; i++) {
    const wrong = await post(h, "/signin/code", { code: "000000" }, { cookie: step });
    expect(wrong.status).toBe(401);
  }
  // The fourth try waits, right code or not, without being looked at (the code of the next time step is accepted).
  const held = await post(h, "/signin/code", { code: codeAt(secret, clock.t + 30_000) }, { cookie: step });
  expect(held.status).toBe(429);
  expect(Number(held.headers.get("retry-after"))).toBeGreaterThan(0);
  clock.advance(2_000);
  const ok = await post(h, "/signin/code", { code: codeAt(secret, clock.t + 30_000) }, { cookie: step });
  expect(ok.status).toBe(200);
  expect(ok.body.result).toMatchObject({ username: "alice", next: "/" });
  const session = cookieOf(ok.headers, "hearth_session");
  expect((await get(h, "/session", { cookie: session })).status).toBe(200);
  // The step is spent with it.
  expect((await post(h, "/signin/code", { code: codeAt(secret, clock.t + 60_000) }, { cookie: step })).status).toBe(401);

  // A recovery code, typed any way, once.
  const again = await password(h, "alice");
  expect((await post(h, "/signin/code", { code: ` ${recovery[0].toUpperCase().replace("-", " ")} ` }, { cookie: again })).status).toBe(200);
  const third = await password(h, "alice");
  expect((await post(h, "/signin/code", { code: recovery[0] }, { cookie: third })).status).toBe(401);
  const left = await get(h, "/account", { cookie: session, accept: "application/json" });
  expect(left.body.result.two_factor).toMatchObject({ on: true, recovery_codes_left: 9 });

  // Tokens are credentials already: no code is asked of them.
  expect((await h.call("notes/list", {}, { token })).status).toBe(200);
});

test("turning codes off needs a code or the password; new recovery codes replace the old", async () => {
  const clock = new TestClock();
  h = await startHearth({ clock, env: { HEARTH_RATE_SIGNIN: "1000" } });
  const s = await signUp(h, "alice");
  const { secret, recovery } = await withTotp(h, clock, s);

  const none = await post(h, "/account/totp/off", {}, as(s));
  expect(none.status).toBe(400);
  expect(none.body.error.field).toBe("proof");
  const wrong = await post(h, "/account/totp/off", { proof: "not it" }, as(s));
  expect(wrong.status).toBe(401);
  expect((await get(h, "/account", { ...as(s), accept: "application/json" })).body.result.two_factor.on).toBe(true);

  clock.advance(60_000);
  const renewed = await post(h, "/account/totp/recovery", { proof: codeAt(secret, clock.t) }, as(s));
  expect(renewed.status).toBe(200);
  const fresh: string[] = renewed.body.result.recovery_codes;
  expect(fresh).toHaveLength(10);
  expect(fresh).not.toContain(recovery[0]);
  // The old codes no longer prove anything.
  expect((await post(h, "/account/totp/off", { proof: recovery[1] }, as(s))).status).toBe(401);

  const off = await post(h, "/account/totp/off", { proof: "a long passphrase" }, as(s));
  expect(off.status).toBe(200);
  expect(await h.rows("SELECT * FROM recovery_codes")).toEqual([]);
  expect(await h.rows("SELECT * FROM totp_secrets")).toEqual([]);
  // The password alone signs in again.
  const r = await post(h, "/signin", { username: "alice", password: "a long passphrase" });
  expect(r.body.result.csrf).toBeString();
});

test("a code from another secret, or no code at all, does not turn codes on", async () => {
  const clock = new TestClock();
  h = await startHearth({ clock });
  const s = await signUp(h, "alice");
  await post(h, "/account/totp/start", {}, as(s));
  const bad = await post(h, "/account/totp/confirm", { code: "12345" }, as(s));
  expect(bad.status).toBe(400);
  expect(bad.body.error.field).toBe("code");
  const wrongSecret = await post(h, "/account/totp/confirm", { code: codeAt(new Secret({ size: 20 }).base32, clock.t) }, as(s));
  expect(wrongSecret.status).toBe(400);
  expect(await h.rows("SELECT * FROM recovery_codes")).toEqual([]);
  expect((await h.row<{ confirmed: number | null }>("SELECT confirmed FROM totp_secrets"))!.confirmed).toBeNull();
  // Not confirmed: sign-in still asks for the password alone.
  expect((await post(h, "/signin", { username: "alice", password: "a long passphrase" })).body.result.csrf).toBeString();
});

test("sessions are listed with this one marked; one or all others end; a password change keeps only this one", async () => {
  h = await startHearth();
  const a = await signUp(h, "alice");
  const b = await post(h, "/signin", { username: "alice", password: "a long passphrase" }, { "user-agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1" });
  const bCookie = cookieOf(b.headers, "hearth_session");
  await post(h, "/signin", { username: "alice", password: "a long passphrase" });

  const list = (await get(h, "/account", { cookie: a.cookie, accept: "application/json" })).body.result.sessions as { id: string; browser: string | null; current: boolean }[];
  expect(list).toHaveLength(3);
  expect(list.filter((l) => l.current)).toHaveLength(1);
  const phone = list.find((l) => l.browser === "Safari on iPhone")!;
  expect(phone).toBeDefined();

  // CSRF is needed, as for every session POST.
  expect((await post(h, "/account/sessions/end", { id: phone.id }, { cookie: a.cookie })).status).toBe(403);
  expect((await post(h, "/account/sessions/end", { id: phone.id }, as(a))).body.result).toEqual({ signed_out: 1 });
  expect((await get(h, "/session", { cookie: bCookie })).status).toBe(401);
  expect((await post(h, "/account/sessions/end", { id: phone.id }, as(a))).status).toBe(404);

  const c = await post(h, "/signin", { username: "alice", password: "a long passphrase" });
  const cCookie = cookieOf(c.headers, "hearth_session");
  const wrong = await post(h, "/account/password", { current: "not it", password: "a new long passphrase" }, as(a));
  expect(wrong.status).toBe(400);
  expect(wrong.body.error.field).toBe("current");
  expect((await get(h, "/session", { cookie: cCookie })).status).toBe(200);
  const changed = await post(h, "/account/password", { current: "a long passphrase", password: "a new long passphrase" }, as(a));
  expect(changed.status).toBe(200);
  expect(changed.body.result.signed_out).toBe(2);
  expect((await get(h, "/session", { cookie: cCookie })).status).toBe(401);
  expect((await get(h, "/session", { cookie: a.cookie })).status).toBe(200);
  expect((await post(h, "/signin", { username: "alice", password: "a new long passphrase" })).status).toBe(200);
  expect((await post(h, "/account/sessions/end-others", {}, as(a))).body.result).toEqual({ signed_out: 1 });
});

test("passkey steps refuse what they did not issue", async () => {
  h = await startHearth();
  const s = await signUp(h, "alice");
  const options = await post(h, "/signin/passkey/options", {});
  expect(options.status).toBe(200);
  expect(options.body.result.options.rpId).toBe("127.0.0.1");
  expect(options.body.result.options.userVerification).toBe("required");
  const forged = await post(h, "/signin/passkey", { handle: "made-up", response: { id: "x", rawId: "x", type: "public-key", response: {} } });
  expect(forged.status).toBe(400);
  expect(forged.body.error.field).toBe("handle");
  const unknown = await post(h, "/signin/passkey", { handle: options.body.result.handle, response: { id: "nobody", rawId: "nobody", type: "public-key", response: {} } });
  expect(unknown.status).toBe(401);
  // Registration needs the session and its CSRF token.
  expect((await post(h, "/account/passkeys/options", {}, { cookie: s.cookie })).status).toBe(403);
  const reg = await post(h, "/account/passkeys/options", {}, as(s));
  expect(reg.body.result.options.authenticatorSelection).toMatchObject({ residentKey: "required" });
  const bad = await post(h, "/account/passkeys", { handle: reg.body.result.handle, name: "", response: {} }, as(s));
  expect(bad.status).toBe(400);
  expect(bad.body.error.field).toBe("name");
  expect(await h.rows("SELECT * FROM passkeys")).toEqual([]);
});
