// {base}/token: signed-in people make, see and revoke their tokens. The same
// over JSON for programs holding a session: POST /token, GET /token,
// POST /token/revoke. Scopes are the registry's services, never a kept list.
import { createInvite, INVITE_DAYS, signupPolicy } from "../../auth/people.ts";
import { CSRF_HEADER, findSession, requireCsrf, type Session } from "../../auth/sessions.ts";
import { issueToken, listTokens, parseExpiry, parseScopes, parseTokenName, revokeToken, TOKEN_NAME_MAX, type IssuedToken, type TokenInfo } from "../../auth/tokens.ts";
import { grantTokenIds, listGrants, revokeGrant, type GrantInfo } from "../../auth/oauth/grants.ts";
import { asHearthError, invalid, notFound, unauthenticated } from "../../errors.ts";
import { lastCalls, type AuditEntry } from "../../audit/read.ts";
import type { Runtime } from "../../runtime.ts";
import { errorResponse, jsonResponse } from "../respond.ts";
import { readPosted, type Posted } from "./form.ts";
import { html, message, page, seeOther, wantsHtml, type Html } from "./layout.ts";
import { policyFields, postedPolicy, POLICY_STYLE } from "../../policy/form.ts";
import { methodPaths } from "../../policy/index.ts";
import { OPEN, policySummary, type Policy } from "../../policy/rules.ts";

const rid = () => crypto.randomUUID();

const EXPIRY_CHOICES: [string, string][] = [
  ["", "Never"],
  ["1", "1 day"],
  ["7", "7 days"],
  ["30", "30 days"],
  ["90", "90 days"],
  ["365", "1 year"],
];

const when = (iso: string | null) => (iso ? iso.slice(0, 16).replace("T", " ") + " UTC" : null);

function scopeText(scopes: "*" | string[]) {
  return scopes === "*" ? "All services" : scopes.join(", ");
}

/** The scope chooser of a token, and of an OAuth client's consent: all services, or those ticked. */
export function scopePicker(services: string[], ticked: string[]): Html {
  const chosen = new Set(ticked);
  const some = chosen.size > 0;
  return html`<fieldset>
<legend>Scope</legend>
<label class="choice"><input type="radio" name="scope" value="*" ${some ? "" : html`checked`}> All services</label>
<label class="choice"><input type="radio" name="scope" value="some" ${some ? html`checked` : ""}> Only the services ticked here:</label>
<div class="services">
${services.map(
  (n) => html`<label class="choice"><input type="checkbox" name="scopes" value="${n}" ${chosen.has(n) ? html`checked` : ""}> ${n}</label>`,
)}
</div>
<p class="hint">A ticked service limits the token to the ticked ones, whichever scope is chosen above.</p>
</fieldset>`;
}

/** The scope a page's form chose with scopePicker (or a program's JSON "scopes"). */
export function postedScopes(posted: Posted, services: string[]): "*" | string[] {
  let raw = posted.value("scopes");
  if (!posted.json) {
    const ticked = posted.all("scopes");
    if (ticked.length === 0 && posted.get("scope") === "some") throw invalid("scopes", "tick at least one service, or choose all services");
    raw = ticked.length ? ticked : "*";
  }
  return parseScopes(raw, services);
}

function createForm(rt: Runtime, s: Session, o: { name?: string; chosen?: string[]; days?: string } = {}): Html {
  const services = rt.registry.services();
  return html`<form method="post" action="/token">
<input type="hidden" name="csrf" value="${s.csrf}">
<label for="name">Name</label>
<p class="hint" id="name-hint">Where the token will be used, so you know it again: "laptop", "phone", "backup script".</p>
<input type="text" id="name" name="name" value="${o.name ?? ""}" maxlength="${TOKEN_NAME_MAX}" aria-describedby="name-hint" required>
${scopePicker(services, o.chosen ?? [])}
<label for="days">Expires after</label>
<select id="days" name="days">
${EXPIRY_CHOICES.map(([v, label]) => html`<option value="${v}" ${(o.days ?? "") === v ? html`selected` : ""}>${label}</option>`)}
</select>
<details><summary>What it may do (now: everything in its scope)</summary>
${policyFields(OPEN)}
</details>
<p><button type="submit">Create token</button></p>
</form>`;
}

