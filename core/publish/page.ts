// A plain server-rendered page: no outside assets, readable without CSS, and
// a Content-Security-Policy that forbids script unless the page brings its
// own by nonce, so user content that slipped past sanitising still cannot run.
import { SITE_HEADER_STYLE, siteHeader } from "../http/pages/layout.ts";

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

const style = `body{font:17px/1.6 system-ui,sans-serif;max-width:46rem;margin:0 auto;padding:1rem 1.25rem;color:#1b1b1b;background:#fff}
a{color:#0b57d0}img{max-width:100%}pre{overflow:auto;background:#f4f4f4;padding:.75rem}code{background:#f4f4f4}
header,footer{color:#555;font-size:.9rem}ul.posts{list-style:none;padding:0}ul.posts li{margin:0 0 1.25rem}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.25rem .5rem}
@media (prefers-color-scheme:dark){body{background:#111;color:#eee}a{color:#8ab4f8}pre,code{background:#222}}`;

export function page(opts: {
  title: string;
  body: string;
  status?: number;
  /** Extra <head> lines (feed links). */
  head?: string;
  /** Inline script allowed by nonce. */
  script?: string;
  headers?: Record<string, string>;
  /** The instance's site header for whoever reads the page: its links for a signed-in person, sign-in for anyone else. */
  site?: { account: { username: string; admin?: boolean } | null };
}): Response {
  const nonce = opts.script ? crypto.randomUUID().replace(/-/g, "") : "";
  const csp = [
    "default-src 'none'",
    "img-src https: http: data:",
    "style-src 'unsafe-inline'",
    opts.script ? `script-src 'nonce-${nonce}'; connect-src 'self'` : "script-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(opts.title)}</title>
<style>${style}${opts.site ? SITE_HEADER_STYLE : ""}</style>
${opts.head ?? ""}
</head>
<body>
${opts.site ? siteHeader(opts.site.account).text : ""}
${opts.body}
${opts.script ? `<script nonce="${nonce}">${opts.script}</script>` : ""}
</body>
</html>
`;
  return new Response(html, {
    status: opts.status ?? 200,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": csp,
      "x-content-type-options": "nosniff",
      "referrer-policy": "same-origin",
      ...(opts.headers ?? {}),
    },
  });
}

export function notFoundPage(what: string): Response {
  return page({ title: "Not found", status: 404, body: `<main><h1>Not found</h1><p>${escapeHtml(what)}</p></main>` });
}
