// Who is calling, from the request. Each identifier looks at the request and
// either answers with a caller, declines (null), or refuses (throws).
import type { Caller } from "../plugin.ts";
import type { Runtime } from "../runtime.ts";
import { HearthError, unauthenticated } from "../errors.ts";
import { printableAscii } from "../validate.ts";
import { madeByAnotherSite } from "./cors.ts";

/**
 * The client's address, or how to learn it: asking the server for a
 * request's peer costs several µs, and a caller its token names (cached, with
 * its address) never needs it again.
 */
export type ClientAddress = string | (() => string);
export const addressOf = (a: ClientAddress): string => (typeof a === "string" ? a : a());

export type Identifier = (rt: Runtime, req: Request, address: ClientAddress) => Caller | null | Promise<Caller | null>;

/** What a client that cannot send a bearer token (a file manager, a phone's account settings) is asked for. */
export const BASIC_CHALLENGE = 'Basic realm="Hearth", charset="UTF-8"';

const refuseBasic = (message: string) => new HearthError("unauthenticated", message, { headers: { "WWW-Authenticate": BASIC_CHALLENGE } });

/** A bearer token in the Authorization header. */
export const bearer: Identifier = (rt, req) => {
  const h = req.headers.get("authorization");
  const token = h ? bearerToken(h) : null;
  if (token === null) return null;
  const found = rt.tokens.identify(token, rt.clock.now().getTime());
  return found instanceof Promise ? found.then((caller) => checkToken(rt, req, caller)) : checkToken(rt, req, found);
};

/**
 * The token of an Authorization header, null for Basic credentials (another
 * identifier's), refused for anything else. The usual form, "Bearer " and a
 * token of printable ASCII, is read without the regular expression, which
 * costs more than everything else in identifying a cached token.
 */
function bearerToken(h: string): string | null {
  if (h.length > 7 && h.startsWith("Bearer ") && printableAscii(h, 7)) return h.slice(7);
  if (/^Basic\s/i.test(h)) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  if (!m) throw unauthenticated('the Authorization header must be "Bearer <token>"');
  return m[1];
}

/** Runs the token checks; only a check that has to look something up makes the answer wait. */
function checkToken(rt: Runtime, req: Request, caller: Caller): Caller | Promise<Caller> {
  let waits: Promise<void>[] | undefined;
  for (const check of rt.wiring.tokenChecks) {
    const done = check(rt, req, caller);
    if (done instanceof Promise) (waits ??= []).push(done);
  }
  return waits ? Promise.all(waits).then(() => caller) : caller;
}

/** A check on a caller its bearer token identified (the audience of an OAuth token, ...); may refuse with 401. */
export type TokenCheck = (rt: Runtime, req: Request, caller: Caller) => void | Promise<void>;

/** Parameters a module adds to a 401's challenge: where a client learns how to get a token (RFC 9728 resource_metadata). */
export type ChallengeParams = (rt: Runtime, req: Request) => Record<string, string> | undefined;

const quoted = (v: string) => `"${v.replace(/[^\x20-\x7e]/g, "").replace(/[\\"]/g, (c) => `\\${c}`)}"`;

/**
 * The WWW-Authenticate header of a 401 (RFC 6750): a request that sent a
 * token is told it is invalid and why; every 401 says where to learn how to
 * get a token.
 */
export function bearerChallenge(rt: Runtime, req: Request, message?: string): Record<string, string> {
  const params: Record<string, string> = { realm: "hearth" };
  if (req.headers.has("authorization")) {
    params.error = "invalid_token";
    if (message) params.error_description = message;
  }
  for (const more of rt.wiring.challengeParams) Object.assign(params, more(rt, req));
  return { "www-authenticate": `Bearer ${Object.entries(params).map(([k, v]) => `${k}=${quoted(v)}`).join(", ")}` };
}

/**
 * HTTP Basic with a token as the password (an app password), for clients that
 * can only be given a username and a password (calendar, contacts and file
 * sync). The username must be the token's account, so a token pasted under
 * the wrong name is refused rather than quietly acting for someone else. A
 * browser remembers Basic credentials and sends them on its own, so a request
 * it marks as made by another site's page identifies no one, as a session
 * cookie would not. Refusals carry the Basic challenge these clients wait for.
 */
