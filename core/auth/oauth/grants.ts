// The instance as its own OAuth 2.1 authorization server for MCP clients:
// clients (registered, or known by a metadata document at their client_id
// URL), one-use codes bound to a PKCE S256 challenge, grants a person gave,
// access tokens that are the core's bearer tokens with an expiry, and
// refresh tokens that rotate. Everything a grant issued dies with it.
import { and, desc, eq, inArray, isNull, lt, lte, max } from "drizzle-orm";
import { guardedFetch } from "../../upstream/pages/guarded.ts";
import { accounts, tokens } from "../../db/schema.ts";
import { HearthError } from "../../errors.ts";
import type { Account } from "../../plugin.ts";
import type { Runtime } from "../../runtime.ts";
import { hashToken, newId, newSecret, safeEqual } from "../ids.ts";
import { issueToken } from "../tokens.ts";
import { GRANT_DEFAULT, storedPolicy, type Policy } from "../../policy/rules.ts";
import { oauthAccess, oauthClients, oauthCodes, oauthGrants, oauthRefresh } from "./schema.ts";

/** An RFC 6749 error: `error` is the code a client acts on, `description` names the parameter and the reason. */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
  ) {
    super(description);
  }
}

export interface Client {
  id: string;
  name: string;
  redirectUris: string[];
  kind: "registered" | "document";
}

const CODE_MS = 10 * 60_000;
const NAME_MAX = 100;

/** This instance's base URL (no trailing slash): the configured public URL, else the request's origin. */
export function instanceBase(rt: Runtime, req: Request): string {
  return (rt.config.HEARTH_PUBLIC_URL || new URL(req.url).origin).replace(/\/+$/, "");
}

/**
 * The audience a token asked for with `resource` (RFC 8707) is this instance:
 * its /mcp endpoint, its API, or the instance as a whole. Anything else is
 * another resource, for which this server issues nothing.
 */
export function audienceFor(rt: Runtime, req: Request, resource: string | null | undefined): string {
  const base = instanceBase(rt, req);
  if (!resource) return base;
  let url: URL;
  try {
    url = new URL(resource);
  } catch {
    throw new OAuthError("invalid_target", `resource "${resource}" is not an absolute URL`);
  }
  const own = new URL(base);
  const path = url.pathname.replace(/\/+$/, "");
  const prefix = own.pathname.replace(/\/+$/, "");
  const rest = path.startsWith(prefix) ? path.slice(prefix.length) : null;
  const ours = url.origin === own.origin && !url.hash && rest !== null && (rest === "" || rest === "/mcp" || rest === "/api/v1" || rest.startsWith("/api/v1/"));
  if (!ours) throw new OAuthError("invalid_target", `resource "${resource}" is not this instance; tokens here are for ${base}/mcp and ${base}/api/v1`);
  return base;
}

const LOOPBACK = new Set(["127.0.0.1", "[::1]", "localhost"]);
const NEVER_SCHEMES = new Set(["javascript:", "data:", "vbscript:", "file:", "blob:", "about:", "ws:", "wss:", "ftp:"]);
/**
 * Schemes the operating system or the browser itself acts on (a troubleshooter,
 * settings, a search, a call, another app's installer): anyone may register a
 * client, so a redirect there would be this instance sending a person's
 * browser into one of them. A private-use scheme is an app's own (RFC 8252
 * section 7.1), which these are not.
 */
const SYSTEM_SCHEMES = new Set([
  "mailto:", "tel:", "sms:", "mms:", "callto:", "sip:", "sips:", "facetime:", "facetime-audio:", "webcal:", "news:", "nntp:", "snews:", "telnet:",
  "ldap:", "ldaps:", "smb:", "nfs:", "afp:", "ssh:", "sftp:", "rdp:", "vnc:", "irc:", "gopher:", "jar:", "mk:", "its:", "res:", "hcp:", "help:",
  "shell:", "search:", "read:", "intent:", "content:", "chrome:", "view-source:", "resource:", "applescript:", "itms:", "itms-apps:",
  "itms-services:", "maps:", "message:", "settings:", "prefs:", "app-settings:",
]);
const SYSTEM_PREFIXES = ["ms-", "search-ms", "microsoft-", "windows-", "x-apple", "com.apple.", "vnd.", "android-", "chrome-", "edge-", "moz-", "x-windows"];

