// {base}/reference: the OpenAPI document rendered by Swagger UI, whose script
// and stylesheet this instance serves itself (embedded in the binary), so the
// page works offline and asks nothing of any other host.
import bundlePath from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "file" };
import cssPath from "swagger-ui-dist/swagger-ui.css" with { type: "file" };
import { findSession } from "../../auth/sessions.ts";
import { html, page } from "./layout.ts";
import type { Runtime } from "../../runtime.ts";

// The validator badge would send the document to validator.swagger.io; try-it calls carry the session's CSRF token,
// which writes need and so do reads that cost credits.
const INIT = `window.addEventListener("DOMContentLoaded", function () {
  var meta = document.querySelector('meta[name="csrf-token"]');
  window.ui = SwaggerUIBundle({
    url: "/openapi.json",
    dom_id: "#reference",
    deepLinking: true,
    filter: true,
    validatorUrl: null,
    withCredentials: true,
    tryItOutEnabled: false,
    requestInterceptor: function (req) {
      if (meta) req.headers["X-CSRF-Token"] = meta.content;
      return req;
    }
  });
});
`;

const ASSET_HEADERS = { "cache-control": "public, max-age=86400", "x-content-type-options": "nosniff" };

export const referenceAssets: Record<string, () => Response> = {
  "/reference/swagger-ui-bundle.js": () => new Response(Bun.file(bundlePath), { headers: { ...ASSET_HEADERS, "content-type": "text/javascript; charset=utf-8" } }),
  "/reference/swagger-ui.css": () => new Response(Bun.file(cssPath), { headers: { ...ASSET_HEADERS, "content-type": "text/css; charset=utf-8" } }),
  "/reference/init.js": () => new Response(INIT, { headers: { ...ASSET_HEADERS, "content-type": "text/javascript; charset=utf-8" } }),
};

/** Scripts and styles from this instance only; Swagger UI draws its icons as inline SVG and data: URLs. */
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export async function referencePage(rt: Runtime, req: Request): Promise<Response> {
  const s = await findSession(rt, req);
  const head = html`<link rel="stylesheet" href="/reference/swagger-ui.css">
<style>main,header{max-width:72rem}#reference .swagger-ui .info{margin:1rem 0}#reference .swagger-ui{color:inherit}@media (prefers-color-scheme:dark){#reference{background:#fbfaf7;color:#1d1b18;border-radius:.5rem}}</style>
<script src="/reference/swagger-ui-bundle.js" defer></script>
<script src="/reference/init.js" defer></script>`;
  const body = html`<p>The API as an <a href="/openapi.json">OpenAPI 3.1 document</a>, generated from the methods this instance has. The same list, with forms that call each method as you, is at <a href="/services">/services</a>.</p>
<div id="reference"><noscript><p>This reference needs JavaScript; <a href="/services">/services</a> lists the same methods without it.</p></noscript></div>`;
  return page({ title: "API reference", body, account: s?.account ?? null, csrf: s?.csrf, head, csp: CSP });
}
