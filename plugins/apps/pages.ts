// The apps' pages: the directory, the host page around one app, and the
// sandboxed documents the host frames (an app's page, a published snippet).
import { hostName, html, page, raw, type Html } from "hearth/pages";
import type { Account, Sandbox } from "hearth";
import { FRAME_GUARD, inertShadowRoots } from "./guard.ts";
import { iconDataUrl } from "./icon.ts";
import { FRAME_SDK, HOST_BRIDGE } from "./sdk.ts";
import type { apps } from "./schema.ts";

export type App = typeof apps.$inferSelect;

const sha256 = (s: string) => new Bun.CryptoHasher("sha256").update(s).digest("base64");
const BRIDGE_HASH = `'sha256-${sha256(HOST_BRIDGE)}'`;

/**
 * The app's document: no origin of its own (CSP sandbox, so even opened
 * directly it cannot reach the instance's cookies or storage), only its own
 * inline code, no workers, and no network at all (WebRTC too, where the
 * browser knows `webrtc`; FRAME_GUARD covers the rest); it talks to the host
 * page by message.
 */
export const FRAME_CSP =
  "sandbox allow-scripts; default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:; font-src data:; media-src data: blob:; connect-src 'none'; worker-src 'none'; webrtc 'block'; form-action 'none'; base-uri 'none'; frame-ancestors 'self'";
/** A snippet runs as a module loaded from a blob URL, so its text reaches the browser exactly as written. */
export const SNIPPET_CSP = FRAME_CSP.replace("script-src 'unsafe-inline'", "script-src 'unsafe-inline' blob:");

/**
 * Where app documents are served from: an origin of their own, so that
 * FRAME_GUARD can cancel the frame's own navigations before the browser
 * connects anywhere (the frame is still sandboxed: no popups, no forms, no
 * top navigation). That is APPS_HOST when set (a name of this same server
 * that shares nothing with the instance's own: no cookies, no storage), else
 * the instance's sandbox port (ctx.sandbox: the same name on another port,
 * where no cookie counts). With neither reachable (behind a proxy, no
 * APPS_HOST) frames stay on the instance's host in an opaque sandbox.
 */
export interface FrameHost {
  /** The origin frames load from, or null for the instance's own. */
  origin: string | null;
  /** The pages that may frame them there, as a CSP source: the instance's public origin when HEARTH_PUBLIC_URL names it. */
  parent: string | null;
}

export function frameHost(config: Readonly<Record<string, string>>, req: Request, sandbox: Sandbox): FrameHost {
  const name = (config.APPS_HOST ?? "").trim().toLowerCase();
  let parent: string | null = null;
  try {
    if (config.HEARTH_PUBLIC_URL) parent = new URL(config.HEARTH_PUBLIC_URL).origin;
  } catch {}
  if (sandbox.here) return { origin: null, parent: sandbox.parent };
  if (!name) return { origin: sandbox.origin, parent };
  const base = new URL(parent ?? req.url);
  return { origin: `${base.protocol}//${name}${base.port ? `:${base.port}` : ""}`, parent };
}

/** Whether a request came in on APPS_HOST, where only app documents are served. */
export function onAppsHost(config: Readonly<Record<string, string>>, req: Request): boolean {
  const name = (config.APPS_HOST ?? "").trim().toLowerCase();
  return !!name && hostName(req.headers.get("host") ?? new URL(req.url).host) === name;
}

/**
 * On its own origin the document keeps it (still no popups, forms or top
 * navigation, framed or opened alone). An app there holds nothing without
 * the host page's port, so any page may frame it when the instance's own
 * origin is not known.
 */
const ownOrigin = (csp: string, fh: FrameHost) =>
  csp.replace("sandbox allow-scripts; ", "sandbox allow-scripts allow-same-origin; ").replace("frame-ancestors 'self'", `frame-ancestors ${fh.parent ?? "*"}`);

