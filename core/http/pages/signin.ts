// Sign-up, sign-in and sign-out: pages for people, JSON for programs.
import { hasAccounts, limitAttempt, lockedOutAdmin, PASSWORD_MIN, signIn, signUp, signupPolicy } from "../../auth/people.ts";
import { deviceCookie } from "../../auth/devices.ts";
import { clearCookie, CSRF_HEADER, endAllSessions, endSession, findSession, requireCsrf, startSession } from "../../auth/sessions.ts";
import { asHearthError, unauthenticated } from "../../errors.ts";
import type { Account } from "../../plugin.ts";
import type { Runtime } from "../../runtime.ts";
import { errorResponse, jsonResponse } from "../respond.ts";
import { localPath, readPosted, requireSameOrigin, type Posted } from "./form.ts";
import { html, message, page, seeOther, type Html } from "./layout.ts";
import { refuse, signinShell } from "./signinshell.ts";
import { secondStep } from "./signinsteps.ts";
import { totpOn } from "../../auth/totp.ts";
import { hasNotices, noticesFor } from "../../settings/notices.ts";

const rid = () => crypto.randomUUID();

/** Where sign-in leads when no return address was given. */
const HOME = "/";

/**
 * On an instance whose admin was made at the shell and has no password yet,
 * nobody can sign in: say how the owner gets in.
 */
async function lockedOut(rt: Runtime): Promise<Html> {
  const admin = await lockedOutAdmin(rt.store);
  if (!admin) return html``;
  return html`<div class="notice" role="note"><p><strong>Setting up this instance?</strong> Its admin account, <strong>${admin.username}</strong>, was made at the command line and has no password yet. At the server's shell, run</p>
<p><code class="secret" style="word-break:normal;overflow-wrap:anywhere">hearth password <span style="white-space:nowrap">--user ${admin.username}</span> <span style="white-space:nowrap">--link</span></code></p>
<p>and open the link it prints to choose a password. You are then signed in.</p></div>`;
}

function signinForm(o: { next: string; username?: string; error?: string; notice?: string; owner?: Html }): Html {
  return html`${message("alert", o.error)}${message("notice", o.notice)}${o.owner ?? ""}
<form method="post" action="/signin">
<input type="hidden" name="next" value="${o.next}">
<label for="username">Username</label>
<input type="text" id="username" name="username" value="${o.username ?? ""}" autocomplete="username" autocapitalize="none" spellcheck="false" required>
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required>
<p><button type="submit">Sign in</button></p>
</form>
<div id="passkey-signin" data-next="${o.next}" hidden>
<p>Or, without typing anything:</p>
<p><button class="quiet" type="button">Sign in with a passkey</button></p>
<p class="alert" id="passkey-status" role="alert" hidden></p>
</div>
<p>No account yet? <a href="/signup">Sign up</a>.</p>`;
}

async function signupForm(rt: Runtime, o: { username?: string; invite?: string; error?: string }): Promise<{ body: Html; open: boolean }> {
  const first = !(await hasAccounts(rt.store));
  const policy = first ? "open" : signupPolicy(rt.config);
  const owner = first ? html`` : await lockedOut(rt);
  if (policy === "closed")
    return { open: false, body: html`${message("alert", o.error)}${owner}<p>Sign-up is closed on this instance. Ask its admin for an account.</p><p><a href="/signin">Sign in</a></p>` };
  const body = html`${message("alert", o.error)}${owner}
${first ? html`<p class="notice" role="status">This is the first account on this instance: it will be the admin.</p>` : ""}
<form method="post" action="/signup">
<label for="username">Username</label>
<p class="hint" id="username-hint">3 to 32 characters: lowercase letters, digits, _ and -. It is also your handle on this instance.</p>
<input type="text" id="username" name="username" value="${o.username ?? ""}" autocomplete="username" autocapitalize="none" spellcheck="false"
 pattern="[a-z0-9_\\-]{3,32}" minlength="3" maxlength="32" aria-describedby="username-hint" required>
<label for="password">Password</label>
<p class="hint" id="password-hint">At least ${PASSWORD_MIN} characters.</p>
<input type="password" id="password" name="password" autocomplete="new-password" minlength="${PASSWORD_MIN}" aria-describedby="password-hint" required>
${
  policy === "invite"
    ? html`<label for="invite">Invitation code</label><p class="hint" id="invite-hint">Sign-up here is by invitation: the admin gives you a code or a link.</p>
<input type="text" id="invite" name="invite" value="${o.invite ?? ""}" autocomplete="off" spellcheck="false" aria-describedby="invite-hint" required>`
    : ""
}
<p><button type="submit">Create account</button></p>
</form>
<p>Have an account? <a href="/signin">Sign in</a>.</p>`;
  return { open: true, body };
}

