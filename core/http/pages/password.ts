// /password?code=…: where the owner of an account made at the shell (or
// whose password the admin reset there) opens the one-use link the CLI
// printed, chooses a password, and lands signed in on the home page.
import { limitAttempt, passwordLinkAccount, PASSWORD_MIN, usePasswordLink } from "../../auth/people.ts";
import { deviceCookie } from "../../auth/devices.ts";
import { startSession } from "../../auth/sessions.ts";
import { hasNotices, noticesFor } from "../../settings/notices.ts";
import { asHearthError } from "../../errors.ts";
import type { Runtime } from "../../runtime.ts";
import { errorResponse, jsonResponse } from "../respond.ts";
import { readPosted, requireSameOrigin, type Posted } from "./form.ts";
import { html, message, page, seeOther, type Html } from "./layout.ts";

const rid = () => crypto.randomUUID();
const TITLE = "Choose a password";

function form(code: string, username: string, error?: string): Html {
  return html`${message("alert", error)}
<p>This sets the password of <strong>${username}</strong> on this instance. The link works once.</p>
<form method="post" action="/password">
<input type="hidden" name="code" value="${code}">
<input type="text" name="username" value="${username}" autocomplete="username" hidden>
<label for="password">New password</label>
<p class="hint" id="password-hint">At least ${PASSWORD_MIN} characters.</p>
<input type="password" id="password" name="password" autocomplete="new-password" minlength="${PASSWORD_MIN}" aria-describedby="password-hint" required>
<p><button type="submit">Set password and sign in</button></p>
</form>`;
}

/** A link that no longer works: what to do instead. */
function refused(msg: string): Response {
  return page({
    title: "This link does not work",
    status: 400,
    body: html`${message("alert", msg.charAt(0).toUpperCase() + msg.slice(1) + ".")}
<p>Ask the admin for a new link. The admin makes one at the server's shell with <code style="white-space:nowrap">hearth password --user NAME --link</code>.</p>
<p>Already chose a password? <a href="/signin">Sign in</a>. Or go to the <a href="/">home page</a>.</p>`,
  });
}

export async function passwordPage(rt: Runtime, req: Request): Promise<Response> {
  const code = new URL(req.url).searchParams.get("code") ?? "";
  try {
    const account = await passwordLinkAccount(rt, code);
    // Pages are not cached, and their Referer goes to this instance alone: the code stays here.
    return page({ title: TITLE, body: form(code, account.username) });
  } catch (e) {
    return refused(asHearthError(e).message);
  }
}

export async function passwordPost(rt: Runtime, req: Request, address: string): Promise<Response> {
  let posted: Posted | null = null;
  try {
    requireSameOrigin(req);
    await limitAttempt(rt, address);
    posted = await readPosted(rt, req);
    const account = await usePasswordLink(rt, posted.get("code"), posted.get("password"));
    rt.log.info("password set by link", { username: account.username, address });
    const { cookie, csrf } = await startSession(rt, req, account);
    const res = posted.json
      ? jsonResponse(200, { result: { username: account.username, admin: account.admin, csrf, ...(await noticesFor(rt, account)) } }, rid(), { "set-cookie": cookie })
      : seeOther((await hasNotices(rt, account.id)) ? "/account" : "/", { "set-cookie": cookie });
    const device = await deviceCookie(rt, req, account);
    if (device) res.headers.append("set-cookie", device);
    return res;
  } catch (e) {
    const err = asHearthError(e);
    if (posted?.json !== false) return errorResponse(err, rid());
    if (err.field === "code") return refused(err.message);
    // A password the rules refuse: the form again, while the link still works.
    const code = posted.get("code") ?? "";
    try {
      const account = await passwordLinkAccount(rt, code);
      return page({ title: TITLE, status: err.status, headers: err.headers, body: form(code, account.username, err.message) });
    } catch (again) {
      return refused(asHearthError(again).message);
    }
  }
}
