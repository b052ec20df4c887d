// {base}/oauth/authorize: a signed-in person allows an OAuth client (an MCP
// connector) to act as them, within the services they pick. The whole
// request is checked first, and any fault in it is shown here, never sent
// anywhere: anyone may register a client, so redirecting an invalid request
// to its redirect URI would make this instance an open redirector (RFC 9700
// section 4.11.2). The client is sent back to only by the person's answer on
// the consent page, which names where it leads: a code, or access_denied.
import { checkRedirectUri, createCode, instanceBase, OAuthError, resolveClient, audienceFor, type Client } from "../../auth/oauth/grants.ts";
import { CSRF_HEADER, findSession, requireCsrf, type Session } from "../../auth/sessions.ts";
import { asHearthError } from "../../errors.ts";
import type { Runtime } from "../../runtime.ts";
import { readPosted, type Posted } from "./form.ts";
import { html, message, page, PAGE_CSP, seeOther } from "./layout.ts";
import { postedScopes, scopePicker } from "./token.ts";
import { policyFields, postedPolicy, POLICY_STYLE } from "../../policy/form.ts";
import { methodPaths } from "../../policy/index.ts";
import { GRANT_DEFAULT, type Policy } from "../../policy/rules.ts";

/** What the client asked for, from the query (GET) or the consent form's hidden fields (POST). */
interface Ask {
  client_id?: string;
  redirect_uri?: string;
  response_type?: string;
  code_challenge?: string;
  code_challenge_method?: string;
  state?: string;
  scope?: string;
  resource?: string;
}
const FIELDS = ["client_id", "redirect_uri", "response_type", "code_challenge", "code_challenge_method", "state", "scope", "resource"] as const;

interface Checked {
  client: Client;
  redirectUri: string;
}

/** A fault in the request: shown to the person, never sent to a redirect URI. */
function errorPage(status: number, text: string): Response {
  return page({ title: "This app cannot sign in", body: html`${message("alert", text)}<p>Tell the app's maker, or try connecting again from the app.</p>`, status });
}

async function checkClient(rt: Runtime, ask: Ask, fetchDocument: boolean): Promise<Checked> {
  const client = await resolveClient(rt, ask.client_id, fetchDocument);
  let redirectUri = ask.redirect_uri;
  if (!redirectUri) {
    if (client.redirectUris.length !== 1) throw new OAuthError("invalid_request", "redirect_uri is missing, and the client has more than one");
    redirectUri = client.redirectUris[0];
  }
  // Exact match only: a redirect URI that is merely similar may belong to someone else.
  if (!client.redirectUris.includes(redirectUri)) throw new OAuthError("invalid_request", `redirect_uri "${redirectUri}" is not one of the client's registered redirect URIs`);
  // Held to today's rules even if it was registered under older ones.
  try {
    checkRedirectUri(redirectUri);
  } catch (e) {
    throw new OAuthError("invalid_request", (e as OAuthError).description.replace(/^redirect_uris: /, "redirect_uri "));
  }
  return { client, redirectUri };
}

/** The rest of the request, once the client and its redirect URI are known. */
function checkRequest(rt: Runtime, req: Request, ask: Ask): { challenge: string; audience: string } {
  if (ask.response_type !== "code") throw new OAuthError("unsupported_response_type", `response_type must be "code" (got "${ask.response_type ?? ""}")`);
  if (!ask.code_challenge) throw new OAuthError("invalid_request", "code_challenge is required: this server requires PKCE with S256");
  if (ask.code_challenge_method !== "S256")
    throw new OAuthError("invalid_request", `code_challenge_method must be S256 (got "${ask.code_challenge_method ?? ""}"); plain is not accepted`);
  if (!/^[A-Za-z0-9_-]{43}$/.test(ask.code_challenge)) throw new OAuthError("invalid_request", "code_challenge must be the 43-character base64url SHA-256 of the code verifier");
  return { challenge: ask.code_challenge, audience: audienceFor(rt, req, ask.resource) };
}

function back(rt: Runtime, req: Request, redirectUri: string, params: Record<string, string | undefined>): Response {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  url.searchParams.set("iss", instanceBase(rt, req));
  return new Response(null, { status: 303, headers: { location: url.href, "cache-control": "no-store", "referrer-policy": "no-referrer" } });
}

/** What the person answered goes back to the client: access_denied with its state. */
const errorBack = (rt: Runtime, req: Request, c: Checked, ask: Ask, e: OAuthError) =>
  back(rt, req, c.redirectUri, { error: e.error, error_description: e.description, state: ask.state });

/** Where the client's redirect URI leads, as a person can judge it: the web origin, or the app's own scheme. */
function destination(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.protocol === "http:" || url.protocol === "https:" ? url.origin : `${url.protocol} (an app on this device)`;
}

