// The sign-in steps after or instead of the password: the code of an account
// with two-factor sign-in (/signin/code), and a passkey (/signin/passkey).
// Between the password and the code the browser holds only a short-lived,
// one-use handle in a cookie scoped to /signin; the session starts in the
// same write that spends the code and the handle.
import { eq } from "drizzle-orm";
import { backoffOf } from "../../auth/backoff.ts";
import { openChallenge, peekChallenge, spendChallenge } from "../../auth/challenges.ts";
import { deviceCookie, knownDevice } from "../../auth/devices.ts";
import { limitAttempt } from "../../auth/people.ts";
import { rateLimited } from "../../auth/limits.ts";
import { finishSignin, signinOptions } from "../../auth/passkeys.ts";
import { isSecure, readCookie, startSession } from "../../auth/sessions.ts";
import { useSecondFactor } from "../../auth/totp.ts";
import { accounts } from "../../db/schema.ts";
import { asHearthError, invalid, unauthenticated } from "../../errors.ts";
import type { Account } from "../../plugin.ts";
import type { Runtime } from "../../runtime.ts";
import { errorResponse, jsonResponse } from "../respond.ts";
import { localPath, readPosted, requireSameOrigin, type Posted } from "./form.ts";
import { html, message, seeOther, type Html } from "./layout.ts";
import { refuse, signinShell } from "./signinshell.ts";

const rid = () => crypto.randomUUID();
const STEP_COOKIE = "hearth_signin_step";
const TITLE = "Enter your code";

function stepCookie(rt: Runtime, req: Request, handle: string, maxAge: number): string {
  return [`${STEP_COOKIE}=${handle}`, "Path=/signin", "HttpOnly", "SameSite=Strict", `Max-Age=${maxAge}`, ...(isSecure(rt, req) ? ["Secure"] : [])].join("; ");
}

function codeForm(next: string, error?: string): Html {
  return html`${message("alert", error)}
<p>Your password was right. This account also asks for a code: open your authenticator app and enter the six digits it shows for this instance.</p>
<form method="post" action="/signin/code">
<input type="hidden" name="next" value="${next}">
<label for="code">Code</label>
<p class="hint" id="code-hint">No phone at hand? Enter one of your recovery codes instead (ten letters and digits, like <code>abcde-fghjk</code>); each works once.</p>
<input type="text" id="code" name="code" inputmode="text" autocomplete="one-time-code" autocapitalize="none" spellcheck="false" maxlength="32" aria-describedby="code-hint" required autofocus>
<p><button type="submit">Sign in</button></p>
</form>
<p><a href="/signin">Start again</a></p>`;
}

/** After a right password, for an account with two-factor sign-in: the code form, and the handle of this step. */
export async function secondStep(rt: Runtime, req: Request, account: Account, posted: Posted, next: string): Promise<Response> {
  const handle = await openChallenge(rt, "second-factor", { account: account.id });
  const cookie = stepCookie(rt, req, handle, 300);
  rt.log.info("password accepted, code asked", { username: account.username });
  if (posted.json) return jsonResponse(200, { result: { second_factor: "code", continue: "/signin/code" } }, rid(), { "set-cookie": cookie, "cache-control": "no-store" });
  return signinShell({ title: TITLE, body: codeForm(next), headers: { "set-cookie": cookie } });
}

export async function codePage(rt: Runtime, req: Request): Promise<Response> {
  const url = new URL(req.url);
  const next = localPath(url.searchParams.get("next"), "/");
  const step = await peekChallenge(rt, "second-factor", readCookie(req, STEP_COOKIE));
  if (!step) return seeOther(`/signin?again=1&next=${encodeURIComponent(next)}`);
  return signinShell({ title: TITLE, body: codeForm(next) });
}

/** A new session for the account: its cookie, this browser marked as the account's, the step's cookie cleared. */
async function welcome(rt: Runtime, req: Request, account: Account, session: { cookie: string; csrf: string }, json: boolean, next: string): Promise<Response> {
  const res = json
    ? jsonResponse(200, { result: { username: account.username, admin: account.admin, csrf: session.csrf, next } }, rid(), { "set-cookie": session.cookie, "cache-control": "no-store" })
    : seeOther(next, { "set-cookie": session.cookie });
  const device = await deviceCookie(rt, req, account);
  if (device) res.headers.append("set-cookie", device);
  return res;
}

