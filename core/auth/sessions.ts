// Browser sessions: a secret in an HttpOnly, SameSite=Lax cookie, looked up
// by its sha256 on every request, so signing out takes effect at once. POSTs
// that rest on the cookie must echo the session's CSRF token.
import { answered, mapAnswer } from "../answer.ts";
import { and, desc, eq, gt, lt, ne } from "drizzle-orm";
import { accounts, sessions } from "../db/schema.ts";
import { forbidden } from "../errors.ts";
import { isForeignOrigin } from "../http/cors.ts";
import type { Account, Caller } from "../plugin.ts";
import type { Runtime } from "../runtime.ts";
import { describeBrowser } from "./browser.ts";
import { hashToken, newSecret, safeEqual } from "./ids.ts";

export const COOKIE = "hearth_session";
export const CSRF_HEADER = "x-csrf-token";

export interface Session {
  hash: string;
  account: Account;
  csrf: string;
  expires: number;
}

export function readCookie(req: Request, name: string): string | null {
  const header = req.headers.get("cookie");
  if (!header) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || null;
  }
  return null;
}

/** Secure when the page was reached over https, directly, through a proxy that says so, or by configuration. */
export function isSecure(rt: Runtime, req: Request): boolean {
  if (new URL(req.url).protocol === "https:") return true;
  if ((req.headers.get("x-forwarded-proto") ?? "").split(",")[0].trim().toLowerCase() === "https") return true;
  return (rt.config.HEARTH_PUBLIC_URL ?? "").startsWith("https://");
}

export function sessionCookie(rt: Runtime, req: Request, secret: string, maxAgeSeconds: number): string {
  return [`${COOKIE}=${secret}`, "Path=/", "HttpOnly", "SameSite=Lax", `Max-Age=${maxAgeSeconds}`, ...(isSecure(rt, req) ? ["Secure"] : [])].join("; ");
}

export function clearCookie(rt: Runtime, req: Request): string {
  return sessionCookie(rt, req, "", 0);
}

function sessionDays(rt: Runtime): number {
  const d = Number(rt.config.HEARTH_SESSION_DAYS);
  return Number.isFinite(d) && d > 0 ? d : 30;
}

/** Starts a session; returns the Set-Cookie value and the session's CSRF token. */
export async function startSession(rt: Runtime, req: Request, account: Account): Promise<{ cookie: string; csrf: string }> {
  const secret = newSecret();
  const csrf = newSecret();
  const now = rt.clock.now().getTime();
  const ttl = Math.round(sessionDays(rt) * 86_400_000);
  await rt.store.write(async () => {
    // Expired rows are of no use to anyone; sign-in is a quiet moment to drop them.
    await rt.store.wdb.delete(sessions).where(lt(sessions.expires, now)).run();
    await rt.store.wdb
      .insert(sessions)
      .values({ hash: hashToken(secret), account: account.id, csrf, created: now, expires: now + ttl, lastSeen: now, browser: describeBrowser(req.headers.get("user-agent")) })
      .run();
  });
  return { cookie: sessionCookie(rt, req, secret, Math.floor(ttl / 1000)), csrf };
}

/** The live session the request's cookie names, or null. */
export function findSession(rt: Runtime, req: Request): Promise<Session | null> {
  const secret = readCookie(req, COOKIE);
  if (!secret || secret.length > 200) return answered(null);
  const hash = hashToken(secret);
  const found = rt.store.rdb
    .select({
      csrf: sessions.csrf,
      expires: sessions.expires,
      lastSeen: sessions.lastSeen,
      id: accounts.id,
      username: accounts.username,
      admin: accounts.admin,
    })
    .from(sessions)
    .innerJoin(accounts, eq(accounts.id, sessions.account))
    .where(eq(sessions.hash, hash))
    .get();
  return mapAnswer(found, (row): Session | null => {
    const now = rt.clock.now().getTime();
    if (!row || row.expires <= now) return null;
    if (now - row.lastSeen > SEEN_EVERY_MS) noteSeen(rt, hash, now);
    return { hash, account: { id: row.id, username: row.username, admin: row.admin }, csrf: row.csrf, expires: row.expires };
  });
}

/** Last activity is kept coarsely (a write every few minutes at most), off the request path. */
const SEEN_EVERY_MS = 5 * 60_000;
function noteSeen(rt: Runtime, hash: string, now: number) {
  queueMicrotask(() => {
    rt.store.exclusive(() => rt.store.wdb.update(sessions).set({ lastSeen: now }).where(eq(sessions.hash, hash)).run()).catch(() => {});
  });
}

export async function endSession(rt: Runtime, s: Session) {
  await rt.store.write(() => rt.store.wdb.delete(sessions).where(eq(sessions.hash, s.hash)).run());
}