/** The form posts here, and its answer redirects to the client: the page's form-action must allow that target too. */
function consentCsp(redirectUri: string): string {
  const url = new URL(redirectUri);
  const target = url.protocol === "http:" || url.protocol === "https:" ? url.origin : url.protocol;
  return PAGE_CSP.replace("form-action 'self'", `form-action 'self' ${target}`);
}

function consentPage(rt: Runtime, s: Session, c: Checked, ask: Ask, o: { chosen?: string[]; policy?: Policy; error?: string; status?: number } = {}): Response {
  const services = rt.registry.services();
  const asked = (ask.scope ?? "").split(" ").filter((x) => services.includes(x));
  const chosen = o.chosen ?? (asked.length === services.length ? [] : asked);
  const from = c.client.kind === "document" ? new URL(c.client.id).host : null;
  const body = html`${message("alert", o.error)}
<p><strong>${c.client.name}</strong>${from ? html` (from ${from})` : ""} asks to use this instance as <strong>${s.account.username}</strong>.
It will be able to call the services you allow here, until you disconnect it on the <a href="/token">Tokens</a> page.</p>
<p class="hint">After you answer, you go back to <strong>${destination(c.redirectUri)}</strong>.</p>
<form method="post" action="/oauth/authorize">
<input type="hidden" name="csrf" value="${s.csrf}">
${FIELDS.map((f) => (ask[f] === undefined ? "" : html`<input type="hidden" name="${f}" value="${ask[f]}">`))}
${scopePicker(services, chosen)}
${policyFields(o.policy ?? GRANT_DEFAULT, "What it may do without asking you")}
<p><button type="submit" name="decision" value="allow">Allow</button> <button class="quiet" type="submit" name="decision" value="deny">Deny</button></p>
</form>`;
  return page({ title: `Allow ${c.client.name}?`, body, account: s.account, csrf: s.csrf, status: o.status, csp: consentCsp(c.redirectUri), head: POLICY_STYLE });
}

export async function authorizeGet(rt: Runtime, req: Request): Promise<Response> {
  const url = new URL(req.url);
  const ask: Ask = {};
  for (const f of FIELDS) {
    const v = url.searchParams.getAll(f);
    if (v.length > 1) return errorPage(400, `${f} is given more than once`);
    if (v.length) ask[f] = v[0];
  }
  let c: Checked;
  try {
    c = await checkClient(rt, ask, true);
  } catch (e) {
    const err = e instanceof OAuthError ? e : null;
    return errorPage(err ? 400 : asHearthError(e).status, err ? err.description : asHearthError(e).message);
  }
  try {
    checkRequest(rt, req, ask);
  } catch (e) {
    if (e instanceof OAuthError) return errorPage(400, `${e.error}: ${e.description}`);
    throw e;
  }
  const s = await findSession(rt, req);
  if (!s) return seeOther(`/signin?next=${encodeURIComponent(url.pathname + url.search)}`);
  return consentPage(rt, s, c, ask);
}

export async function authorizePost(rt: Runtime, req: Request): Promise<Response> {
  let form: Posted;
  try {
    form = await readPosted(rt, req);
  } catch (e) {
    const err = asHearthError(e);
    return errorPage(err.status, err.message);
  }
  const ask: Ask = {};
  for (const f of FIELDS) ask[f] = form.get(f);
  const s = await findSession(rt, req);
  if (!s) return page({ title: "Sign in first", body: html`${message("alert", "You are not signed in: connect again from the app.")}`, status: 401 });
  try {
    requireCsrf(s, req.headers.get(CSRF_HEADER) ?? form.get("csrf"));
  } catch (e) {
    return errorPage(403, asHearthError(e).message);
  }
  let c: Checked;
  try {
    c = await checkClient(rt, ask, false);
  } catch (e) {
    return errorPage(400, e instanceof OAuthError ? e.description : asHearthError(e).message);
  }
  let checked: { challenge: string; audience: string };
  try {
    checked = checkRequest(rt, req, ask);
  } catch (e) {
    if (e instanceof OAuthError) return errorPage(400, `${e.error}: ${e.description}`);
    throw e;
  }
  try {
    const { challenge, audience } = checked;
    if (form.get("decision") !== "allow") throw new OAuthError("access_denied", `${s.account.username} did not allow this app`);
    let scopes: "*" | string[];
    let policy: Policy;
    try {
      scopes = postedScopes(form, rt.registry.services());
      policy = postedPolicy(form, methodPaths(rt), GRANT_DEFAULT);
    } catch (e) {
      return consentPage(rt, s, c, ask, { chosen: form.all("scopes"), error: asHearthError(e).message, status: 400 });
    }
    const code = await createCode(rt, { account: s.account, client: c.client, redirectUri: c.redirectUri, challenge, scopes, audience, policy });
    rt.log.info("oauth consent given", { account: s.account.id, client: c.client.id });
    return back(rt, req, c.redirectUri, { code, state: ask.state });
  } catch (e) {
    if (e instanceof OAuthError) return errorBack(rt, req, c, ask, e);
    throw e;
  }
}