const hostCsp = (fh: FrameHost) =>
  `default-src 'none'; script-src ${BRIDGE_HASH}; style-src 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-src ${fh.origin ?? "'self'"}; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;
const frameSandbox = (fh: FrameHost) => (fh.origin ? "allow-scripts allow-same-origin" : "allow-scripts");

const HOST_STYLE = raw(`<style>
main{max-width:64rem}
.app-frame{display:block;width:100%;height:75vh;min-height:24rem;border:1px solid var(--line);border-radius:.5rem}
.app-frame[hidden]{display:none}
.byline{color:var(--muted);margin:.2rem 0 1rem}
dialog{border:1px solid var(--line);border-radius:.5rem;max-width:28rem;background:var(--bg);color:var(--fg)}
dialog menu{display:flex;gap:.5rem;padding:0;margin:1rem 0 0}
.apps{list-style:none;padding:0;display:grid;grid-template-columns:repeat(auto-fill,minmax(15rem,1fr));gap:1rem}
.apps li{border:1px solid var(--line);border-radius:.5rem;padding:.8rem}
.apps img{width:2.5rem;height:2.5rem;float:right}
.apps h2{margin:0 0 .3rem;font-size:1.1rem}
.tags a{margin-right:.5rem}
</style>`);

const json = (v: unknown) => raw(JSON.stringify(v).replace(/</g, "\\u003c"));
const credits = (n: number) => `${n} credit${n === 1 ? "" : "s"}`;
export const tagList = (tags: string) => (tags ? tags.split(",").filter(Boolean) : []);

const noStore = { "cache-control": "no-store" };

function document_(body: string, csp: string): Response {
  return new Response(body, {
    headers: {
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": csp,
      "cache-control": "no-store",
      "referrer-policy": "no-referrer",
      "x-content-type-options": "nosniff",
      "cross-origin-resource-policy": "same-origin",
      // Names in the page are not looked up ahead of a navigation that cannot happen.
      "x-dns-prefetch-control": "off",
    },
  });
}

// Still ahead of anything the page wrote; once off, a page cannot turn prefetching back on.
const NO_PREFETCH = `<meta http-equiv="x-dns-prefetch-control" content="off">`;
const FIRST = `<script>${FRAME_GUARD}${FRAME_SDK}</script>${NO_PREFETCH}`;

/** Where the page's doctype ends (after any leading space and comments), or 0: anything put before a doctype would switch the page to quirks mode. */
export function afterDoctype(h: string): number {
  let i = 0;
  for (;;) {
    while (i < h.length && h.charCodeAt(i) <= 32) i++;
    if (!h.startsWith("<!--", i)) break;
    const end = h.indexOf("-->", i + 4);
    if (end < 0) return 0;
    i = end + 3;
  }
  if (h.slice(i, i + 9).toLowerCase() !== "<!doctype") return 0;
  return h.indexOf(">", i) + 1;
}

/** The app's own page with the guard and the SDK in front of everything it wrote; `fh` when served on an origin of its own. */
export function frameResponse(app: App, fh: FrameHost | null = null): Response {
  const h = inertShadowRoots(app.html);
  const at = afterDoctype(h);
  return document_(h.slice(0, at) + FIRST + h.slice(at), fh ? ownOrigin(FRAME_CSP, fh) : FRAME_CSP);
}

export function snippetFrameResponse(code: string, fh: FrameHost | null = null): Response {
  const body = `<!doctype html><html lang="en"><head><script>${FRAME_GUARD}</script>${NO_PREFETCH}<meta charset="utf-8"><title>Snippet</title></head><body>
<script type="application/json" id="code">${JSON.stringify(code).replace(/</g, "\\u003c")}</script>
<script>
const code = JSON.parse(document.getElementById("code").textContent);
import(URL.createObjectURL(new Blob([code], { type: "text/javascript" }))).catch((e) => {
  const p = document.createElement("pre");
  p.textContent = String((e && e.stack) || e);
  document.body.append(p);
});
</script></body></html>`;
  return document_(body, fh ? ownOrigin(SNIPPET_CSP, fh) : SNIPPET_CSP);
}

export interface HostView {
  app: App;
  frameHost: FrameHost;
  viewer: Account | null;
  /** The viewer must pay before the frame loads. */
  needsTicket: boolean;
  granted: string[];
  methods: Record<string, { description: string; price: number | null }>;
}

export function hostPage(v: HostView): Response {
  const { app } = v;
  const data = {
    slug: app.slug,
    frame: `${v.frameHost.origin ?? ""}/apps/${app.slug}/frame`,
    needs_ticket: v.needsTicket,
    signed_in: !!v.viewer,
    username: v.viewer?.username ?? null,
    granted: v.granted,
    methods: v.methods,
  };
  const priced = app.price > 0;
  const openNote: Html = !priced
    ? html``
    : v.needsTicket
      ? v.viewer
        ? html`<p>This app costs ${credits(app.price)} each time it is opened; the credits go to ${app.ownerName}.</p><p><button id="app-open" type="button">Open for ${credits(app.price)}</button></p>`
        : html`<p>This app costs ${credits(app.price)} each time it is opened. <a href="/signin">Sign in</a> to open it.</p><button id="app-open" type="button" hidden>Open</button>`
      : html`<p class="hint">This app costs others ${credits(app.price)} per open; it is yours, so it opens free.</p>`;
  const body = html`<p class="byline">${app.description} · by ${app.ownerName}${app.forkedFrom ? html` · forked from <a href="/apps/${app.forkedFrom}">${app.forkedFrom}</a>` : ""}</p>
