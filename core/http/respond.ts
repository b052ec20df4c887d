import { asHearthError, HearthError } from "../errors.ts";

const JSON_HEADERS = "application/json; charset=utf-8";

/** Headers every answer carries (serve.ts adds them to pages that lack them; JSON answers set them here, once). */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
});

const JSON_BASE = new Headers({ "content-type": JSON_HEADERS, ...SECURITY_HEADERS });
/** The base headers with a frozen set of extras (CORS) already in: copying a Headers costs less than building one. */
const templates = new WeakMap<object, Headers>();

function headersOf(requestId: string, extra?: Record<string, string>): Headers {
  let base = JSON_BASE;
  let rest = extra;
  if (extra && Object.isFrozen(extra)) {
    let t = templates.get(extra);
    if (!t) {
      t = new Headers(JSON_BASE);
      for (const k in extra) t.set(k, extra[k]);
      templates.set(extra, t);
    }
    base = t;
    rest = undefined;
  }
  const h = new Headers(base);
  h.set("x-request-id", requestId);
  if (rest) for (const k in rest) h.set(k, rest[k]);
  return h;
}

export function jsonResponse(status: number, body: unknown, requestId: string, headers?: Record<string, string>): Response {
  return new Response(JSON.stringify(body), { status, headers: headersOf(requestId, headers) });
}

export function errorResponse(e: unknown, requestId: string, extraHeaders?: Record<string, string>): Response {
  const err = asHearthError(e);
  const headers: Record<string, string> = { ...(err.headers ?? {}), ...(extraHeaders ?? {}) };
  const error = err.body(err.kind === "internal" ? requestId : undefined);
  // Members beside "error" never replace it: the envelope stays one shape for every refusal.
  return jsonResponse(err.status, err.envelope ? { ...err.envelope, error } : { error }, requestId, headers);
}

export { HearthError };

/**
 * Sets headers on an answer, copying it once if its headers cannot be changed
 * (redirects and passed-through fetches have immutable ones). With `keep`,
 * a header the answer already has is left as it is.
 */
export function withHeaders(res: Response, entries: Iterable<readonly [string, string]>, keep = false): Response {
  let out = res;
  let headers = out.headers;
  for (const [k, v] of entries) {
    // An answer made with these headers already (the JSON ones) is left alone: setting costs more than looking.
    const had = headers.get(k);
    if (had === v || (keep && had !== null)) continue;
    try {
      headers.set(k, v);
    } catch {
      out = new Response(out.body, out);
      headers = out.headers;
      headers.set(k, v);
    }
  }
  return out;
}

/** Headers for JSON answers made outside jsonResponse (MCP's), holding what serve.ts and withCors would add. */
export function answerTemplate(base: Record<string, string>, ...more: Readonly<Record<string, string>>[]): Headers {
  return new Headers(Object.assign({}, base, ...more, SECURITY_HEADERS));
}

/**
 * Answers made with the CORS and security headers already in (from an
 * answerTemplate that holds both). Reading a made answer's headers back costs
 * Bun more than the lookups themselves, so withCors and serve.ts pass these by.
 * The mark is a property of the answer itself: a WeakSet's add and lookups
 * cost a hot path (MCP's tools/call) several times as much.
 */
const COMPLETE = Symbol("complete");
const FINAL = Symbol("final");
type Marked = { [COMPLETE]?: true; [FINAL]?: true };
export function completeAnswer(res: Response): Response {
  (res as Marked)[COMPLETE] = true;
  return res;
}
export const isComplete = (res: Response) => (res as Marked)[COMPLETE] === true;

/**
 * Promises of answers that need nothing added once made (their CORS and
 * security headers are in, or put in by whoever made the promise): withCors'
 * callers and serve.ts hand them on as they are, rather than wait a turn each
 * only to find nothing to add.
 */
export function finalAnswer(p: Promise<Response>): Promise<Response> {
  (p as Marked)[FINAL] = true;
  return p;
}
export const isFinal = (p: Promise<Response>) => (p as Marked)[FINAL] === true;
