// The page a screen runs in: the common header, the session's CSRF token for
// the view's calls, and the view's bundle (with the shared one preloaded),
// under a policy that runs only this instance's scripts.
import { findSession, sessionCaller, type Session } from "../auth/sessions.ts";
import { dispatch } from "../dispatch.ts";
import { html, page, PAGE_CSP, raw, seeOther } from "../http/pages/layout.ts";
import type { Runtime } from "../runtime.ts";
import { datesBundle, screenBundle, uiBundle } from "./bundle.ts";
import { appNav } from "./nav.ts";
import type { Screen } from "./screens.ts";

/** The pages' policy, widened for the app: its own scripts, its web manifest and its service worker. */
export const APP_CSP = PAGE_CSP.replace("default-src 'none';", "default-src 'none'; script-src 'self'; manifest-src 'self'; worker-src 'self';");

/** Where a signed-out visitor is sent, coming back to `req`'s page once signed in. */
export const toSignIn = (req: Request) => {
  const u = new URL(req.url);
  return seeOther(`/signin?next=${encodeURIComponent(u.pathname + u.search)}`);
};

/** The most the answers a page carries may weigh: past it, the view asks for them itself. */
const READS_LIMIT = 256 * 1024;

/**
 * The answers of the reads the screen declares (ScreenDef.reads), as the view
 * would get them from call(), keyed by JSON of [method, args]; as JSON for a
 * data block (`<` escaped, so nothing in an answer ends the block). Only for
 * the person opening the page themselves (typed, a link or a page of this
 * instance): a page of elsewhere that makes their browser load it spends no
 * read. A read refused is left out: the view asks, and shows why.
 */
async function firstReads(rt: Runtime, req: Request, s: Session, screen: Screen): Promise<string | null> {
  const site = req.headers.get("sec-fetch-site");
  if (!screen.reads.length || req.headers.get("sec-fetch-mode") !== "navigate" || (site !== "none" && site !== "same-origin")) return null;
  const caller = sessionCaller(s);
  const origin = new URL(req.url).origin;
  const answers: Record<string, unknown> = {};
  await Promise.all(
    screen.reads.map(async (r) => {
      const [service, method] = r.method.split("/") as [string, string];
      try {
        answers[JSON.stringify([r.method, r.args])] = await dispatch(rt, { service, method, args: r.args, caller, verb: "GET", baseUrl: origin, surface: "http" });
      } catch {}
    }),
  );
  const json = JSON.stringify(answers).replace(/</g, "\\u003c");
  return json.length > READS_LIMIT || json === "{}" ? null : json;
}

export async function shellPage(rt: Runtime, req: Request, screen: Screen): Promise<Response> {
  const s = await findSession(rt, req);
  if (!s) return toSignIn(req);
  const [ui, view, reads] = await Promise.all([uiBundle(), screenBundle(screen.id, screen.file!), firstReads(rt, req, s, screen)]);
  return page({
    title: screen.title,
    account: s.account,
    csrf: s.csrf,
    csp: APP_CSP,
    wide: true,
    nav: appNav(rt, sessionCaller(s), screen.href),
    head: html`<link rel="manifest" href="/my/manifest.webmanifest"><meta name="theme-color" content="#8a3b12"><link rel="apple-touch-icon" href="/my/icon-192.png">
<meta name="dates-check" content="${datesBundle().path}"><link rel="modulepreload" href="${ui.path}"><script type="module" src="${view.path}"></script>`,
    body: html`<div id="view" data-service="${screen.service}"><p class="state loading" role="status">Loading…</p></div>${reads ? html`\n<script type="application/json" id="first-reads">${raw(reads)}</script>` : ""}
<noscript><p class="alert">This screen needs JavaScript. Every service also answers at <a href="/services">/services</a>, over the API and the command line.</p></noscript>`,
  });
}