/**
 * App passwords: tokens for a sync client (a phone's calendar, a desktop's
 * contacts), scoped to what that client syncs. Modules serving such clients
 * add their presets, read from the registry when the page is drawn.
 */
export interface AppPasswordPreset {
  label: string;
  scopes: string[];
  /** The path to point the client at on this instance, shown with the new password. */
  path: string;
}
export type AppPasswordPresets = (rt: Runtime) => AppPasswordPreset[];

function presetsOf(rt: Runtime): AppPasswordPreset[] {
  return rt.wiring.appPasswords.flatMap((p) => p(rt));
}

function presetForms(rt: Runtime, s: Session): Html {
  const presets = presetsOf(rt);
  if (presets.length === 0) return html``;
  return html`<h2>App password for a phone or desktop</h2>
<p>Calendar and contacts apps sign in with your username and a password. Make one here for each device: it is a token limited to what the app syncs, and you revoke it like any token.</p>
${presets.map(
  (p) => html`<form method="post" action="/token" class="preset">
<input type="hidden" name="csrf" value="${s.csrf}"><input type="hidden" name="name" value="${`${p.label} app password`}"><input type="hidden" name="scope" value="some">
${p.scopes.map((sc) => html`<input type="hidden" name="scopes" value="${sc}">`)}
<button class="quiet" type="submit">Make an app password for ${p.label}</button></form>`,
)}`;
}

/** A token's last few calls, from the activity log, with a link to all of them. */
function recentCalls(id: string, name: string, calls: AuditEntry[] | undefined): Html {
  if (!calls?.length) return html`None yet`;
  return html`<ul class="recent" style="margin:0;padding-left:1rem">${calls.map((c) => html`<li><code>${c.service}/${c.method}</code> ${c.outcome === "ok" ? "done" : `${c.outcome} (${c.status})`}</li>`)}</ul><a href="/activity?credential=${id}" aria-label="All calls of ${name}">All calls</a>`;
}

/** A credential's policy in a few words, with the way to change it. */
function policyCell(id: string, name: string, p: Policy | undefined): Html {
  return html`${policySummary(p ?? OPEN)} <a href="/token/policy?id=${id}" aria-label="Change what ${name} may do">Change</a>`;
}

function tokenTable(s: Session, list: TokenInfo[], recent: Map<string, AuditEntry[]> = new Map(), policies: Map<string, Policy> = new Map()): Html {
  if (list.length === 0) return html`<p>You have no tokens yet.</p>`;
  return html`<table>
<thead><tr><th scope="col">Name</th><th scope="col">Scope</th><th scope="col">Policy</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Recent calls</th><th scope="col">Expires</th><th scope="col"><span class="hint">Action</span></th></tr></thead>
<tbody>
${list.map(
  (t) => html`<tr>
<td data-label="Name">${t.name}</td>
<td data-label="Scope">${scopeText(t.scopes)}</td>
<td data-label="Policy">${policyCell(t.id, t.name, policies.get(t.id))}</td>
<td data-label="Created">${when(t.created)}</td>
<td data-label="Last used">${when(t.last_used) ?? "Never"}</td>
<td data-label="Recent calls">${recentCalls(t.id, t.name, recent.get(t.id))}</td>
<td data-label="Expires">${t.expired ? html`<strong>Expired</strong> ${when(t.expires)}` : (when(t.expires) ?? "Never")}</td>
<td><form method="post" action="/token/revoke"><input type="hidden" name="csrf" value="${s.csrf}"><input type="hidden" name="id" value="${t.id}">
<button class="quiet" type="submit" aria-label="Revoke ${t.name}">Revoke</button></form></td>
</tr>`,
)}
</tbody>
</table>`;
}

