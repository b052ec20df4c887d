// What the admin's pages (/settings, /people, /setup) share: who may open
// them, reading their forms with the session's CSRF token, and answering a
// program with JSON and a browser with a page.
import { CSRF_HEADER, findSession, requireCsrf, type Session } from "../auth/sessions.ts";
import { asHearthError, forbidden, unauthenticated, type HearthError } from "../errors.ts";
import { errorResponse } from "../http/respond.ts";
import { readPosted, type Posted } from "../http/pages/form.ts";
import { html, message, page, seeOther, wantsHtml } from "../http/pages/layout.ts";
import type { Runtime } from "../runtime.ts";

export const rid = () => crypto.randomUUID();

/** The admin's session, or the answer to give instead: sign in first (a page goes there), or 403. */
export async function adminSession(rt: Runtime, req: Request): Promise<Session | Response> {
  const s = await findSession(rt, req);
  const url = new URL(req.url);
  if (!s) {
    if (wantsHtml(req)) return seeOther(`/signin?next=${encodeURIComponent(url.pathname)}`);
    return errorResponse(unauthenticated("sign in first: POST /signin (or open /signin in a browser)"), rid());
  }
  if (!s.account.admin) return refusal(forbidden("only an admin of this instance may open this page"), !wantsHtml(req), s);
  return s;
}

/** A posted form or JSON body, from the admin's session with its CSRF token (header, or the form's hidden field). */
export async function adminPost(rt: Runtime, req: Request): Promise<{ s: Session; posted: Posted } | Response> {
  let posted: Posted | null = null;
  try {
    posted = await readPosted(rt, req);
    const s = await findSession(rt, req);
    if (!s) throw unauthenticated("sign in first: POST /signin (or open /signin in a browser)");
    requireCsrf(s, req.headers.get(CSRF_HEADER) ?? (posted.json ? undefined : posted.get("csrf")));
    if (!s.account.admin) throw forbidden("only an admin of this instance may change this");
    return { s, posted };
  } catch (e) {
    return refusal(asHearthError(e), !posted || posted.json, null);
  }
}

/** JSON for programs; for a browser a short page saying what went wrong, with a way back. */
export function refusal(err: HearthError, json: boolean, s: Session | null, back = "/"): Response {
  if (json) return errorResponse(err, rid());
  const way = err.status === 401 ? html`<p><a href="/signin">Sign in</a></p>` : html`<p><a href="${back}">Back</a></p>`;
  return page({ title: "Not done", body: html`${message("alert", err.message)}${way}`, status: err.status, headers: err.headers, account: s?.account, csrf: s?.csrf });
}