${openNote}
<p id="app-status" role="status"></p>
<iframe id="app-frame" class="app-frame" title="${app.name}" sandbox="${frameSandbox(v.frameHost)}" referrerpolicy="no-referrer"${raw(v.needsTicket ? " hidden" : "")}></iframe>
<p class="hint">The app runs in a sandbox: it may keep its own store${v.viewer ? "" : " (in this browser until you sign in)"}, know who you are, and use your account, each only once you allow it when it asks.</p>
<div hidden><h2>You allow this app to</h2><ul id="app-grants"></ul></div>
<dialog id="app-allow"><form method="dialog">
<p><strong>${app.name}</strong> asks to <span data-ask></span>.</p><p class="hint" data-about></p>
<menu><button value="allow">Allow</button><button class="quiet" value="deny">Don't allow</button></menu>
</form></dialog>
<p><a href="/apps">All apps</a></p>
<script type="application/json" id="app-data">${json(data)}</script>
<script>${raw(HOST_BRIDGE)}</script>`;
  return page({ title: app.name, body, account: v.viewer, csp: hostCsp(v.frameHost), head: HOST_STYLE, headers: noStore });
}

export function snippetHostPage(id: string, viewer: Account | null, fh: FrameHost): Response {
  const body = html`<p class="hint">A published snippet, running as a module in a sandbox with no access to anyone's account.</p>
<iframe class="app-frame" title="Snippet ${id}" sandbox="${frameSandbox(fh)}" referrerpolicy="no-referrer" src="${fh.origin ?? ""}/apps/run/${id}/frame"></iframe>`;
  return page({ title: "Snippet", body, account: viewer, csp: hostCsp(fh), head: HOST_STYLE, headers: noStore });
}

export interface DirectoryView {
  list: Omit<App, "html">[];
  query: string;
  tag: string;
  tags: { tag: string; count: number }[];
  viewer: Account | null;
}

export function directoryPage(v: DirectoryView): Response {
  const card = (a: Omit<App, "html">) => {
    const icon = iconDataUrl(a.icon);
    return html`<li>${icon ? html`<img src="${icon}" alt="">` : ""}<h2><a href="/apps/${a.slug}">${a.name}</a></h2>
<p>${a.description}</p>
<p class="hint">by ${a.ownerName}${a.price > 0 ? ` · ${credits(a.price)} per open` : " · free"}</p>
${a.tags ? html`<p class="tags">${tagList(a.tags).map((t) => html`<a href="/apps?tag=${encodeURIComponent(t)}">#${t}</a>`)}</p>` : ""}</li>`;
  };
  const filtered = v.query || v.tag;
  const body = html`<form method="get" action="/apps" role="search">
<label for="q">Search apps</label><input type="text" id="q" name="q" value="${v.query}">
${v.tag ? html`<input type="hidden" name="tag" value="${v.tag}">` : ""}
<p><button type="submit">Search</button>${filtered ? html` <a href="/apps">Show all</a>` : ""}</p>
</form>
${v.tags.length ? html`<p class="tags">Tags: ${v.tags.map((t) => html`<a href="/apps?tag=${encodeURIComponent(t.tag)}"${raw(t.tag === v.tag ? ' aria-current="page"' : "")}>#${t.tag}</a>`)}</p>` : ""}
${v.list.length ? html`<ul class="apps">${v.list.map(card)}</ul>` : html`<p>${filtered ? "No app matches." : "No apps yet."}</p>`}`;
  return page({ title: filtered ? `Apps${v.tag ? ` tagged ${v.tag}` : ""}${v.query ? ` matching “${v.query}”` : ""}` : "Apps", body, account: v.viewer, head: HOST_STYLE, headers: noStore });
}

export function missingPage(what: string, viewer: Account | null): Response {
  return page({ title: "Not found", status: 404, body: html`<p>${what}</p><p><a href="/apps">All apps</a></p>`, account: viewer, headers: noStore });
}
