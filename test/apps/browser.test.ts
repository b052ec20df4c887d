// Apps in a real browser: the sandbox holds (no cookies, no host storage, no
// network), the store survives a reload, a method runs only once the person
// allows it, and a published snippet runs as a module.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { startHearth, type Hearth } from "../harness.ts";
import { CHROMIUM } from "../prepare.ts";

const present = existsSync(CHROMIUM);
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

async function signUp(page: Page, username: string) {
  await page.goto(`${h.url}/signup`);
  await page.getByLabel("Username").fill(username);
  await page.getByLabel("Password").fill("a long passphrase");
  await page.getByRole("button", { name: "Create account" }).click();
  await page.waitForURL((u) => !u.pathname.startsWith("/signup"));
}

beforeAll(async () => {
  if (!present) return;
  const { chromium } = await import("playwright-core");
  h = await startHearth({ env: { HEARTH_SIGNUP: "open" } });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
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
    await shows(p2.frameLocator("#app-frame").locator("#count"), "0");
    await other.close();
    await page.close();
  },
  60_000,
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
    const out = page.frameLocator("#app-frame").locator("#out");
    await contains(out, "store");
    const seen = JSON.parse((await out.textContent())!);
    expect(seen.origin).toBe("null");
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
  60_000,
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
  60_000,
);

test.skipIf(!present)(
  "a snippet published with run executes as a module in the sandbox",
  async () => {
    await aliceSignedIn();
    const code = `const mod = import.meta.url.startsWith("blob:") ? "module" : "script";
const p = document.createElement("p"); p.id = "ran";
let cookie; try { cookie = document.cookie; } catch (e) { cookie = "no cookies"; }
p.textContent = ["ran as", mod, "from origin", self.origin, cookie.includes("hearth_session") ? "with cookies" : "without cookies", "</script> intact"].join(" ");
document.body.append(p);`;
    const r = await h.call("apps/run", { code }, { token });
    expect(r.status).toBe(200);
    const page = await context.newPage();
    await page.goto(r.body.result.url);
    await shows(page.frameLocator("iframe").locator("#ran"), "ran as module from origin null without cookies </script> intact");
    await page.close();
  },
  60_000,
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
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL((u) => !u.pathname.startsWith("/signin"));
    await page.goto(`${h.url}/apps/oracle`);
    expect(await page.locator("#app-frame").isHidden()).toBe(true);
    await page.getByRole("button", { name: "Open for 7 credits" }).click();
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
  60_000,
);

test.skipIf(!present)(
  "signed out, an app's store is kept in this browser under the app's own name",
  async () => {
    await aliceSignedIn();
    const guest = await browser.newContext();
    const page = await guest.newPage();
    await page.goto(`${h.url}/apps/counter`);
    const app = page.frameLocator("#app-frame");
    await shows(app.locator("#count"), "0");
    await app.getByRole("button", { name: "Plus one" }).click();
    await shows(app.locator("#count"), "1");
    await page.reload();
    await shows(page.frameLocator("#app-frame").locator("#count"), "1");
    expect(await page.evaluate(() => localStorage.getItem("hearth.apps.counter.count"))).toBe("1");
    await guest.close();
  },
  60_000,
);
