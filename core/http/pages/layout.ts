// The shared page shell for server-rendered pages: escaped templates, one
// small inline stylesheet, no script and no asset from outside the instance,
// so every page works offline, on a phone, and with a screen reader.
import { APP_STYLE } from "../../views/style.ts";

/** HTML that is already safe to insert as is. */
export class Html {
  constructor(readonly text: string) {}
  toString() {
    return this.text;
  }
}

/** Marks trusted markup (never text that came from a person or a request). */
export const raw = (text: string) => new Html(text);

export function escape(v: unknown): string {
  return String(v).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

function part(v: unknown): string {
  if (v === null || v === undefined || v === false) return "";
  if (v instanceof Html) return v.text;
  if (Array.isArray(v)) return v.map(part).join("");
  return escape(v);
}

/** Template tag: every interpolated value is escaped unless it is Html (or an array of them). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += part(values[i]) + strings[i + 1];
  return new Html(out);
}

/** The site header's look, shared with page shells of their own (the public blog's) so it looks the same there. */
const SITE_HEADER_RULES = `header{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:baseline;justify-content:space-between;border-bottom:1px solid var(--line)}
header .brand{font-weight:700;text-decoration:none;color:var(--fg)}
header nav{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center}
header form{display:inline;margin:0}
header.site{max-width:60rem;align-items:center}
header.site ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:.25rem .9rem}
header.site li a{display:inline-block;padding:.35rem 0;text-decoration:none}
header.site li a:hover,header.site li a[aria-current=page]{text-decoration:underline;text-underline-offset:.3em}
header.site li a[aria-current=page]{color:var(--fg);font-weight:600}
header.site .who{margin-left:auto;position:relative;color:var(--muted);font-size:.95rem}
header.site .narrow{display:none}
header.site summary{cursor:pointer;font-weight:600;color:var(--accent);padding:.5rem .75rem;border:1px solid var(--line);border-radius:.4rem;min-height:2.75rem;display:flex;align-items:center;gap:.35rem;list-style:none}
header.site summary::-webkit-details-marker{display:none}
header.site summary:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
header.site .me summary{color:var(--fg);font-weight:400}
header.site .me summary strong{color:var(--accent)}
header.site .me summary::after,header.site .narrow summary::after{content:"";width:.45rem;height:.45rem;border:solid currentColor;border-width:0 2px 2px 0;transform:translateY(-.15rem) rotate(45deg);margin-left:.15rem;color:var(--accent)}
header.site details[open]>summary::after{transform:translateY(.1rem) rotate(-135deg)}
header.site .me .pop{position:absolute;right:0;top:calc(100% + .35rem);z-index:20;min-width:13rem;padding:.4rem 0;background:var(--bg);border:1px solid var(--line);border-radius:.5rem;box-shadow:0 .5rem 1.5rem color-mix(in srgb,var(--fg) 14%,transparent)}
header.site .me ul{flex-direction:column;gap:0}
header.site .me li a,header.site .me .pop button{display:block;width:100%;text-align:left;padding:.55rem 1rem;min-height:0;border:0;border-radius:0;font-weight:400;background:transparent;color:var(--accent)}
header.site .me li a:hover,header.site .me .pop button:hover{background:color-mix(in srgb,var(--accent) 9%,transparent)}
header.site .me form{display:block;border-top:1px solid var(--line);margin-top:.35rem;padding-top:.35rem}
@media (max-width:48rem){header.site .wide{display:none}header.site .narrow{display:block}header.site .narrow[open]{flex-basis:100%;order:3}header.site .narrow ul{flex-direction:column;gap:0;padding:.5rem 0}header.site .narrow li a{padding:.6rem 0;display:block}header.site .me .said{display:none}header.site .narrow{margin-left:auto}header.site .narrow+.who{margin-left:0}}`;

/** The header's colours and rules, for a page shell that does not use this stylesheet. */
export const SITE_HEADER_STYLE = `:root{color-scheme:light dark;--fg:#1d1b18;--bg:#fbfaf7;--muted:#5c5750;--line:#d9d4cb;--accent:#8a3b12;--ok:#1f6b33;--bad:#a11d1d;--field:#fff}\n@media (prefers-color-scheme:dark){:root{--fg:#eeeae3;--bg:#1b1a18;--muted:#b3ada3;--line:#44403a;--accent:#f0a36b;--ok:#7fd18f;--bad:#ff8f8f;--field:#26241f}}\nheader.site{margin:0 auto;padding:1rem;font-family:system-ui,sans-serif}header.site a{color:var(--accent)}header.site button{font:inherit;font-weight:600;padding:.4rem .9rem;border-radius:.4rem;border:1px solid var(--accent);background:transparent;color:var(--accent);cursor:pointer}\n${SITE_HEADER_RULES}`;

const STYLE = `
:root{color-scheme:light dark;--fg:#1d1b18;--bg:#fbfaf7;--muted:#5c5750;--line:#d9d4cb;--accent:#8a3b12;--ok:#1f6b33;--bad:#a11d1d;--field:#fff}
@media (prefers-color-scheme:dark){:root{--fg:#eeeae3;--bg:#1b1a18;--muted:#b3ada3;--line:#44403a;--accent:#f0a36b;--ok:#7fd18f;--bad:#ff8f8f;--field:#26241f}}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;font:1.0625rem/1.55 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
a{color:var(--accent)}
.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:1rem;background:var(--bg);padding:.5rem;z-index:1}
header,main,footer{max-width:44rem;margin:0 auto;padding:1rem}
${SITE_HEADER_RULES}
h1{font-size:1.6rem;line-height:1.2;margin:.5rem 0 1rem}
h2{font-size:1.2rem;margin:2rem 0 .5rem}
label{display:block;font-weight:600;margin:1rem 0 .25rem}
.hint{color:var(--muted);font-size:.93rem;margin:.2rem 0}
input[type=text],input[type=password],input[type=date],select{width:100%;max-width:28rem;font:inherit;padding:.6rem .7rem;border:1px solid var(--muted);border-radius:.4rem;background:var(--field);color:var(--fg)}
fieldset{border:1px solid var(--line);border-radius:.5rem;margin:1rem 0;padding:.5rem 1rem 1rem}
legend{font-weight:600;padding:0 .25rem}
.choice{display:flex;gap:.5rem;align-items:flex-start;font-weight:400;margin:.5rem 0}
.choice input{margin-top:.35rem;width:1.1rem;height:1.1rem;flex:none}
.services{display:grid;grid-template-columns:repeat(auto-fill,minmax(11rem,1fr));gap:0 1rem;margin-left:1.6rem}
button{font:inherit;font-weight:600;padding:.6rem 1.1rem;border-radius:.4rem;border:1px solid var(--accent);background:var(--accent);color:var(--bg);cursor:pointer;min-height:2.75rem}
button.quiet{background:transparent;color:var(--accent)}
button:focus-visible,a:focus-visible,input:focus-visible,select:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.alert{border-left:4px solid var(--bad);padding:.5rem .8rem;margin:1rem 0;background:color-mix(in srgb,var(--bad) 10%,transparent)}
.notice{border-left:4px solid var(--ok);padding:.5rem .8rem;margin:1rem 0;background:color-mix(in srgb,var(--ok) 10%,transparent)}
.secret{display:block;font:1rem/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;word-break:break-all;padding:.75rem;border:1px dashed var(--accent);border-radius:.4rem;background:var(--field);user-select:all}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:.5rem .4rem;border-bottom:1px solid var(--line);vertical-align:top}
@media (max-width:36rem){table,thead,tbody,tr,th,td{display:block}thead{position:absolute;left:-999px}tr{border-bottom:1px solid var(--line);padding:.5rem 0}td{border:0;padding:.15rem 0}td[data-label]::before{content:attr(data-label) ": ";color:var(--muted)}}
footer{color:var(--muted);font-size:.9rem}
`;

/** Content-Security-Policy for pages built here: no scripts, nothing from elsewhere, forms post only to this instance. */
export const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export interface PageOptions {
  title: string;
  body: Html;
  /** Who is signed in; shown in the header with a sign-out button. */
  account?: { username: string; admin?: boolean } | null;
  /** The session's CSRF token: published for in-page scripts and used by the sign-out form. */
  csrf?: string;
  status?: number;
  headers?: Record<string, string>;
  /** A page that needs scripts or other sources widens this for itself. */
  csp?: string;
  /** Extra markup for <head> (a page's own style or script, served by this instance). */
  head?: Html;
  /** The page's own path, so the header marks where the person is. */
  path?: string;
  /** The app's own row of the header for a signed-in person: their screens and the search (core/views/nav.ts). */
  nav?: Html;
  /** The page's main column is the app's wide one (a list beside an editor) instead of a column of reading width. */
  wide?: boolean;
  /** Markup in place of the <h1> title (a screen's heading is its view's). */
  heading?: Html;
}

/** One link of the site header. */
export interface NavLink {
  href: string;
  label: string;
  /** Shown only to an instance's admins. */
  admin?: boolean;
  /** About the person's own account and the instance, not their data: listed in the menu under their name. */
  own?: boolean;
}

/**
 * Where a signed-in person can go, in the order the header lists them. The
 * one list every page's header reads (a page shell of its own reuses it
 * through siteHeader), so a new place is added here once.
 */
export const NAV_LINKS: NavLink[] = [
  { href: "/", label: "Home" },
  { href: "/services", label: "Your data" },
  { href: "/agent", label: "Agent" },
  { href: "/apps", label: "Apps" },
  { href: "/blog", label: "Blog" },
  { href: "/mcp", label: "MCP" },
  { href: "/account", label: "Account", own: true },
  { href: "/token", label: "Tokens", own: true },
  { href: "/activity", label: "Activity", own: true },
  { href: "/approvals", label: "Approvals", own: true },
  { href: "/settings", label: "Settings", admin: true, own: true },
  { href: "/people", label: "People", admin: true, own: true },
];

/** The links one person sees: the admin-only ones for admins. */
export const navFor = (account: { admin?: boolean }) => NAV_LINKS.filter((l) => !l.admin || account.admin);

/**
 * The site header: for a signed-in person the places their data and agents
 * live, with the page they are on marked, and a menu under their name for
 * their account, credentials, activity and (for admins) the instance. Both
 * menus are details elements, so they open without script and work with a
 * keyboard and a screen reader as a plain disclosure does; on a phone the
 * places fold into a menu of their own, so the header stays one row.
 */
export function siteHeader(account: PageOptions["account"], csrf?: string, current?: string): Html {
  if (!account)
    return html`<header class="site"><a class="brand" href="/">Hearth</a><nav aria-label="Account"><a href="/signin">Sign in</a><a href="/signup">Sign up</a></nav></header>`;
  const mine = navFor(account);
  const here = current ? mine.filter((l) => current === l.href || (l.href !== "/" && current.startsWith(`${l.href}/`))).at(-1)?.href : undefined;
  const list = (ls: NavLink[]) => html`<ul>${ls.map((l) => html`<li><a href="${l.href}"${l.href === here ? html` aria-current="page"` : ""}>${l.label}</a></li>`)}</ul>`;
  const places = list(mine.filter((l) => !l.own));
  // Without the session's CSRF token (a page shell that is not given it) the way out is from any other page.
  const out = csrf
    ? html`<form method="post" action="/signout"><input type="hidden" name="csrf" value="${csrf}"><button class="quiet" type="submit">Sign out</button></form>`
    : "";
  const who = html`<nav class="who" aria-label="Account"><details class="me"><summary><span class="said">Signed in as </span><strong>${account.username}</strong></summary>
<div class="pop">${list(mine.filter((l) => l.own))}${out}</div></details></nav>`;
  return html`<header class="site"><a class="brand" href="/">Hearth</a>
<nav class="wide" aria-label="Site">${places}</nav>
<details class="narrow"><summary>Menu</summary><nav aria-label="Site menu">${places}</nav></details>
${who}</header>`;
}

export function renderPage(o: PageOptions): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<title>${escape(o.title)} · Hearth</title>
${o.csrf ? `<meta name="csrf-token" content="${escape(o.csrf)}">` : ""}
<style>${STYLE}${o.nav ? APP_STYLE : ""}</style>
${o.head ? o.head.text : ""}
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
${siteHeader(o.account, o.csrf, o.path).text}
${o.nav ? `<div class="approw">${o.nav.text}</div>` : ""}
<main id="main"${o.wide ? ' class="wide"' : ""}>
${o.heading ? o.heading.text : `<h1>${escape(o.title)}</h1>`}
${o.body.text}
</main>
</body>
</html>
`;
}

/** A page as a Response: never cached (pages here carry personal state), framed by nobody. */
export function page(o: PageOptions): Response {
  return new Response(renderPage(o), {
    status: o.status ?? 200,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      "content-security-policy": o.csp ?? PAGE_CSP,
      "referrer-policy": "same-origin",
      "x-content-type-options": "nosniff",
      ...(o.headers ?? {}),
    },
  });
}

/** A 303 to a path on this instance (after a form post, so reloading does not post again). */
export function seeOther(path: string, headers: Record<string, string> = {}): Response {
  return new Response(null, { status: 303, headers: { location: path, "cache-control": "no-store", ...headers } });
}

/** A message box: an alert for refusals (announced by screen readers), a notice otherwise. */
export function message(kind: "alert" | "notice", text: string | null | undefined): Html {
  if (!text) return html``;
  return kind === "alert" ? html`<p class="alert" role="alert">${text}</p>` : html`<p class="notice" role="status">${text}</p>`;
}

/** True when the client asked for a page rather than JSON (browsers put text/html in Accept). */
export function wantsHtml(req: Request): boolean {
  return (req.headers.get("accept") ?? "").includes("text/html");
}