export async function signedIn(rt: Runtime, req: Request, account: Account, posted: Posted, next: string): Promise<Response> {
  const { cookie, csrf } = await startSession(rt, req, account);
  // Someone else changed how this person signs in: a program is told in the answer, a person on /account, before anything else.
  const res = posted.json
    ? jsonResponse(200, { result: { username: account.username, admin: account.admin, csrf, ...(await noticesFor(rt, account)) } }, rid(), { "set-cookie": cookie })
    : seeOther((await hasNotices(rt, account.id)) ? "/account" : next, { "set-cookie": cookie });
  // This browser is now one the account signed in from: sign-in backoff lets it through when strangers fail.
  const device = await deviceCookie(rt, req, account);
  if (device) res.headers.append("set-cookie", device);
  return res;
}

export async function signinPage(rt: Runtime, req: Request): Promise<Response> {
  const url = new URL(req.url);
  const next = localPath(url.searchParams.get("next"), HOME);
  const s = await findSession(rt, req);
  if (s) return seeOther(next);
  const said = url.searchParams.get("out") !== null ? "You are signed out." : url.searchParams.get("again") !== null ? "That sign-in took too long or was finished elsewhere: sign in again." : undefined;
  return signinShell({ body: signinForm({ next, notice: said, owner: await lockedOut(rt) }) });
}

export async function signinPost(rt: Runtime, req: Request, address: string): Promise<Response> {
  let posted: Posted | null = null;
  let next = HOME;
  try {
    requireSameOrigin(req);
    await limitAttempt(rt, address);
    posted = await readPosted(rt, req);
    next = localPath(posted.get("next"), HOME);
    const account = await signIn(rt, { username: posted.get("username"), password: posted.get("password") }, { address, req });
    // The password was right; an account with two-factor sign-in is asked for its code before a session starts.
    if (await totpOn(rt, account.id)) return await secondStep(rt, req, account, posted, next);
    rt.log.info("signed in", { username: account.username, address });
    return await signedIn(rt, req, account, posted, next);
  } catch (e) {
    const err = asHearthError(e);
    if (err.status === 401 || err.status === 429) rt.log.warn("sign-in refused", { username: posted?.get("username")?.slice(0, 64), address, status: err.status });
    return refuse(e, posted, async (msg) => signinShell({ body: signinForm({ next, username: posted?.get("username"), error: msg, owner: await lockedOut(rt) }) }));
  }
}

export async function signupPage(rt: Runtime, req: Request): Promise<Response> {
  if (await findSession(rt, req)) return seeOther("/token");
  const invite = new URL(req.url).searchParams.get("invite") ?? undefined;
  const { body } = await signupForm(rt, { invite });
  return page({ title: "Sign up", body });
}

export async function signupPost(rt: Runtime, req: Request, address: string): Promise<Response> {
  let posted: Posted | null = null;
  try {
    requireSameOrigin(req);
    await limitAttempt(rt, address);
    posted = await readPosted(rt, req);
    const account = await signUp(rt, { username: posted.get("username"), password: posted.get("password"), invite: posted.get("invite") });
    rt.log.info("signed up", { username: account.username, admin: account.admin, address });
    // The first account is the admin's: it goes on to choose what matters for the instance.
    return await signedIn(rt, req, account, posted, account.admin ? "/setup" : "/token");
  } catch (e) {
    return refuse(e, posted, async (msg) => page({ title: "Sign up", body: (await signupForm(rt, { username: posted?.get("username"), invite: posted?.get("invite"), error: msg })).body }));
  }
}

/** Ends this session, or with everywhere every session of the account. Needs the session's CSRF token. */
export async function signoutPost(rt: Runtime, req: Request, everywhere: boolean): Promise<Response> {
  let posted: Posted | null = null;
  try {
    posted = await readPosted(rt, req);
    const s = await findSession(rt, req);
    if (!s) {
      if (!posted.json) return seeOther("/signin", { "set-cookie": clearCookie(rt, req) });
      throw unauthenticated("not signed in");
    }
    const given = req.headers.get(CSRF_HEADER) ?? (posted.json ? undefined : posted.get("csrf"));
    requireCsrf(s, given);
    const ended = everywhere ? await endAllSessions(rt, s.account.id) : (await endSession(rt, s), 1);
    const cookie = clearCookie(rt, req);
    if (posted.json) return jsonResponse(200, { result: { signed_out: ended } }, rid(), { "set-cookie": cookie });
    return seeOther("/signin?out=1", { "set-cookie": cookie });
  } catch (e) {
    return refuse(e, posted, (msg) => page({ title: "Sign out", body: html`${message("alert", msg)}<p><a href="/token">Back</a></p>` }));
  }
}

/** The signed-in account and its CSRF token, for in-page scripts and programs holding a session. */
export async function sessionInfo(rt: Runtime, req: Request): Promise<Response> {
  const s = await findSession(rt, req);
  if (!s) return errorResponse(unauthenticated("not signed in: POST /signin first"), rid());
  return jsonResponse(200, { result: { username: s.account.username, admin: s.account.admin, csrf: s.csrf, expires: new Date(s.expires).toISOString() } }, rid(), {
    "cache-control": "no-store",
  });
}