function grantTable(s: Session, list: GrantInfo[], policies: Map<string, Policy> = new Map()): Html {
  if (list.length === 0) return html`<p>No app is connected. An MCP client that signs in to this instance (OAuth) appears here once you allow it.</p>`;
  return html`<table>
<thead><tr><th scope="col">App</th><th scope="col">Scope</th><th scope="col">Policy</th><th scope="col">Allowed</th><th scope="col">Last used</th><th scope="col"><span class="hint">Action</span></th></tr></thead>
<tbody>
${list.map(
  (g) => html`<tr>
<td data-label="App">${g.client_name}</td>
<td data-label="Scope">${scopeText(g.scopes)}</td>
<td data-label="Policy">${policyCell(g.id, g.client_name, policies.get(g.id))}</td>
<td data-label="Allowed">${when(g.created)}</td>
<td data-label="Last used">${when(g.last_used) ?? "Never"}</td>
<td><form method="post" action="/token/revoke"><input type="hidden" name="csrf" value="${s.csrf}"><input type="hidden" name="id" value="${g.id}">
<button class="quiet" type="submit" aria-label="Disconnect ${g.client_name}">Disconnect</button></form></td>
</tr>`,
)}
</tbody>
</table>`;
}

/** Tokens made here or at the command line; those an OAuth grant issued are shown and revoked as their grant. */
async function ownTokens(rt: Runtime, accountId: string): Promise<TokenInfo[]> {
  const issued = await grantTokenIds(rt, accountId);
  return (await listTokens(rt.store, accountId, rt.clock.now().getTime())).filter((t) => !issued.has(t.id));
}

function adminPart(rt: Runtime, s: Session, invite?: { url: string; expires: string }): Html {
  if (!s.account.admin) return html``;
  const policy = signupPolicy(rt.config);
  const said = { open: "Anyone who finds this instance can sign up.", invite: "People sign up with an invitation code.", closed: "Sign-up is closed." }[policy];
  return html`<h2>Invite someone</h2>
<p>${said} <span class="hint">(HEARTH_SIGNUP is ${policy}.)</span></p>
${
  invite
    ? html`<p class="notice" role="status">Send this link to the person you invite. It works once, until ${when(invite.expires)}:</p>
<code class="secret" id="invite-link">${invite.url}</code>`
    : ""
}
${
  policy === "invite"
    ? html`<form method="post" action="/invites"><input type="hidden" name="csrf" value="${s.csrf}"><button class="quiet" type="submit">Make an invitation link (${INVITE_DAYS} days)</button></form>`
    : ""
}`;
}

/** For a token scoped like a preset: how a sync app signs in with it. */
function presetHint(rt: Runtime, s: Session, scopes: "*" | string[], origin: string): Html {
  if (scopes === "*") return html``;
  const p = presetsOf(rt).find((x) => x.scopes.length === scopes.length && x.scopes.every((sc) => scopes.includes(sc)));
  if (!p) return html``;
  return html`<p>It is an app password for ${p.label}: in the app, sign in at <code>${(rt.config.HEARTH_PUBLIC_URL || origin).replace(/\/$/, "")}${p.path}</code> with the username <code>${s.account.username}</code> and this token as the password.</p>`;
}

