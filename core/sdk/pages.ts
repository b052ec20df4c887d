// `hearth/pages`: a page a plugin serves from a route, drawn in the site's
// own frame (header, styles, content security policy) from escaped HTML.
export { Html, html, raw, escape, page, seeOther, PAGE_CSP } from "../http/pages/layout.ts";
export { hostName } from "../http/host.ts";