/**
 * A redirect URI anyone may register: absolute, no fragment; https, http on
 * loopback only, or an app's own private-use scheme that no system handler
 * answers to.
 */
export function checkRedirectUri(raw: unknown): string {
  if (typeof raw !== "string" || raw.length > 2000) throw new OAuthError("invalid_redirect_uri", "redirect_uris holds URLs as strings (at most 2000 characters)");
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OAuthError("invalid_redirect_uri", `redirect_uris: "${raw}" is not an absolute URL`);
  }
  if (url.hash || raw.includes("#")) throw new OAuthError("invalid_redirect_uri", `redirect_uris: "${raw}" has a fragment, which a redirect URI must not have`);
  const scheme = url.protocol.toLowerCase();
  if (NEVER_SCHEMES.has(scheme)) throw new OAuthError("invalid_redirect_uri", `redirect_uris: "${raw}" uses ${scheme}, which cannot receive a code`);
  if (SYSTEM_SCHEMES.has(scheme) || SYSTEM_PREFIXES.some((p) => scheme.startsWith(p)))
    throw new OAuthError("invalid_redirect_uri", `redirect_uris: "${raw}" uses ${scheme}, which the operating system or browser handles; use https, http on 127.0.0.1 / localhost, or your app's own scheme (com.example.app:/callback)`);
  if (scheme === "http:" && !LOOPBACK.has(url.hostname))
    throw new OAuthError("invalid_redirect_uri", `redirect_uris: "${raw}" is plain http on another machine; use https, or http on 127.0.0.1 / localhost`);
  if (url.username || url.password) throw new OAuthError("invalid_redirect_uri", `redirect_uris: "${raw}" carries a user name or password`);
  return raw;
}

/** Controls and bidi overrides (which can make a name read as another, or reorder what follows it) are taken out of a client's name. */
const UNSHOWN = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
export const shownName = (name: string) => name.replace(UNSHOWN, "").trim();

function clientName(raw: unknown, fallback: string): string {
  if (raw === undefined || raw === null || raw === "") return fallback;
  if (typeof raw !== "string") throw new OAuthError("invalid_client_metadata", "client_name is a string");
  const n = shownName(raw);
  if (!n) return fallback;
  return n.length > NAME_MAX ? n.slice(0, NAME_MAX) : n;
}

function redirectList(raw: unknown): string[] {
  if (!Array.isArray(raw) || raw.length === 0) throw new OAuthError("invalid_redirect_uri", "redirect_uris is a non-empty list of the URLs the client receives codes at");
  if (raw.length > 20) throw new OAuthError("invalid_redirect_uri", "redirect_uris has at most 20 URLs");
  return [...new Set(raw.map(checkRedirectUri))];
}

/** Dynamic client registration (RFC 7591): public clients with PKCE, so no secret is issued. */
export async function registerClient(rt: Runtime, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const redirectUris = redirectList(body.redirect_uris);
  for (const [field, allowed] of [
    ["grant_types", ["authorization_code", "refresh_token"]],
    ["response_types", ["code"]],
  ] as const) {
    const v = body[field];
    if (v === undefined) continue;
    if (!Array.isArray(v) || v.some((x) => typeof x !== "string" || !(allowed as readonly string[]).includes(x)))
      throw new OAuthError("invalid_client_metadata", `${field} may hold only ${allowed.join(", ")}`);
  }
  const name = clientName(body.client_name, "An MCP client");
  const id = `hc_${newId()}`;
  const now = rt.clock.now().getTime();
  await rt.store.write(() =>
    rt.store.wdb.insert(oauthClients).values({ id, name, redirectUris: JSON.stringify(redirectUris), kind: "registered", created: now }).run(),
  );
  rt.log.info("oauth client registered", { client: id });
  return {
    client_id: id,
    client_id_issued_at: Math.floor(now / 1000),
    client_name: name,
    redirect_uris: redirectUris,
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  };
}

const isUrlClientId = (id: string) => /^https?:\/\//i.test(id);

/**
 * The client a client_id names: one registered here, or one whose client_id
 * is the https URL of its metadata document, fetched (through the guarded
 * fetch, so it cannot reach this machine or its network) and kept.
 */