async function tokenPage(
  rt: Runtime,
  s: Session,
  o: { issued?: IssuedToken & { name: string; origin: string }; error?: string; notice?: string; form?: { name?: string; chosen?: string[]; days?: string }; status?: number; invite?: { url: string; expires: string }; headers?: Record<string, string> } = {},
): Promise<Response> {
  const list = await ownTokens(rt, s.account.id);
  const grants = await listGrants(rt, s.account.id);
  const recent = new Map<string, AuditEntry[]>();
  for (const t of list) recent.set(t.id, await lastCalls(rt, s.account.id, t.id));
  const policies = (await rt.policies?.ofAccount(s.account.id)) ?? new Map<string, Policy>();
  const issued = o.issued
    ? html`<section aria-labelledby="new-token-title" class="notice">
<h2 id="new-token-title">Your new token “${o.issued.name}”</h2>
<p>Copy it now: it is shown only this once. Scope: ${scopeText(o.issued.scopes)}. Expires: ${when(o.issued.expires) ?? "never"}.</p>
<code class="secret" id="new-token">${o.issued.token}</code>
<p class="hint">Send it with each call as the header <code>Authorization: Bearer &lt;token&gt;</code>.</p>
${presetHint(rt, s, o.issued.scopes, o.issued.origin)}
</section>`
    : html``;
  const body = html`${message("alert", o.error)}${message("notice", o.notice)}${issued}
<p>A token lets a program or an agent call this instance's methods as you. Give each one only the services it needs.</p>
<h2>Create a token</h2>
${createForm(rt, s, o.form)}
${presetForms(rt, s)}
<h2>Your tokens</h2>
${tokenTable(s, list, recent, policies)}
<h2>Connected apps</h2>
${grantTable(s, grants, policies)}
<h2>Sessions</h2>
<form method="post" action="/signout/all"><input type="hidden" name="csrf" value="${s.csrf}"><button class="quiet" type="submit">Sign out everywhere</button></form>
${adminPart(rt, s, o.invite)}`;
  return page({ title: "Tokens", body, account: s.account, csrf: s.csrf, status: o.status, headers: o.headers, head: POLICY_STYLE });
}

async function needSession(rt: Runtime, req: Request): Promise<Session> {
  const s = await findSession(rt, req);
  if (!s) throw unauthenticated("sign in first: POST /signin (or open /signin in a browser)");
  return s;
}

/** CSRF for these routes: the header, or for a page's form its hidden field. */
function checkCsrf(req: Request, s: Session, posted: Posted) {
  requireCsrf(s, req.headers.get(CSRF_HEADER) ?? (posted.json ? undefined : posted.get("csrf")));
}

export async function tokenGet(rt: Runtime, req: Request): Promise<Response> {
  const html = wantsHtml(req);
  const s = await findSession(rt, req);
  if (!s) {
    if (html) return seeOther("/signin?next=/token");
    return errorResponse(unauthenticated("sign in first: POST /signin (or open /signin in a browser)"), rid());
  }
  if (html) {
    const done = new URL(req.url).searchParams.get("done");
    const notice = done === "revoked" ? "The token is revoked: calls with it are refused from now on." : done === "disconnected" ? "The app is disconnected: its tokens are refused from now on." : undefined;
    return tokenPage(rt, s, { notice });
  }
  return jsonResponse(200, { result: await ownTokens(rt, s.account.id) }, rid(), { "cache-control": "no-store" });
}

/** GET /token/grants: the OAuth clients the account allowed, for programs holding a session. */
export async function grantsGet(rt: Runtime, req: Request): Promise<Response> {
  const s = await findSession(rt, req);
  if (!s) return errorResponse(unauthenticated("sign in first: POST /signin (or open /signin in a browser)"), rid());
  return jsonResponse(200, { result: await listGrants(rt, s.account.id) }, rid(), { "cache-control": "no-store" });
}