export const basic: Identifier = (rt, req) => {
  const h = req.headers.get("authorization");
  if (!h || !/^Basic\s/i.test(h)) return null;
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(h);
  if (!m) throw refuseBasic('the Authorization header must be "Basic <base64 of username:token>"');
  if (madeByAnotherSite(req)) return null;
  const pair = Buffer.from(m[1], "base64").toString("utf8");
  const colon = pair.indexOf(":");
  if (colon < 1) throw refuseBasic("Basic credentials must be username:token, with a Hearth token (an app password) as the password");
  const refuse = (e: unknown): never => {
    if (!(e instanceof HearthError) || e.kind !== "unauthenticated") throw e;
    throw refuseBasic(`${e.message}; the password is a Hearth token (an app password)`);
  };
  const named = (caller: Caller): Caller | Promise<Caller> => {
    if (caller.account?.username.toLowerCase() !== pair.slice(0, colon).trim().toLowerCase()) throw refuseBasic("the username is not the account this token belongs to");
    return checkToken(rt, req, caller);
  };
  let found: Caller | Promise<Caller>;
  try {
    found = rt.tokens.identify(pair.slice(colon + 1), rt.clock.now().getTime());
  } catch (e) {
    return refuse(e);
  }
  return found instanceof Promise ? found.then(named, refuse) : named(found);
};

/** The challenge headers a refusal carries: a 401's says how to get a token; others none. */
export function challengeFor(rt: Runtime, req: Request, e: HearthError): Record<string, string> | undefined {
  if (e.status !== 401) return undefined;
  // A refusal that names its own scheme (WebDAV's Basic) keeps it: the generic Bearer one would replace it.
  if (e.headers && Object.keys(e.headers).some((k) => k.toLowerCase() === "www-authenticate")) return undefined;
  return bearerChallenge(rt, req, e.message);
}

/**
 * What a request carries beside who is calling, added to the identified
 * caller (or the stranger): a payment sent with a token still pays for the
 * call. Returns the caller as it is, or a new one carrying more.
 */
export type Attachment = (rt: Runtime, req: Request, caller: Caller) => Caller;

/** Headers a module adds to a successful answer for this caller (a payment receipt, ...). */
export type AnswerHeaders = (caller: Caller) => Record<string, string> | undefined;

export function headersFor(rt: Runtime, caller: Caller): Record<string, string> | undefined {
  let out: Record<string, string> | undefined;
  for (const h of rt.wiring.answerHeaders) {
    const more = h(caller);
    if (more) out = { ...out, ...more };
  }
  return out;
}

export const stranger = (address: string): Caller => ({ account: null, scopes: [], via: "none", address });

/**
 * Who is calling: at once when every identifier asked answers at once (a
 * token in the cache), a promise only when one has to look something up.
 */
export function callerOf(rt: Runtime, req: Request, address: ClientAddress, from = 0): Caller | Promise<Caller> {
  const ids = rt.wiring.identifiers;
  for (let i = from; i < ids.length; i++) {
    const found = ids[i](rt, req, address);
    if (found instanceof Promise) return found.then((caller) => (caller ? attached(rt, req, address, caller) : callerOf(rt, req, address, i + 1)));
    if (found) return attached(rt, req, address, found);
  }
  return attached(rt, req, address, null);
}

function attached(rt: Runtime, req: Request, address: ClientAddress, found: Caller | null): Caller {
  // An identifier may hand back a caller it keeps for every request (the token cache): this request
  // gets its own copy, whose address is read from the connection only if something asks for it.
  let caller: Caller = !found ? stranger(addressOf(address)) : found.address === undefined ? new RequestCaller(found, address) : found;
  for (const attach of rt.wiring.attachments) caller = attach(rt, req, caller);
  return caller;
}

/** One request's view of a caller kept for many: the same fields, and the address of this request's client. */
class RequestCaller implements Caller {
  account: Caller["account"];
  scopes: Caller["scopes"];
  via: Caller["via"];
  tokenId: string | undefined;
  tokenName: string | undefined;
  agent: boolean | undefined;
  ambient: boolean | undefined;
  #from: ClientAddress;
  constructor(c: Caller, from: ClientAddress) {
    this.account = c.account;
    this.scopes = c.scopes;
    this.via = c.via;
    this.tokenId = c.tokenId;
    this.tokenName = c.tokenName;
    this.agent = c.agent;
    this.ambient = c.ambient;
    this.#from = from;
  }
  get address(): string {
    const from = this.#from;
    return typeof from === "string" ? from : (this.#from = from());
  }
}

export async function identify(rt: Runtime, req: Request, address: ClientAddress): Promise<Caller> {
  return callerOf(rt, req, address);
}
