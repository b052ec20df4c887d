// Refusals as a person meets them: a browser that asks for a page and is
// refused (nothing at that address, not signed in, a failure) gets a page
// saying so with a way on, while programs, the API, MCP and DAV clients keep
// the one JSON shape every refusal has.
import { findSession } from "../../auth/sessions.ts";
import type { Runtime } from "../../runtime.ts";
import { html, page } from "./layout.ts";

/** Paths whose clients are programs, whatever their Accept says. */
const MACHINE = /^\/(?:api\/|mcp(?:\/|$)|dav(?:\/|$)|files\/dav(?:\/|$)|\.well-known\/)/;

/** The weight the Accept header gives a media type: its own entry, else its family's, else any's; 0 when absent. */
function weight(accept: string, type: string): { q: number; exact: boolean } {
  const family = type.split("/")[0] + "/*";
  let best = { q: 0, rank: 0, exact: false };
  for (const part of accept.split(",")) {
    const [range, ...params] = part.trim().toLowerCase().split(";");
    const rank = range === type ? 3 : range === family ? 2 : range === "*/*" ? 1 : 0;
    if (rank <= best.rank) continue;
    const qp = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    const q = qp ? Number(qp.slice(2)) : 1;
    best = { q: Number.isFinite(q) ? q : 0, rank, exact: rank === 3 };
  }
  return { q: best.q, exact: best.exact };
}

/** True when the client names HTML and weighs it above JSON: a browser navigating, not fetch() or curl. */
export function prefersHtml(req: Request): boolean {
  const accept = req.headers.get("accept");
  if (!accept) return false;
  const page = weight(accept, "text/html");
  const xhtml = weight(accept, "application/xhtml+xml");
  const best = Math.max(page.exact ? page.q : 0, xhtml.exact ? xhtml.q : 0);
  return best > 0 && best > weight(accept, "application/json").q;
}

const TITLES: Record<number, string> = {
  400: "That request was refused",
  401: "Sign in to see this",
  403: "Not allowed",
  404: "Page not found",
  405: "Not available this way",
  429: "Too many requests",
  500: "Something went wrong",
};

/**
 * A JSON refusal made for a browser's page request, as a page. Any other
 * answer is returned as it is.
 */
export async function forBrowser(rt: Runtime, req: Request, res: Response): Promise<Response> {
  if (res.status < 400 || !(res.headers.get("content-type") ?? "").startsWith("application/json")) return res;
  const path = new URL(req.url).pathname;
  if (MACHINE.test(path) || !prefersHtml(req)) return res;
  const text = await res.text();
  let error: { message?: unknown; request_id?: unknown } = {};
  try {
    error = (JSON.parse(text) as { error?: typeof error }).error ?? {};
  } catch {}
  if (typeof error.message !== "string") return new Response(text, res);
  const status = res.status;
  const said = status === 404 ? `There is nothing at ${path} on this instance.` : error.message.charAt(0).toUpperCase() + error.message.slice(1);
  const more =
    status === 401
      ? html`<p><a href="/signin?next=${encodeURIComponent(path + new URL(req.url).search)}">Sign in</a>, then you come back here.</p>`
      : status >= 500 && typeof error.request_id === "string"
        ? html`<p>If it happens again, tell the admin this request's id: <code>${error.request_id}</code>.</p>`
        : "";
  const headers: Record<string, string> = {};
  for (const k of ["retry-after", "x-request-id", "www-authenticate", "allow"]) {
    const v = res.headers.get(k);
    if (v) headers[k] = v;
  }
  // The header shows who is signed in, as on every other page.
  const session = status === 401 ? null : await findSession(rt, req).catch(() => null);
  return page({
    account: session?.account,
    csrf: session?.csrf,
    title: TITLES[status] ?? (status >= 500 ? TITLES[500] : TITLES[400]),
    status,
    headers,
    body: html`<p class="${status >= 500 ? "alert" : "notice"}" role="${status >= 500 ? "alert" : "status"}">${said}</p>${more}
<ul><li><a href="/">Go to the home page</a></li><li><a href="/services">Every service</a></li></ul>`,
  });
}
