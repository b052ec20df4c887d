// one store: the sandbox in a browser; apps' store and permissions run on both stores in test/apps/apps.test.ts
// Apps in a real browser: the sandbox holds (no cookies, no host storage, no
// network, WebRTC included), the store survives a reload, the store, the
// person's name and each method are used only once the person allows it, and
// a published snippet runs as a module.
import { afterAll, beforeAll, expect, test } from "bun:test";
import dgram from "node:dgram";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { FRAME_CSP } from "../../plugins/apps/pages.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { launchChromium, chromiumPresent } from "../browser.ts";
import { CHROMIUM } from "../prepare.ts";

const present = chromiumPresent;
if (!present) console.log(`skipping the apps browser test: ${CHROMIUM} is missing (bun test/prepare.ts installs it as root)`);

let h: Hearth;
let browser: Browser;
let context: BrowserContext;
let token: string;

const exactly = (t: string) => new RegExp(`^${t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`);
/** Waits (within the test's time) until the element shows exactly this text. */
const shows = (loc: Locator, text: string) => loc.filter({ hasText: exactly(text) }).waitFor();
/** Waits until the element's text contains this. */
const contains = (loc: Locator, text: string) => loc.filter({ hasText: text }).waitFor();
/** Answers the host page's question, once it asks about this. */
async function answer(page: Page, about: string, button: "Allow" | "Don't allow" = "Allow") {
  await contains(page.getByRole("dialog"), about);
  await page.getByRole("button", { name: button, exact: true }).click();
}

async function signUp(page: Page, username: string) {
  await page.goto(`${h.url}/signup`);
  await page.getByLabel("Username").fill(username);
  await page.getByLabel("Password").fill("a long passphrase");
  await page.getByRole("button", { name: "Create account" }).click();
  await page.waitForURL((u) => !u.pathname.startsWith("/signup"));
}

beforeAll(async () => {
  if (!present) return;
  h = await startHearth({ env: { HEARTH_SIGNUP: "open" } });
  browser = await launchChromium();
});

// Signing up takes a browser round trip, longer than a hook may take on a busy machine, so the first test does it.
let signedIn: Promise<void> | null = null;
function aliceSignedIn(): Promise<void> {
  signedIn ??= (async () => {
    context = await browser.newContext();
    const page = await context.newPage();
    await signUp(page, "alice");
    await page.close();
    token = await h.token("alice");
  })();
  return signedIn;
}

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await h?.stop();
});

test.skipIf(!present)(
  "the counter starter keeps its count through a reload, per person",
  async () => {
    await aliceSignedIn();
    const page = await context.newPage();
    await page.goto(`${h.url}/apps/counter`);
    const app = page.frameLocator("#app-frame");
    await answer(page, "keep its data in your account");
    await shows(app.locator("#count"), "0");
    await app.getByRole("button", { name: "Plus one" }).click();
    await app.getByRole("button", { name: "Plus one" }).click();
    await app.getByRole("button", { name: "Plus one" }).click();
    await shows(app.locator("#count"), "3");
    // The write goes through the bridge; wait for it to land before reloading.
    while ((await storeOf(page, "counter", "count")) !== 3) await page.waitForTimeout(20);
    await page.reload();
    await shows(page.frameLocator("#app-frame").locator("#count"), "3");

    // Someone else opening the same app starts from nothing.
    const other = await browser.newContext();
    const p2 = await other.newPage();
    await signUp(p2, "bob");
    await p2.goto(`${h.url}/apps/counter`);
    await answer(p2, "keep its data in your account");
    await shows(p2.frameLocator("#app-frame").locator("#count"), "0");
    await other.close();
    await page.close();
  },
);

/** Reads the signed-in person's store for an app the way the host page does. */
async function storeOf(page: Page, slug: string, key: string) {
  return page.evaluate(
    async ([slug, key]) => {
      const s = await (await fetch("/session")).json();
      const r = await fetch(`/apps/${slug}/store`, { method: "POST", headers: { "content-type": "application/json", "x-csrf-token": s.result.csrf }, body: JSON.stringify({ op: "get", key }) });
      return (await r.json()).result;
    },
    [slug, key] as const,
  );
}