/** Signs the account out on every browser; returns how many sessions ended. */
export async function endAllSessions(rt: Runtime, accountId: string): Promise<number> {
  const gone = await rt.store.write(() => rt.store.wdb.delete(sessions).where(eq(sessions.account, accountId)).returning({ hash: sessions.hash }).all());
  return gone.length;
}

/**
 * The id a session is shown and ended by on /account: derived from the
 * stored hash, so the page carries nothing the lookup itself uses.
 */
export const sessionId = (hash: string) => hashToken(`session id\n${hash}`).slice(0, 20);

export interface SessionInfo {
  id: string;
  created: number;
  lastSeen: number;
  browser: string | null;
  current: boolean;
}

/** The account's live sessions, most recently seen first; `current` marks the one asking. */
export async function listSessions(rt: Runtime, s: Session): Promise<SessionInfo[]> {
  const rows = await rt.store.rdb
    .select({ hash: sessions.hash, created: sessions.created, lastSeen: sessions.lastSeen, browser: sessions.browser })
    .from(sessions)
    .where(and(eq(sessions.account, s.account.id), gt(sessions.expires, rt.clock.now().getTime())))
    .orderBy(desc(sessions.lastSeen))
    .all();
  return rows.map((r) => ({ id: sessionId(r.hash), created: r.created, lastSeen: r.lastSeen, browser: r.browser, current: r.hash === s.hash }));
}

/** Ends one of the account's sessions by its shown id; false when it has none such. */
export async function endSessionById(rt: Runtime, accountId: string, id: string): Promise<boolean> {
  return rt.store.write(async () => {
    const rows = await rt.store.wdb.select({ hash: sessions.hash }).from(sessions).where(eq(sessions.account, accountId)).all();
    const hit = rows.find((r) => sessionId(r.hash) === id);
    if (!hit) return false;
    await rt.store.wdb.delete(sessions).where(eq(sessions.hash, hit.hash)).run();
    return true;
  });
}

/** Signs the account out everywhere but this session (inside a caller's write, or in its own); returns how many ended. */
export async function endOtherSessions(rt: Runtime, s: Session): Promise<number> {
  const gone = await rt.store.write(() =>
    rt.store.wdb
      .delete(sessions)
      .where(and(eq(sessions.account, s.account.id), ne(sessions.hash, s.hash)))
      .returning({ hash: sessions.hash })
      .all(),
  );
  return gone.length;
}

export function csrfMatches(s: Session, given: string | null | undefined): boolean {
  return typeof given === "string" && given.length > 0 && safeEqual(given, s.csrf);
}

/** Refuses a POST resting on the session cookie that does not carry the session's CSRF token. */
export function requireCsrf(s: Session, given: string | null | undefined) {
  if (!csrfMatches(s, given))
    throw forbidden(`a POST signed in with the session cookie needs the header X-CSRF-Token (the session's token, given on its pages and by GET /session); nothing was changed`);
}

export function sessionCaller(s: Session): Caller {
  return { account: s.account, scopes: "*", via: "session" };
}

/**
/**
 * Whether the browser says one of this instance's own pages made the request:
 * Sec-Fetch-Site, which no page can set, is same-origin, and Origin, when
 * sent, is this instance.
 */
export function fromOwnPage(rt: Runtime, req: Request): boolean {
  if (req.headers.get("sec-fetch-site") !== "same-origin") return false;
  const origin = req.headers.get("origin");
  if (origin === null) return true;
  const own = rt.config.HEARTH_PUBLIC_URL;
  return origin === new URL(req.url).origin || (!!own && origin === new URL(own).origin);
}

/**
 * The identifier for the API, /mcp and plugin routes: a request with a live
 * session cookie is that account; a POST must also carry X-CSRF-Token.
 * A GET without that token or same-origin proof is one another site may have
 * made the browser send (a link, an image), so it may read but not spend.
 * A stale cookie identifies nobody (the request proceeds as a stranger), and
 * so does any cookie on a request a page on another origin made: the API
 * answers other origins, but only for tokens, payments and public methods.
 */
export function identifySession(rt: Runtime, req: Request): Caller | null | Promise<Caller | null> {
  // Only a request carrying cookies from this instance's own origin waits on a lookup.
  if (!req.headers.has("cookie") || isForeignOrigin(req, rt.config.HEARTH_PUBLIC_URL)) return null;
  return mapAnswer(findSession(rt, req), (s) => s && sessionCallerFor(rt, req, s));
}

function sessionCallerFor(rt: Runtime, req: Request, s: Session): Caller {
  const given = req.headers.get(CSRF_HEADER);
  if (req.method !== "GET" && req.method !== "HEAD") requireCsrf(s, given);
  const caller = sessionCaller(s);
  if (!csrfMatches(s, given) && !fromOwnPage(rt, req)) caller.ambient = true;
  return caller;
}