export async function resolveClient(rt: Runtime, clientId: string | undefined | null, fetchDocument: boolean): Promise<Client> {
  if (!clientId) throw new OAuthError("invalid_request", "client_id is missing");
  if (clientId.length > 2000) throw new OAuthError("invalid_client", "client_id is too long");
  if (isUrlClientId(clientId) && fetchDocument) return fetchClientDocument(rt, clientId);
  const row = await rt.store.rdb.select().from(oauthClients).where(eq(oauthClients.id, clientId)).get();
  if (!row) throw new OAuthError("invalid_client", `client_id "${clientId}" is not known here: register at the registration endpoint, or use the URL of a client ID metadata document`, 401);
  return { id: row.id, name: shownName(row.name) || row.id, redirectUris: JSON.parse(row.redirectUris), kind: row.kind as Client["kind"] };
}

async function fetchClientDocument(rt: Runtime, clientId: string): Promise<Client> {
  const loopback = rt.config.HEARTH_OAUTH_LOOPBACK_CLIENTS === "on";
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    throw new OAuthError("invalid_client", `client_id "${clientId}" looks like a URL but is not one`);
  }
  const local = loopback && url.protocol === "http:" && LOOPBACK.has(url.hostname);
  if ((url.protocol !== "https:" && !local) || url.pathname === "/" || url.hash)
    throw new OAuthError("invalid_client", `client_id "${clientId}" as a URL must be https with a path (a client ID metadata document)`);
  let doc: Record<string, unknown>;
  try {
    const res = await guardedFetch(clientId, { field: "client_id", allowLoopback: loopback, maxBytes: 64 * 1024, timeoutMs: 8000, maxRedirects: 0, headers: { accept: "application/json" } });
    const parsed: unknown = JSON.parse(res.body.toString("utf8"));
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("the document is not a JSON object");
    doc = parsed as Record<string, unknown>;
  } catch (e) {
    const why = e instanceof HearthError || e instanceof Error ? e.message : String(e);
    throw new OAuthError("invalid_client", `the client ID metadata document at ${clientId} could not be read: ${why}`);
  }
  if (doc.client_id !== clientId) throw new OAuthError("invalid_client", `the client ID metadata document at ${clientId} names client_id "${String(doc.client_id)}", not its own URL`);
  let redirectUris: string[];
  try {
    redirectUris = redirectList(doc.redirect_uris);
  } catch (e) {
    throw new OAuthError("invalid_client", `the client ID metadata document at ${clientId}: ${(e as Error).message}`);
  }
  const name = clientName(doc.client_name, url.host);
  const now = rt.clock.now().getTime();
  await rt.store.write(() =>
    rt.store.wdb
      .insert(oauthClients)
      .values({ id: clientId, name, redirectUris: JSON.stringify(redirectUris), kind: "document", created: now })
      .onConflictDoUpdate({ target: oauthClients.id, set: { name, redirectUris: JSON.stringify(redirectUris) } })
      .run(),
  );
  return { id: clientId, name, redirectUris, kind: "document" };
}

/** Scopes as tokens keep them: "*" or comma-separated service names. */
const scopesColumn = (s: "*" | string[]) => (s === "*" ? "*" : s.join(","));
const scopesOf = (t: string): "*" | string[] => (t === "*" ? "*" : t.split(",").filter(Boolean));
/** The scope a token answer states: space-separated service names, or "*" for all. */
const scopeText = (s: "*" | string[]) => (s === "*" ? "*" : s.join(" "));

/** Issues the one-use code the consent gives, bound to the client, its redirect URI and the PKCE challenge. */
export async function createCode(
  rt: Runtime,
  o: { account: Account; client: Client; redirectUri: string; challenge: string; scopes: "*" | string[]; audience: string; policy?: Policy },
): Promise<string> {
  const code = newSecret();
  const now = rt.clock.now().getTime();
  await rt.store.write(async () => {
    // Expired codes can no longer be exchanged (a replay of one is simply unknown); a new consent is a quiet moment to drop them.
    await rt.store.wdb.delete(oauthCodes).where(lt(oauthCodes.expires, now)).run();
    await rt.store.wdb
      .insert(oauthCodes)
      .values({
        hash: hashToken(code),
        account: o.account.id,
        client: o.client.id,
        redirectUri: o.redirectUri,
        challenge: o.challenge,
        scopes: scopesColumn(o.scopes),
        audience: o.audience,
        policy: o.policy ? JSON.stringify(o.policy) : null,
        expires: now + CODE_MS,
      })
      .run();
  });
  return code;
}