export async function codePost(rt: Runtime, req: Request, address: string): Promise<Response> {
  let posted: Posted | null = null;
  let next = "/";
  try {
    requireSameOrigin(req);
    await limitAttempt(rt, address);
    posted = await readPosted(rt, req);
    next = localPath(posted.get("next"), "/");
    const step = await peekChallenge(rt, "second-factor", readCookie(req, STEP_COOKIE));
    const row = step?.account ? await rt.store.rdb.select().from(accounts).where(eq(accounts.id, step.account)).get() : null;
    if (!step || !row) {
      if (!posted.json) return seeOther(`/signin?again=1&next=${encodeURIComponent(next)}`);
      throw unauthenticated("this sign-in has expired or was finished: POST /signin again");
    }
    const account: Account = { id: row.id, username: row.username, admin: row.admin };
    const code = posted.get("code") ?? "";
    if (!code.trim()) throw invalid("code", "enter the code your authenticator app shows, or a recovery code");
    if (code.length > 64) throw invalid("code", "that is longer than any code here");
    // Wrong codes are held back exactly as wrong passwords are: the same counts, per account and client.
    const now = rt.clock.now().getTime();
    const client = { address, device: knownDevice(req, row.username, row.password, now) };
    const backoff = backoffOf(rt);
    const wait = await backoff.wait(row.username, client, now);
    if (wait > 0) throw rateLimited(`too many wrong codes for "${row.username}": try again in ${wait} s`, wait);
    const done = await rt.store.write(async () => {
      const kind = await useSecondFactor(rt, account.id, code);
      if (!kind) return null;
      if (!(await spendChallenge(rt, step.hash))) throw unauthenticated("this sign-in was finished already: sign in again");
      return { kind, session: await startSession(rt, req, account) };
    });
    if (!done) {
      await backoff.fail(row.username, client, rt.clock.now().getTime());
      throw unauthenticated("that code is not right: enter the code the app shows now, or an unused recovery code");
    }
    await backoff.succeed(row.username, client);
    rt.log.info("signed in", { username: account.username, address, second: done.kind });
    const res = await welcome(rt, req, account, done.session, posted.json, next);
    res.headers.append("set-cookie", stepCookie(rt, req, "", 0));
    return res;
  } catch (e) {
    const err = asHearthError(e);
    if (err.status === 401 || err.status === 429) rt.log.warn("sign-in code refused", { address, status: err.status });
    return refuse(e, posted, (msg) => signinShell({ title: TITLE, body: codeForm(next, msg) }));
  }
}

/** POST /signin/passkey/options: a challenge for any passkey of this site. */
export async function passkeyOptionsPost(rt: Runtime, req: Request, address: string): Promise<Response> {
  try {
    requireSameOrigin(req);
    await limitAttempt(rt, address);
    await readPosted(rt, req);
    const { options, handle } = await signinOptions(rt, req);
    return jsonResponse(200, { result: { options, handle } }, rid(), { "cache-control": "no-store" });
  } catch (e) {
    return errorResponse(asHearthError(e), rid());
  }
}

/** POST /signin/passkey: the browser's answer; a session when it verifies. */
export async function passkeySigninPost(rt: Runtime, req: Request, address: string): Promise<Response> {
  try {
    requireSameOrigin(req);
    await limitAttempt(rt, address);
    const posted = await readPosted(rt, req);
    const next = localPath(posted.get("next"), "/");
    const { account, result } = await finishSignin(rt, req, { handle: posted.value("handle"), response: posted.value("response") }, (a) => startSession(rt, req, a));
    rt.log.info("signed in", { username: account.username, address, passkey: true });
    return await welcome(rt, req, account, result, true, next);
  } catch (e) {
    const err = asHearthError(e);
    if (err.status === 401) rt.log.warn("passkey sign-in refused", { address });
    return errorResponse(err, rid());
  }
}
