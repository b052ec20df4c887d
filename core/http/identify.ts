// Who is calling, from the request. Each identifier looks at the request and
// either answers with a caller, declines (null), or refuses (throws).
import type { Caller } from "../plugin.ts";
import type { Runtime } from "../runtime.ts";
import { unauthenticated } from "../errors.ts";

export type Identifier = (rt: Runtime, req: Request, address: string) => Caller | null | Promise<Caller | null>;

const bearer: Identifier = (rt, req) => {
  const h = req.headers.get("authorization");
  if (!h) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  if (!m) throw unauthenticated('the Authorization header must be "Bearer <token>"');
  const caller = rt.tokens.identify(m[1], rt.clock.now().getTime());
  for (const check of tokenChecks) check(rt, req, caller);
  return caller;
};

/** Checks on a caller its bearer token identified (the audience of an OAuth token, ...); each may refuse with 401. */
export const tokenChecks: ((rt: Runtime, req: Request, caller: Caller) => void)[] = [];

/** Parameters modules add to a 401's challenge: where a client learns how to get a token (RFC 9728 resource_metadata). */
export const challengeParams: ((rt: Runtime, req: Request) => Record<string, string> | undefined)[] = [];

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
  for (const more of challengeParams) Object.assign(params, more(rt, req));
  return { "www-authenticate": `Bearer ${Object.entries(params).map(([k, v]) => `${k}=${quoted(v)}`).join(", ")}` };
}

/** Identifiers in order; the sessions module adds its own. */
export const identifiers: Identifier[] = [bearer];

/**
 * What a request carries beside who is calling, added to the identified
 * caller (or the stranger): a payment sent with a token still pays for the
 * call. Each returns the caller as it is, or a new one carrying more.
 */
export const attachments: ((rt: Runtime, req: Request, caller: Caller) => Caller)[] = [];

/** Headers a module adds to a successful answer for this caller (a payment receipt, ...). */
export const answerHeaders: ((caller: Caller) => Record<string, string> | undefined)[] = [];

export function headersFor(caller: Caller): Record<string, string> | undefined {
  let out: Record<string, string> | undefined;
  for (const h of answerHeaders) {
    const more = h(caller);
    if (more) out = { ...out, ...more };
  }
  return out;
}

export const stranger = (address: string): Caller => ({ account: null, scopes: [], via: "none", address });

export async function identify(rt: Runtime, req: Request, address: string): Promise<Caller> {
  let caller: Caller | null = null;
  for (const id of identifiers) {
    caller = await id(rt, req, address);
    if (caller) {
      caller.address ??= address;
      break;
    }
  }
  caller ??= stranger(address);
  for (const attach of attachments) caller = attach(rt, req, caller);
  return caller;
}