export interface TokenAnswer {
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  refresh_token: string;
  scope: string;
}

function accessMinutes(rt: Runtime): number {
  const m = Number(rt.config.HEARTH_OAUTH_ACCESS_MINUTES);
  return Number.isFinite(m) && m > 0 ? m : 60;
}

/** Inside the caller's write: a new access token and refresh token for the grant. */
async function issuePair(rt: Runtime, grant: typeof oauthGrants.$inferSelect, account: Account): Promise<TokenAnswer> {
  const now = rt.clock.now();
  const minutes = accessMinutes(rt);
  const scopes = scopesOf(grant.scopes);
  // Each renewal makes a token; the grant's expired ones are of no use to anyone and go (their links with them).
  const expired = (
    await rt.store.wdb
      .select({ id: tokens.id })
      .from(oauthAccess)
      .innerJoin(tokens, eq(tokens.id, oauthAccess.token))
      .where(and(eq(oauthAccess.grant, grant.id), lte(tokens.expires, now.getTime())))
      .all()
  ).map((r) => r.id);
  if (expired.length) await rt.store.wdb.delete(tokens).where(inArray(tokens.id, expired)).run();
  const access = await issueToken(rt.store, account, { name: `${grant.clientName} (OAuth)`, scopes, expires: new Date(now.getTime() + minutes * 60_000), now });
  await rt.store.wdb.insert(oauthAccess).values({ token: access.id, grant: grant.id }).run();
  const refresh = `hrt_${newSecret()}`;
  await rt.store.wdb.insert(oauthRefresh).values({ hash: hashToken(refresh), grant: grant.id, created: now.getTime() }).run();
  return { access_token: access.token, token_type: "Bearer", expires_in: Math.round(minutes * 60), refresh_token: refresh, scope: scopeText(scopes) };
}

async function accountOf(rt: Runtime, id: string): Promise<Account> {
  const r = await rt.store.wdb.select().from(accounts).where(eq(accounts.id, id)).get();
  if (!r) throw new OAuthError("invalid_grant", "the account this was granted by no longer exists");
  return { id: r.id, username: r.username, admin: r.admin };
}

/** A refusal that had to commit what it did (revoking a replayed grant) is thrown once the write stands. */
function settled(r: TokenAnswer | OAuthError): TokenAnswer {
  if (r instanceof OAuthError) throw r;
  return r;
}

const S256 = (verifier: string) => new Bun.CryptoHasher("sha256").update(verifier).digest("base64url");

