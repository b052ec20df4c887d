// The app's row of the header for a signed-in person, on every screen and on
// the home page: the search across everything, then a link to each screen
// their session reaches (from the manifests) and the instance's own pages.
import { html, NAV_LINKS, type Html } from "../http/pages/layout.ts";
import type { Caller } from "../plugin.ts";
import type { Runtime } from "../runtime.ts";
import { usableBy } from "./screens.ts";

/** A screen that links a page the site header already lists (the agent, apps, the blog) is not named twice. */
const inSiteHeader = new Set(NAV_LINKS.map((l) => l.href));

/** `current` is the path of the page shown, marked for screen readers and by its look. */
export function appNav(rt: Runtime, caller: Caller, current: string, query = ""): Html {
  const links = usableBy(rt, caller)
    .map((s) => ({ title: s.title, href: s.href }))
    .filter((l) => !inSiteHeader.has(l.href));
  return html`<form class="find" role="search" method="get" action="/my/search"><label class="visually-hidden" for="find">Search everything</label><input type="search" id="find" name="q" value="${query}" placeholder="Search everything  ( / )" autocomplete="off" aria-keyshortcuts="/"></form>
<nav class="screens" aria-label="Your services"><ul>${links.map((l) => html`<li><a href="${l.href}"${current === l.href ? html` aria-current="page"` : ""}>${l.title}</a></li>`)}</ul></nav>`;
}
