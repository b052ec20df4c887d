// Installing the app: its web manifest, icons, and a service worker that keeps
// the screens' shells, the home page and their bundles so they open without
// the server, and say it is offline (the page's own notice) until it is back.
import type { Runtime } from "../runtime.ts";
import { uiBundle } from "./bundle.ts";
import { ICON_SIZES, ICON_SVG, iconPng } from "./icon.ts";
import { html, page } from "../http/pages/layout.ts";
import { screensOf } from "./screens.ts";

export const MANIFEST_PATH = "/my/manifest.webmanifest";
export const WORKER_PATH = "/my/sw.js";
const OFFLINE_PATH = "/my/offline";

export function manifest(rt: Runtime): Response {
  const first = screensOf(rt).find((s) => s.file);
  const body = {
    name: "Hearth",
    short_name: "Hearth",
    description: "Your notes, documents and everything else you keep on this Hearth.",
    id: "/my/",
    start_url: first?.href ?? "/",
    scope: "/",
    display: "standalone",
    background_color: "#fbfaf7",
    theme_color: "#8a3b12",
    icons: [
      { src: "/my/icon.svg", sizes: "any", type: "image/svg+xml", purpose: "any maskable" },
      ...ICON_SIZES.map((n) => ({ src: `/my/icon-${n}.png`, sizes: `${n}x${n}`, type: "image/png", purpose: "any maskable" })),
    ],
    shortcuts: screensOf(rt)
      .filter((s) => s.file)
      .slice(0, 4)
      .map((s) => ({ name: s.title, url: s.href })),
  };
  return new Response(JSON.stringify(body), { headers: { "content-type": "application/manifest+json; charset=utf-8", "cache-control": "no-cache" } });
}

export function icon(file: string): Response | null {
  if (file === "icon.svg") return new Response(ICON_SVG, { headers: { "content-type": "image/svg+xml", "cache-control": "public, max-age=86400" } });
  const m = /^icon-(\d+)\.png$/.exec(file);
  if (!m || !(ICON_SIZES as readonly number[]).includes(Number(m[1]))) return null;
  return new Response(iconPng(Number(m[1])), { headers: { "content-type": "image/png", "cache-control": "public, max-age=86400" } });
}

/**
 * The worker, named for the shared bundle it precaches (a new build is a new
 * worker, which drops the old caches). Screens' pages: the network first,
 * the last copy kept when it cannot answer, else the offline page. Bundles
 * and icons: the cache first (their URLs change with their content). The
 * API, the live stream and everything else: never cached. Signing out
 * forgets the pages kept (they hold the person's name and data) and keeps
 * the app shell.
 */
export async function worker(): Promise<Response> {
  const ui = await uiBundle();
  const version = ui.path.split(".").at(-2);
  const script = `const CACHE = "hearth-${version}";
const PRECACHE = ${JSON.stringify([ui.path, OFFLINE_PATH, "/my/icon.svg"])};
self.addEventListener("install", (e) => e.waitUntil(caches.open(CACHE).then((c) => c.addAll(PRECACHE)).then(() => self.skipWaiting())));
self.addEventListener("activate", (e) => e.waitUntil(caches.keys().then((keys) => Promise.all(keys.filter((k) => k.startsWith("hearth-") && k !== CACHE).map((k) => caches.delete(k)))).then(() => self.clients.claim())));
// What is the person's (the pages kept as they were visited: the home page, each screen's page with their name in
// its header) goes when they sign out; the app shell (the bundles, the icons, the offline page) stays for whoever is next.
const SHELL = (path) => path.startsWith("/my/assets/") || /^\\/my\\/icon/.test(path) || path === ${JSON.stringify(OFFLINE_PATH)};
const forget = () => caches.keys().then((keys) => Promise.all(keys.filter((k) => k.startsWith("hearth-")).map((k) => caches.open(k).then((c) => c.keys().then((reqs) => Promise.all(reqs.filter((r) => !SHELL(new URL(r.url).pathname)).map((r) => c.delete(r))))))));
self.addEventListener("fetch", (e) => {
  const req = e.request;
  const url = new URL(req.url);
  if (url.origin !== location.origin) return;
  // Signing out (the header's button, or "Sign out everywhere"): the person's pages are forgotten before the server
  // is asked, so they are gone even when it cannot be reached and the next person here never sees them.
  if (req.method === "POST" && (url.pathname === "/signout" || url.pathname === "/signout/all")) {
    e.respondWith(forget().catch(() => undefined).then(() => fetch(req)));
    return;
  }
  if (req.method !== "GET") return;
  if (url.pathname.startsWith("/my/assets/") || /^\\/my\\/icon/.test(url.pathname)) {
    e.respondWith(caches.match(req).then((hit) => hit || fetch(req).then((res) => { if (res.ok) { const copy = res.clone(); caches.open(CACHE).then((c) => c.put(req, copy)); } return res; })));
    return;
  }
  const home = url.pathname === "/";
  if (req.mode === "navigate" && (home || (url.pathname.startsWith("/my/") && url.pathname !== "/my/live"))) {
    e.respondWith(fetch(req).then((res) => {
      if (res.ok && res.headers.get("content-type")?.startsWith("text/html")) { const copy = res.clone(); caches.open(CACHE).then((c) => c.put(url.pathname, copy)); }
      return res;
    }, () => caches.match(url.pathname).then((hit) => hit || caches.match(${JSON.stringify(OFFLINE_PATH)}))));
  }
});
// An approval waiting (core/policy/push.ts): shown as a notification, which opens the request on /approvals.
self.addEventListener("push", (e) => {
  let m = {};
  try { m = e.data ? e.data.json() : {}; } catch {}
  e.waitUntil(self.registration.showNotification(m.title || "Hearth", { body: m.body || "", tag: m.tag, data: { url: m.url || "/approvals" } }));
});
self.addEventListener("notificationclick", (e) => {
  e.notification.close();
  const to = (e.notification.data && e.notification.data.url) || "/approvals";
  e.waitUntil(self.clients.openWindow(to.startsWith("/") ? to : "/approvals"));
});
`;
  // A worker runs under its own script's policy: the instance's default (nothing at all) would refuse every fetch it makes.
  return new Response(script, {
    headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "no-cache", "service-worker-allowed": "/", "content-security-policy": "default-src 'none'; connect-src 'self'" },
  });
}

/** What a screen never opened before shows when the server cannot be reached. */
export function offlinePage(): Response {
  return page({
    title: "Offline",
    body: html`<p class="alert" role="alert">Offline: the server cannot be reached, and this screen was not opened on this device before. Try again when you are back online.</p><p><a href="/">Try again</a></p>`,
  });
}
