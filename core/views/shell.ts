// The page a screen runs in: the common header, the session's CSRF token for
// the view's calls, and the view's bundle (with the shared one preloaded),
// under a policy that runs only this instance's scripts.
import { findSession, sessionCaller } from "../auth/sessions.ts";
import { html, page, PAGE_CSP, seeOther } from "../http/pages/layout.ts";
import type { Runtime } from "../runtime.ts";
import { screenBundle, uiBundle } from "./bundle.ts";
import { appNav } from "./nav.ts";
import type { Screen } from "./screens.ts";

/** The pages' policy, widened for the app: its own scripts, its web manifest and its service worker. */
export const APP_CSP = PAGE_CSP.replace("default-src 'none';", "default-src 'none'; script-src 'self'; manifest-src 'self'; worker-src 'self';");

/** Where a signed-out visitor is sent, coming back to `req`'s page once signed in. */
export const toSignIn = (req: Request) => {
  const u = new URL(req.url);
  return seeOther(`/signin?next=${encodeURIComponent(u.pathname + u.search)}`);
};

export async function shellPage(rt: Runtime, req: Request, screen: Screen): Promise<Response> {
  const s = await findSession(rt, req);
  if (!s) return toSignIn(req);
  const [ui, view] = await Promise.all([uiBundle(), screenBundle(screen.id, screen.file!)]);
  return page({
    title: screen.title,
    account: s.account,
    csrf: s.csrf,
    csp: APP_CSP,
    wide: true,
    nav: appNav(rt, sessionCaller(s), screen.href),
    head: html`<link rel="manifest" href="/my/manifest.webmanifest"><meta name="theme-color" content="#8a3b12"><link rel="apple-touch-icon" href="/my/icon-192.png">
<link rel="modulepreload" href="${ui.path}"><script type="module" src="${view.path}"></script>`,
    body: html`<div id="view" data-service="${screen.service}"><p class="state loading" role="status">Loading…</p></div>
<noscript><p class="alert">This screen needs JavaScript. Every service also answers at <a href="/services">/services</a>, over the API and the command line.</p></noscript>`,
  });
}