const PROBE = `<!doctype html><html><head><title>probe</title></head><body><pre id="out">running</pre><script>
const out = {};
try { out.cookie = document.cookie; } catch (e) { out.cookie = "threw " + e.name; }
try { out.local = String(localStorage.getItem("host-secret")); } catch (e) { out.local = "threw " + e.name; }
try { out.parent = String(parent.document.cookie); } catch (e) { out.parent = "threw " + e.name; }
out.origin = String(self.origin);
(async () => {
  try { const r = await fetch("/api/v1/notes/list", { credentials: "include" }); out.fetch = "status " + r.status; } catch (e) { out.fetch = "threw " + e.name; }
  try { const r = await fetch(${JSON.stringify("ORIGIN")} + "/session", { credentials: "include" }); out.fetchAbsolute = "status " + r.status; } catch (e) { out.fetchAbsolute = "threw " + e.name; }
  await hearth.store.set("probe", { done: true });
  out.store = JSON.stringify(await hearth.store.get("probe"));
  document.getElementById("out").textContent = JSON.stringify(out);
})();
</script></body></html>`;

test.skipIf(!present)(
  "an app cannot read the host's cookies or localStorage, nor fetch the instance's API",
  async () => {
    await aliceSignedIn();
    const created = await h.call("apps/create", { name: "Probe", html: PROBE.replace("ORIGIN", h.url) }, { token });
    expect(created.status).toBe(200);
    const page = await context.newPage();
    await page.goto(`${h.url}/apps`);
    await page.evaluate(() => {
      localStorage.setItem("host-secret", "hunter2");
      // A cookie scripts on the host may read, unlike the HttpOnly session.
      document.cookie = "host-visible=yes; path=/";
    });
    expect((await context.cookies()).some((c) => c.name === "hearth_session")).toBe(true);

    await page.goto(`${h.url}/apps/probe`);
    await answer(page, "keep its data in your account");
    const out = page.frameLocator("#app-frame").locator("#out");
    await contains(out, "store");
    const seen = JSON.parse((await out.textContent())!);
    // An origin of its own: the instance's host name on the sandbox port, which counts no cookie and holds none of the instance's storage.
    expect(h.sandboxUrl).not.toBe(h.url);
    expect(seen.origin).toBe(h.sandboxUrl);
    expect(seen.cookie).not.toContain("host-visible");
    expect(seen.cookie).not.toContain("hearth_session");
    expect(seen.local).toStartWith("threw");
    expect(seen.parent).toStartWith("threw");
    expect(seen.fetch).toStartWith("threw");
    expect(seen.fetchAbsolute).toStartWith("threw");
    // What it may do: its own store, through the bridge.
    expect(JSON.parse(seen.store)).toEqual({ done: true });

    // Opened directly, outside the host page, the document is still sandboxed.
    await page.goto(`${h.url}/apps/probe/frame`);
    expect(await page.evaluate(() => self.origin)).toBe("null");
    await page.close();
  },
);

