// Calls from web pages on other origins. The API and /mcp answer any origin,
// so a page elsewhere can call public methods, send a bearer token, or pay
// with x402; never with this instance's cookie: no answer allows credentials,
// and a request from another origin is never identified by the cookie (see
// identifySession), so a page cannot borrow a signed-in person's session.

import { isComplete, withHeaders } from "./respond.ts";

/** On every API and /mcp answer: any origin may read it, and the headers a client acts on. */
export const CORS_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "access-control-allow-origin": "*",
  "access-control-expose-headers": "PAYMENT-REQUIRED, PAYMENT-RESPONSE, X-PAYMENT-RESPONSE, Mcp-Session-Id, WWW-Authenticate, Retry-After, X-Request-Id",
});

/**
 * Headers a page may send. x402 clients also send Access-Control-Expose-Headers
 * as a request header, so a preflight for it must pass.
 */
const ALLOW_HEADERS =
  "Authorization, Content-Type, Accept, X-PAYMENT, PAYMENT-SIGNATURE, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID, X-Request-Id, Access-Control-Expose-Headers";

/** The answer to a preflight (OPTIONS) for an endpoint taking `methods`. */
export function preflight(methods: string): Response {
  return new Response(null, {
    status: 204,
    headers: {
      ...CORS_HEADERS,
      "access-control-allow-methods": methods,
      "access-control-allow-headers": ALLOW_HEADERS,
      // Browsers cap this (Chromium at two hours); longer would be ignored.
      "access-control-max-age": "7200",
    },
  });
}

const CORS_ENTRIES = Object.entries(CORS_HEADERS);

/** The same answer with CORS_HEADERS. */
export function withCors(res: Response): Response {
  if (isComplete(res)) return res;
  return withHeaders(res, CORS_ENTRIES);
}

/**
 * Whether a browser says the request comes from a page on another origin: an
 * Origin that is "null" (a sandboxed frame) or whose host is not this
 * instance's (as the request, a proxy's X-Forwarded-Host or HEARTH_PUBLIC_URL
 * names it). No Origin header means no cross-origin page sent it.
 */
/**
 * Whether the browser says another site made this request (a link, an image,
 * a form): Sec-Fetch-Site, which no page can set, is neither same-origin nor
 * none (typed or bookmarked). Credentials a browser attaches on its own (a
 * cookie, remembered Basic) must not act for such a request.
 */
export function madeByAnotherSite(req: Request): boolean {
  const site = req.headers.get("sec-fetch-site");
  return site !== null && site !== "same-origin" && site !== "none";
}

export function isForeignOrigin(req: Request, publicUrl?: string): boolean {
  const origin = req.headers.get("origin");
  if (origin === null) return false;
  if (origin === "null") return true;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    return true;
  }
  const own = req.headers.get("x-forwarded-host") ?? req.headers.get("host") ?? new URL(req.url).host;
  if (host === own) return false;
  if (publicUrl) {
    try {
      if (new URL(publicUrl).host === host) return false;
    } catch {}
  }
  return true;
}