export async function tokenCreate(rt: Runtime, req: Request): Promise<Response> {
  let posted: Posted | null = null;
  let s: Session | null = null;
  try {
    posted = await readPosted(rt, req);
    s = await needSession(rt, req);
    checkCsrf(req, s, posted);
    const name = parseTokenName(posted.value("name"));
    const scopes = postedScopes(posted, rt.registry.services());
    const now = rt.clock.now();
    const expires = parseExpiry({ expires: posted.value("expires"), days: posted.value("days") }, now.getTime());
    const policy = postedPolicy(posted, methodPaths(rt), OPEN);
    const account = s.account;
    // The token and its policy are made together: never a token that runs more than its owner chose.
    const issued = await rt.store.write(async () => {
      const t = await issueToken(rt.store, account, { name, scopes, expires, now });
      if (rt.policies && JSON.stringify(policy) !== JSON.stringify(OPEN)) await rt.policies.put(account.id, t.id, policy);
      return t;
    });
    rt.log.info("token created", { account: s.account.id, token: issued.id, scopes: scopes === "*" ? "*" : scopes.join(",") });
    if (posted.json) return jsonResponse(200, { result: issued }, rid(), { "cache-control": "no-store" });
    return tokenPage(rt, s, { issued: { ...issued, name, origin: new URL(req.url).origin } });
  } catch (e) {
    const err = asHearthError(e);
    if (!posted || posted.json || !s || err.status === 401 || err.status === 403) return formRefusal(err, posted);
    return tokenPage(rt, s, {
      error: err.message,
      status: err.status,
      form: { name: posted.get("name"), chosen: posted.all("scopes"), days: posted.get("days") },
    });
  }
}

export async function tokenRevoke(rt: Runtime, req: Request): Promise<Response> {
  let posted: Posted | null = null;
  try {
    posted = await readPosted(rt, req);
    const s = await needSession(rt, req);
    checkCsrf(req, s, posted);
    const id = posted.get("id");
    if (!id) throw invalid("id", "give the id of the token or connected app to revoke (GET /token and GET /token/grants list them)");
    // A token an OAuth grant issued goes with its grant, so a client cannot simply refresh it back.
    const grant = (await revokeGrant(rt, s.account.id, id)) || ((await grantTokenIds(rt, s.account.id)).has(id) ? false : null);
    if (grant === null && !(await revokeToken(rt.store, s.account.id, id, rt.tokens))) throw notFound(`you have no token or connected app with id "${id}"`);
    if (grant === false) throw notFound(`"${id}" is a connected app's token: disconnect the app (GET /token/grants lists them)`);
    rt.log.info(grant ? "oauth grant revoked" : "token revoked", { account: s.account.id, id });
    if (posted.json) return jsonResponse(200, { result: { revoked: id } }, rid());
    return seeOther(grant ? "/token?done=disconnected" : "/token?done=revoked");
  } catch (e) {
    return formRefusal(asHearthError(e), posted);
  }
}

export async function inviteCreate(rt: Runtime, req: Request): Promise<Response> {
  let posted: Posted | null = null;
  try {
    posted = await readPosted(rt, req);
    const s = await needSession(rt, req);
    checkCsrf(req, s, posted);
    const inv = await createInvite(rt, s.account);
    const base = rt.config.HEARTH_PUBLIC_URL || new URL(req.url).origin;
    const url = `${base.replace(/\/$/, "")}/signup?invite=${inv.code}`;
    rt.log.info("invitation made", { account: s.account.id });
    if (posted.json) return jsonResponse(200, { result: { code: inv.code, url, expires: inv.expires } }, rid(), { "cache-control": "no-store" });
    return tokenPage(rt, s, { invite: { url, expires: inv.expires } });
  } catch (e) {
    return formRefusal(asHearthError(e), posted);
  }
}

/** JSON for programs; for a page's form a short page saying what went wrong, with a way back. */
function formRefusal(err: ReturnType<typeof asHearthError>, posted: Posted | null): Response {
  if (!posted || posted.json) return errorResponse(err, rid());
  const back = err.status === 401 ? html`<p><a href="/signin?next=/token">Sign in</a></p>` : html`<p><a href="/token">Back to your tokens</a></p>`;
  return page({ title: "Not done", body: html`${message("alert", err.message)}${back}`, status: err.status, headers: err.headers });
}