test.skipIf(!present)(
  "a method runs as the person only after they allow it",
  async () => {
    await aliceSignedIn();
    const html = `<!doctype html><html><head><title>Jot</title></head><body><button id="go">Save</button><p id="out"></p><script>
document.getElementById("go").onclick = async () => {
  try { const r = await hearth.call("notes/add", { title: "from an app", text: "allowed" }); document.getElementById("out").textContent = "saved " + r.title; }
  catch (e) { document.getElementById("out").textContent = "refused " + e.status + " " + e.kind; }
};
</script></body></html>`;
    expect((await h.call("apps/create", { name: "Jot", html }, { token })).status).toBe(200);
    const page = await context.newPage();
    await page.goto(`${h.url}/apps/jot`);
    const app = page.frameLocator("#app-frame");

    await app.getByRole("button", { name: "Save" }).click();
    await contains(page.getByRole("dialog"), "notes/add");
    await page.getByRole("button", { name: "Don't allow" }).click();
    await shows(app.locator("#out"), "refused 403 forbidden");
    expect((await h.call("notes/get", { title: "from an app" }, { token })).status).toBe(404);

    await app.getByRole("button", { name: "Save" }).click();
    await page.getByRole("button", { name: "Allow", exact: true }).click();
    await shows(app.locator("#out"), "saved from an app");
    const note = await h.call("notes/get", { title: "from an app" }, { token });
    expect(note.body.result.text).toBe("allowed");

    // Remembered: after a reload the call goes through without asking.
    await page.reload();
    await page.frameLocator("#app-frame").getByRole("button", { name: "Save" }).click();
    await shows(page.frameLocator("#app-frame").locator("#out"), "saved from an app");
    expect(await page.getByRole("dialog").isVisible()).toBe(false);

    // Taken back on the host page, the next call asks again.
    await page.getByRole("button", { name: "Stop allowing notes/add" }).click();
    await page.getByRole("button", { name: "Stop allowing notes/add" }).waitFor({ state: "detached" });
    await page.frameLocator("#app-frame").getByRole("button", { name: "Save" }).click();
    await contains(page.getByRole("dialog"), "notes/add");
    await page.getByRole("button", { name: "Don't allow" }).click();
    await shows(page.frameLocator("#app-frame").locator("#out"), "refused 403 forbidden");
    await page.close();
  },
);

test.skipIf(!present)(
  "a snippet published with run executes as a module in the sandbox",
  async () => {
    await aliceSignedIn();
    const code = `const mod = import.meta.url.startsWith("blob:") ? "module" : "script";
const p = document.createElement("p"); p.id = "ran";
let cookie; try { cookie = document.cookie; } catch (e) { cookie = "no cookies"; }
p.textContent = ["ran as", mod, "from origin", self.origin, cookie.includes("hearth_session") ? "with cookies" : "without cookies", typeof RTCPeerConnection === "undefined" ? "without WebRTC" : "with WebRTC", "</script> intact"].join(" ");
document.body.append(p);`;
    const r = await h.call("apps/run", { code }, { token });
    expect(r.status).toBe(200);
    const page = await context.newPage();
    await page.goto(r.body.result.url);
    await shows(page.frameLocator("iframe").locator("#ran"), `ran as module from origin ${h.sandboxUrl} without cookies without WebRTC </script> intact`);
    await page.close();
  },
);

test.skipIf(!present)(
  "a priced app opens only once paid for, and the creator is credited",
  async () => {
    await aliceSignedIn();
    const bobToken = await h.token("bob");
    const html = `<!doctype html><html><head><title>Oracle</title></head><body><p id="say">…</p><script>hearth.user().then((u) => { document.getElementById("say").textContent = "hello " + u.username; });</script></body></html>`;
    expect((await h.call("apps/create", { name: "Oracle", html, price: 7 }, { token })).status).toBe(200);
    await h.grant("bob", 10);
    const before = (await h.call("credits/balance", {}, { token })).body.result.balance;

    const other = await browser.newContext();
    const page = await other.newPage();
    await page.goto(`${h.url}/signin`);
    await page.getByLabel("Username").fill("bob");
    await page.getByLabel("Password").fill("a long passphrase");
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.waitForURL((u) => !u.pathname.startsWith("/signin"));
    await page.goto(`${h.url}/apps/oracle`);
    expect(await page.locator("#app-frame").isHidden()).toBe(true);
    await page.getByRole("button", { name: "Open for 7 credits" }).click();
    await answer(page, "see your username");
    await shows(page.frameLocator("#app-frame").locator("#say"), "hello bob");
    await contains(page.locator("#app-status"), "balance 3");
    expect((await h.call("credits/balance", {}, { token: bobToken })).body.result.balance).toBe(3);
    expect((await h.call("credits/balance", {}, { token })).body.result.balance).toBe(before + 7);

    // Opening again is a new charge, refused when the balance is short.
    await page.reload();
    await page.getByRole("button", { name: "Open for 7 credits" }).click();
    await contains(page.locator("#app-status"), "costs 7 credits per open");
    expect(await page.locator("#app-frame").isHidden()).toBe(true);
    await other.close();
  },
);

