// one store: the Notes and Documents screens; their methods run on both stores in test/notes and test/docs
// The Notes and Documents screens in Chromium, as a person uses them: a note
// written, saved as they pause, found by the search in the header, deleted and
// brought back with Undo; a document made public and read at its address by
// a stranger; every screen checked by axe in light and dark at a laptop's
// and a phone's width (screenshots in test/artifacts/views, or $HEARTH_SHOTS); the
// app installed (its worker registered) and saying it is offline once the
// server is stopped.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { signUp, type Signed } from "../auth/people.ts";
import { chromiumPresent, everyLook, launchChromium, sawToast, type Screen } from "../browser.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { CHROMIUM } from "../prepare.ts";
import { signedIn, WIDTHS, type SignedInOptions } from "./signed-in.ts";

if (!chromiumPresent) console.log(`skipping the screens' browser tests: ${CHROMIUM} is missing (bun test/prepare.ts installs it as root)`);

const SHOTS = process.env.HEARTH_SHOTS ?? join(import.meta.dir, "..", "artifacts", "views");
const ENV = { HEARTH_SIGNUP: "open", HEARTH_METERING: "off", HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0" };

let h: Hearth;
let browser: Browser;
let erin: Signed;
let token: string;
// The store's name in the screenshots' names, so a run on each store keeps both.
const store = () => (process.env.HEARTH_TEST_DB === "pg" ? "pg" : "sqlite");

beforeAll(async () => {
  if (!chromiumPresent) return;
  mkdirSync(SHOTS, { recursive: true });
  h = await startHearth({ env: ENV });
  erin = await signUp(h, "erin");
  token = await h.token("erin");
  browser = await launchChromium();
});
afterAll(async () => {
  if (!chromiumPresent) return;
  await browser?.close();
  await h?.stop();
});

const open = (o: SignedInOptions & { at?: Hearth; who?: Signed } = {}) =>
  signedIn(browser, (o.at ?? h).url, o.who ?? erin, { expected: /ERR_CONNECTION_REFUSED/, ...o });

const status = (page: Page) => page.locator(".save-status");

/** Reads until what is read holds (what the page saved may still be on its way): a condition waited on, never a fixed time. */
async function eventually<T>(read: () => Promise<T>, holds: (v: T) => unknown): Promise<T> {
  for (let i = 0; ; i++) {
    const v = await read();
    if (holds(v)) return v;
    if (i >= 2400) throw new Error(`never held; last read: ${JSON.stringify(v)}`);
    await Bun.sleep(50);
  }
}

test.skipIf(!chromiumPresent)("a note is written and saved as the person pauses, found by the search, edited, deleted and brought back with Undo", async () => {
  const { context, page, problems } = await open();
  await page.goto(`${h.url}/my/notes`);
  await page.getByRole("button", { name: "New note" }).click();
  await page.fill("#note-title", "Garden");
  await page.press("#note-title", "Enter");
  await page.fill("#note-text", "Plant the *tomatoes* by the south fence.");
  await status(page).filter({ hasText: "Saved" }).waitFor();
  expect((await h.call("notes/get", { title: "Garden" }, { token })).body.result.text).toBe("Plant the *tomatoes* by the south fence.");

  // The search in the header, from the keyboard: / focuses it, ↓ picks the first result, Enter opens it.
  await page.goto(`${h.url}/my/notes`);
  await page.locator(".search-list").waitFor();
  await page.keyboard.press("/");
  expect(await page.evaluate(() => document.activeElement?.id)).toBe("find");
  await page.keyboard.type("tomatoes");
  await page.locator(".find-item", { hasText: "Garden" }).waitFor();
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("Enter");
  await page.waitForURL(/open=Garden/);
  expect(await page.inputValue("#note-text")).toBe("Plant the *tomatoes* by the south fence.");

  // Editing saves by itself after a pause; the preview renders the Markdown as a published page would.
  await page.fill("#note-text", "Plant the *tomatoes* by the south fence.\n\n- stakes\n- twine");
  await status(page).filter({ hasText: "Saved" }).waitFor();
  await eventually(async () => (await h.call("notes/get", { title: "Garden" }, { token })).body.result?.text, (t) => t?.includes("- twine"));
  await page.getByRole("tab", { name: "Preview" }).click();
  await page.locator(".prose em", { hasText: "tomatoes" }).waitFor();
  await page.getByRole("tab", { name: "Write" }).click();

  // Deleted, then back with Undo, text and all.
  await page.getByRole("button", { name: "Delete" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
  await page.locator(".toast", { hasText: "Deleted “Garden”" }).waitFor();
  expect((await h.call("notes/get", { title: "Garden" }, { token })).status).toBe(404);
  await page.locator(".toast").getByRole("button", { name: "Undo" }).click();
  await page.waitForURL(/open=Garden/);
  await eventually(async () => (await h.call("notes/get", { title: "Garden" }, { token })).body.result?.text, (t) => t?.includes("- twine"));
  await page.locator(".search-list .item", { hasText: "Garden" }).waitFor();
  expect(problems).toEqual([]);
  await context.close();
});

test.skipIf(!chromiumPresent)("a note written elsewhere appears without reloading, and the phone's layout shows the list, then the note", async () => {
  const { context, page, problems } = await open({ size: WIDTHS.phone });
  await page.goto(`${h.url}/my/notes`);
  await page.locator(".search-list").waitFor();
  expect((await h.call("notes/add", { title: "From the agent", text: "Buy twine." }, { token })).status).toBe(200);
  await page.locator(".search-list .item", { hasText: "From the agent" }).click();
  await page.waitForURL(/open=From/);
  expect(await page.inputValue("#note-text")).toBe("Buy twine.");
  // On a phone the list gives way to the note, and the back button returns to it.
  expect(await page.locator(".pane.list").isVisible()).toBe(false);
  await page.getByRole("button", { name: "← All notes" }).click();
  await page.locator(".pane.list").waitFor({ state: "visible" });
  expect(problems).toEqual([]);
  await context.close();
});

test.skipIf(!chromiumPresent)("a document written, made public and read at its address by someone not signed in, then private again", async () => {
  const { context, page, problems } = await open();
  await page.goto(`${h.url}/my/docs`);
  await page.getByRole("button", { name: "New document" }).click();
  await page.fill("#doc-title", "Allotment rules");
  await page.fill("#doc-text", "# Rules\n\nNo hosepipes after 8pm.");
  await status(page).filter({ hasText: "Saved" }).waitFor();
  await page.waitForURL(/open=/);
  await page.getByLabel("Public: anyone with its address can read it").check();
  const link = page.locator(".public-url a");
  await link.waitFor();
  const url = (await link.getAttribute("href"))!;
  const stranger = await fetch(url);
  expect(stranger.status).toBe(200);
  expect(await stranger.text()).toContain("No hosepipes after 8pm.");
  await page.getByLabel("Public: anyone with its address can read it").uncheck();
  await sawToast(page, "Private again");
  expect((await fetch(url)).status).toBe(404);
  // Found by the search across everything, with the notes.
  await page.goto(`${h.url}/my/search?q=hosepipes`);
  await page.locator(".found a", { hasText: "Allotment rules" }).waitFor();
  expect(problems).toEqual([]);
  await context.close();
});

test.skipIf(!chromiumPresent)("every screen passes axe in light and dark at 1280 and 390 px; screenshots for a look", async () => {
  await h.call("notes/add", { title: "Shopping", text: "# List\n\n- milk\n- **eggs**" }, { token });
  const screens: Screen[] = [
    { name: "notes", path: "/my/notes?open=Shopping", ready: (p) => p.locator("#note-text").waitFor() },
    { name: "notes-list", path: "/my/notes", ready: (p) => p.locator(".search-list .item").first().waitFor() },
    { name: "docs", path: "/my/docs", ready: (p) => p.locator(".search-list").waitFor() },
    { name: "find", path: "/my/notes", ready: async (p) => {
      await p.locator(".search-list").waitFor();
      await p.keyboard.press("/");
      await p.keyboard.type("milk");
      await p.locator(".find-item").first().waitFor();
    } },
    { name: "search", path: "/my/search?q=eggs", ready: (p) => p.locator(".found").first().waitFor() },
    { name: "home", path: "/", ready: (p) => p.locator(".approw").waitFor() },
  ];
  const { context, page } = await open({ bypassCSP: true });
  const found = await everyLook(page, h.url, screens, { shots: SHOTS, suffix: `-${store()}` });
  await context.close();
  expect(found).toEqual({});
});

test.skipIf(!chromiumPresent)("the app's worker registers, keeps the screen, and the screen says it is offline once the server is stopped", async () => {
  const own = await startHearth({ env: ENV });
  let stopped = false;
  let context: BrowserContext | undefined;
  try {
    const ada = await signUp(own, "ada");
    const manifest = await fetch(`${own.url}/my/manifest.webmanifest`);
    expect(manifest.status).toBe(200);
    const m = await manifest.json();
    expect(m.display).toBe("standalone");
    expect(m.icons.map((i: { sizes: string }) => i.sizes)).toContain("512x512");
    const png = await fetch(`${own.url}/my/icon-512.png`);
    expect(png.headers.get("content-type")).toBe("image/png");
    expect([...new Uint8Array(await png.arrayBuffer()).slice(1, 4)]).toEqual([0x50, 0x4e, 0x47]);

    const o = await open({ at: own, who: ada });
    context = o.context;
    const page = o.page;
    await page.goto(`${own.url}/my/notes`);
    await page.locator(".search-list, .empty").first().waitFor();
    expect(await page.evaluate(async () => (await navigator.serviceWorker.ready).active?.scriptURL)).toBe(`${own.url}/my/sw.js`);
    // Once the worker controls the page, a visit keeps the screen for later.
    await page.reload();
    await page.waitForFunction(() => !!navigator.serviceWorker.controller);
    await page.reload();
    await page.waitForFunction(async () => !!(await caches.match("/my/notes")));

    await own.stop();
    stopped = true;
    await page.reload();
    await page.locator(".offline", { hasText: "Offline" }).waitFor();
    await page.screenshot({ path: join(SHOTS, `offline-desktop-light-${store()}.png`) });
  } finally {
    await context?.close();
    if (!stopped) await own.stop();
  }
});