/** authorization_code: the code, once, by the client it was issued to, at the same redirect URI, with the PKCE verifier. */
export async function exchangeCode(
  rt: Runtime,
  o: { code: string | undefined; clientId: string; redirectUri: string | undefined; verifier: string | undefined; audience: string },
): Promise<TokenAnswer> {
  if (!o.code) throw new OAuthError("invalid_request", "code is missing");
  if (!o.verifier) throw new OAuthError("invalid_request", "code_verifier is missing: this server requires PKCE (S256)");
  if (!/^[A-Za-z0-9\-._~]{43,128}$/.test(o.verifier)) throw new OAuthError("invalid_request", "code_verifier must be 43-128 characters of A-Z, a-z, 0-9, -, ., _ and ~");
  const hash = hashToken(o.code);
  return settled(await rt.store.write(async (): Promise<TokenAnswer | OAuthError> => {
    // Held until this write ends: of two exchanges of one code at once, the second reads it used (and revokes what it gave).
    await rt.store.lock(`oauth:code:${hash}`);
    const row = await rt.store.wdb.select().from(oauthCodes).where(eq(oauthCodes.hash, hash)).get();
    const now = rt.clock.now().getTime();
    if (!row) throw new OAuthError("invalid_grant", "the code is not valid (unknown, or issued by another server)");
    if (row.grant) {
      // A code presented twice was intercepted or replayed: what it gave the first time is withdrawn.
      // Returned, not thrown: a throw would roll the revocation back with the rest of the write.
      await revokeGrantRows(rt, row.grant);
      return new OAuthError("invalid_grant", "the code was already used; the tokens it gave are revoked");
    }
    if (row.expires <= now) throw new OAuthError("invalid_grant", "the code has expired; authorize again");
    if (row.client !== o.clientId) throw new OAuthError("invalid_grant", "the code was issued to another client_id");
    if (o.redirectUri !== row.redirectUri) throw new OAuthError("invalid_grant", "redirect_uri does not match the one the code was issued for");
    if (!safeEqual(S256(o.verifier!), row.challenge)) throw new OAuthError("invalid_grant", "code_verifier does not match the code_challenge");
    if (o.audience !== row.audience) throw new OAuthError("invalid_target", "resource differs from the one authorized");
    const client = await rt.store.wdb.select().from(oauthClients).where(eq(oauthClients.id, row.client)).get();
    const grant = {
      id: newId(),
      account: row.account,
      client: row.client,
      clientName: (client && shownName(client.name)) || row.client,
      scopes: row.scopes,
      audience: row.audience,
      created: now,
      revoked: null,
    };
    await rt.store.wdb.insert(oauthGrants).values(grant).run();
    // What the person chose at consent; a code from before policies existed gets what a new grant starts with.
    await rt.policies?.put(row.account, grant.id, row.policy ? storedPolicy(row.policy) : GRANT_DEFAULT);
    await rt.store.wdb.update(oauthCodes).set({ grant: grant.id }).where(eq(oauthCodes.hash, hash)).run();
    const answer = await issuePair(rt, grant, await accountOf(rt, row.account));
    rt.log.info("oauth grant made", { account: row.account, grant: grant.id, client: row.client });
    return answer;
  }));
}

/** refresh_token: rotates. A refresh token used a second time revokes its grant, since one of its holders is not the client. */
export async function refreshGrant(
  rt: Runtime,
  o: { refreshToken: string | undefined; clientId: string; audience: string; scope: string | undefined },
): Promise<TokenAnswer> {
  if (!o.refreshToken) throw new OAuthError("invalid_request", "refresh_token is missing");
  const hash = hashToken(o.refreshToken);
  return settled(await rt.store.write(async (): Promise<TokenAnswer | OAuthError> => {
    // Held until this write ends: of two renewals with one refresh token at once, the second reads it used (and revokes the grant).
    await rt.store.lock(`oauth:refresh:${hash}`);
    const row = await rt.store.wdb.select().from(oauthRefresh).where(eq(oauthRefresh.hash, hash)).get();
    if (!row) throw new OAuthError("invalid_grant", "the refresh token is not valid (unknown or revoked)");
    // The grant is held too: a revocation under way either ends before this reads it, or waits and revokes what this issues.
    await rt.store.lock(grantKey(row.grant));
    const grant = await rt.store.wdb.select().from(oauthGrants).where(eq(oauthGrants.id, row.grant)).get();
    if (!grant || grant.revoked) throw new OAuthError("invalid_grant", "the grant was revoked; authorize again");
    if (grant.client !== o.clientId) throw new OAuthError("invalid_grant", "the refresh token was issued to another client_id");
    if (row.used) {
      await revokeGrantRows(rt, grant.id);
      return new OAuthError("invalid_grant", "the refresh token was already used; the grant is revoked, authorize again");
    }
    if (o.audience !== grant.audience) throw new OAuthError("invalid_target", "resource differs from the one authorized");
    let scopes = scopesOf(grant.scopes);
    const asked = (o.scope ?? "").split(" ").filter(Boolean);
    if (asked.length && !asked.includes("*")) {
      const had = scopes;
      const extra = had === "*" ? [] : asked.filter((s) => !had.includes(s));
      if (extra.length) throw new OAuthError("invalid_scope", `scope asks for ${extra.join(", ")}, which the grant does not include`);
      scopes = asked;
    }
    await rt.store.wdb.update(oauthRefresh).set({ used: rt.clock.now().getTime() }).where(eq(oauthRefresh.hash, hash)).run();
    return issuePair(rt, { ...grant, scopes: scopesColumn(scopes) }, await accountOf(rt, grant.account));
  }));
}

const grantKey = (id: string) => `oauth:grant:${id}`;