test.skipIf(!present)(
  "signed out, an app's store is kept in this browser under the app's own name",
  async () => {
    await aliceSignedIn();
    const guest = await browser.newContext();
    const page = await guest.newPage();
    await page.goto(`${h.url}/apps/counter`);
    const app = page.frameLocator("#app-frame");
    await answer(page, "keep its data in this browser");
    await shows(app.locator("#count"), "0");
    await app.getByRole("button", { name: "Plus one" }).click();
    await shows(app.locator("#count"), "1");
    // Remembered in this browser: the reload does not ask again.
    await page.reload();
    await shows(page.frameLocator("#app-frame").locator("#count"), "1");
    expect(await page.evaluate(() => localStorage.getItem("hearth.apps.counter.count"))).toBe("1");
    expect(await page.getByRole("dialog").isVisible()).toBe(false);
    await guest.close();
  },
);

test.skipIf(!present)(
  "an app's store and the person's name are refused until they allow them, and remembered once they do",
  async () => {
    await aliceSignedIn();
    const html = `<!doctype html><html><head><title>Who</title></head><body><button id="who">Who</button><button id="keep">Keep</button><p id="out"></p><script>
const out = document.getElementById("out");
const show = (p) => p.then((v) => { out.textContent = "ok " + JSON.stringify(v); }, (e) => { out.textContent = "refused " + e.status + " " + e.kind; });
document.getElementById("who").onclick = () => show(hearth.user());
document.getElementById("keep").onclick = () => show(hearth.store.set("k", 1));
</script></body></html>`;
    expect((await h.call("apps/create", { name: "Who", html }, { token })).status).toBe(200);
    const page = await context.newPage();
    await page.goto(`${h.url}/apps/who`);
    const app = page.frameLocator("#app-frame");
    const out = app.locator("#out");

    await app.getByRole("button", { name: "Who" }).click();
    await answer(page, "see your username", "Don't allow");
    await shows(out, "refused 403 forbidden");
    await app.getByRole("button", { name: "Keep" }).click();
    await answer(page, "keep its data in your account", "Don't allow");
    await shows(out, "refused 403 forbidden");
    // Nothing was kept, and the instance itself refuses the store without the grant.
    expect(await page.evaluate(async () => {
      const s = await (await fetch("/session")).json();
      return (await fetch("/apps/who/store", { method: "POST", headers: { "content-type": "application/json", "x-csrf-token": s.result.csrf }, body: JSON.stringify({ op: "get", key: "k" }) })).status;
    })).toBe(403);

    await app.getByRole("button", { name: "Who" }).click();
    await answer(page, "see your username");
    await shows(out, 'ok {"signed_in":true,"username":"alice"}');
    await app.getByRole("button", { name: "Keep" }).click();
    await answer(page, "keep its data in your account");
    await shows(out, 'ok {"key":"k"}');
    expect(await storeOf(page, "who", "k")).toBe(1);

    // Remembered: after a reload both go through without asking.
    await page.reload();
    await page.frameLocator("#app-frame").getByRole("button", { name: "Who" }).click();
    await shows(page.frameLocator("#app-frame").locator("#out"), 'ok {"signed_in":true,"username":"alice"}');
    await page.frameLocator("#app-frame").getByRole("button", { name: "Keep" }).click();
    await shows(page.frameLocator("#app-frame").locator("#out"), 'ok {"key":"k"}');
    expect(await page.getByRole("dialog").isVisible()).toBe(false);
    await page.close();
  },
);

/** A UDP socket on loopback that counts what reaches it: where a STUN server would be. */
async function udpListener() {
  const socket = dgram.createSocket("udp4");
  const received: Buffer[] = [];
  socket.on("message", (m) => received.push(m));
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", () => resolve()));
  return { port: socket.address().port, received, close: () => socket.close() };
}