/** Inside a write: the grant is revoked, with every access token and refresh token it issued. */
async function revokeGrantRows(rt: Runtime, grantId: string) {
  // Held until the write ends, so a renewal of this grant at the same moment never issues a token this does not see.
  await rt.store.lock(grantKey(grantId));
  const now = rt.clock.now().getTime();
  await rt.store.wdb.update(oauthGrants).set({ revoked: now }).where(and(eq(oauthGrants.id, grantId), isNull(oauthGrants.revoked))).run();
  const ids = (await rt.store.wdb.select({ token: oauthAccess.token }).from(oauthAccess).where(eq(oauthAccess.grant, grantId)).all()).map((r) => r.token);
  if (ids.length) {
    const gone = await rt.store.wdb.update(tokens).set({ revoked: now }).where(and(inArray(tokens.id, ids), isNull(tokens.revoked))).returning({ hash: tokens.hash }).all();
    for (const g of gone) rt.tokens.forget(g.hash);
  }
  await rt.store.wdb.delete(oauthRefresh).where(eq(oauthRefresh.grant, grantId)).run();
}

/** Revokes one of the account's grants; false when it has none by that id. */
export async function revokeGrant(rt: Runtime, accountId: string, grantId: string): Promise<boolean> {
  return rt.store.write(async () => {
    const g = await rt.store.wdb
      .select({ id: oauthGrants.id })
      .from(oauthGrants)
      .where(and(eq(oauthGrants.id, grantId), eq(oauthGrants.account, accountId), isNull(oauthGrants.revoked)))
      .get();
    if (!g) return false;
    await revokeGrantRows(rt, g.id);
    return true;
  });
}

export interface GrantInfo {
  id: string;
  client: string;
  client_name: string;
  scopes: "*" | string[];
  created: string;
  last_used: string | null;
}

const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());

/** The account's live grants, newest first; last use is the latest of their access tokens'. */
export async function listGrants(rt: Runtime, accountId: string): Promise<GrantInfo[]> {
  const rows = await rt.store.rdb
    .select({ g: oauthGrants, last: max(tokens.lastUsed) })
    .from(oauthGrants)
    .leftJoin(oauthAccess, eq(oauthAccess.grant, oauthGrants.id))
    .leftJoin(tokens, eq(tokens.id, oauthAccess.token))
    .where(and(eq(oauthGrants.account, accountId), isNull(oauthGrants.revoked)))
    .groupBy(oauthGrants.id)
    .orderBy(desc(oauthGrants.created), desc(oauthGrants.id))
    .all();
  return rows.map(({ g, last }) => ({
    id: g.id,
    client: g.client,
    client_name: shownName(g.clientName) || g.client,
    scopes: scopesOf(g.scopes),
    created: iso(g.created)!,
    last_used: iso(last ?? null),
  }));
}

/** Ids of the account's tokens that OAuth grants issued: they are shown and revoked as their grant, not one by one. */
export async function grantTokenIds(rt: Runtime, accountId: string): Promise<Set<string>> {
  const rows = await rt.store.rdb
    .select({ id: oauthAccess.token })
    .from(oauthAccess)
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthAccess.grant))
    .where(eq(oauthGrants.account, accountId))
    .all();
  return new Set(rows.map((r) => r.id));
}

/**
 * The audience of a token a grant issued, or null for any other token; kept
 * in memory since it never changes, so only a token's first use waits on it.
 */
const audiences = new WeakMap<Runtime, Map<string, string | null>>();
export function tokenAudience(rt: Runtime, tokenId: string): string | null | Promise<string | null> {
  let m = audiences.get(rt);
  if (!m) audiences.set(rt, (m = new Map()));
  const known = m.get(tokenId);
  if (known !== undefined) return known;
  return lookUpAudience(rt, tokenId, m);
}

async function lookUpAudience(rt: Runtime, tokenId: string, seen: Map<string, string | null>): Promise<string | null> {
  const row = await rt.store.rdb
    .select({ audience: oauthGrants.audience })
    .from(oauthAccess)
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthAccess.grant))
    .where(eq(oauthAccess.token, tokenId))
    .get();
  if (seen.size > 10_000) seen.clear();
  seen.set(tokenId, row?.audience ?? null);
  return row?.audience ?? null;
}