/** Script that tries to reach a STUN server at this port over WebRTC and says how it went. */
const rtcAttempt = (port: number) =>
  `(async () => { try { const pc = new RTCPeerConnection({ iceServers: [{ urls: "stun:127.0.0.1:${port}" }] }); pc.createDataChannel("out"); await pc.setLocalDescription(await pc.createOffer()); return "connecting"; } catch (e) { return "threw " + e.name; } })()`;

test.skipIf(!present)(
  "an app cannot send anything over WebRTC, from its page or from frames it makes",
  async () => {
    await aliceSignedIn();
    const stun = await udpListener();
    const control = await udpListener();
    const inFrame = (port: number) => `<script>${rtcAttempt(port)}<\/script>`;
    const attr = (port: number) => inFrame(port).replace(/"/g, "&quot;");
    const js = (v: string) => JSON.stringify(v).replace(/</g, "\\u003c");
    // Each way a page could get a window of its own with WebRTC in it.
    const html = `<!doctype html><html><head><title>Leak</title></head><body><pre id="out">running</pre>
<iframe srcdoc="${attr(stun.port)}"></iframe>
<iframe src="javascript:'${attr(stun.port).replace(/'/g, "\\'")}'"></iframe>
<div><template shadowrootmode="closed"><iframe srcdoc="${attr(stun.port)}"></iframe></template></div>
<div id="host"></div>
<script>
const seen = {};
seen.types = [typeof RTCPeerConnection, typeof webkitRTCPeerConnection, typeof RTCDataChannel, typeof RTCIceTransport, typeof RTCSessionDescription].join(",");
try { delete window.RTCPeerConnection; } catch (e) {}
try { Object.defineProperty(window, "RTCPeerConnection", { value: function () {} }); seen.redefined = "yes"; } catch (e) { seen.redefined = "threw " + e.name; }
const appended = document.createElement("iframe");
appended.srcdoc = ${js(inFrame(stun.port))};
document.body.append(appended);
try { seen.contentWindow = String(appended.contentWindow); } catch (e) { seen.contentWindow = "threw " + e.name; }
const closed = document.getElementById("host").attachShadow({ mode: "closed" });
const hidden = document.createElement("iframe");
hidden.srcdoc = ${js(inFrame(stun.port))};
closed.append(hidden);
${rtcAttempt(stun.port)}.then((r) => { seen.page = r; });
// The page's load waits for its frames, so by then any frame that was kept would have run.
addEventListener("load", () => setTimeout(() => {
  seen.frames = document.getElementsByTagName("iframe").length + closed.querySelectorAll("iframe").length;
  document.getElementById("out").textContent = JSON.stringify(seen);
}));
</script></body></html>`;
    expect((await h.call("apps/create", { name: "Leak", html }, { token })).status).toBe(200);
    const page = await context.newPage();
    await page.goto(`${h.url}/apps/leak`);
    const out = page.frameLocator("#app-frame").locator("#out");
    await contains(out, "frames");
    const seen = JSON.parse((await out.textContent())!);
    expect(seen.types).toBe("undefined,undefined,undefined,undefined,undefined");
    expect(seen.redefined).toBe("threw TypeError");
    expect(seen.page).toBe("threw TypeError");
    expect(seen.contentWindow).toBe("null");
    expect(seen.frames).toBe(0);

    // The same attempt on a page under the same CSP without the guard does reach its listener: the browser would send.
    const bare = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: () => new Response(`<!doctype html><script>${rtcAttempt(control.port)}</script>`, { headers: { "content-type": "text/html", "content-security-policy": FRAME_CSP } }),
    });
    try {
      const other = await browser.newPage();
      await other.goto(`http://127.0.0.1:${bare.port}/`);
      while (control.received.length === 0) await Bun.sleep(20);
      await other.close();
    } finally {
      bare.stop(true);
    }
    // By then the app's attempts, made first, would have reached theirs.
    expect(stun.received.length).toBe(0);
    stun.close();
    control.close();
    await page.close();
  },
);
