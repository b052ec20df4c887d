// one store: what the browser keeps; the home page's cards run on both stores in test/front
// The home page without the server: once visited with the app's worker, the
// signed-in home opens with the browser offline, as the screens do, and says
// it is offline; the server stopped while it is open, it says so too.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { signUp, type Signed } from "../auth/people.ts";
import { axeOn, chromiumPresent, launchChromium } from "../browser.ts";
import { startHearth, type Hearth } from "../harness.ts";

const SHOTS = join(import.meta.dir, "..", "artifacts", "files");
const ENV = { HEARTH_SIGNUP: "open", HEARTH_METERING: "off", HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0" };

let h: Hearth;
let browser: Browser;
let ada: Signed;

beforeAll(async () => {
  if (!chromiumPresent) return;
  mkdirSync(SHOTS, { recursive: true });
  h = await startHearth({ env: ENV });
  ada = await signUp(h, "ada");
  browser = await launchChromium();
});
afterAll(async () => {
  if (!chromiumPresent) return;
  await browser?.close();
  await h?.stop();
});

test.skipIf(!chromiumPresent)("the signed-in home opens offline once visited, and says it is offline", async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
  const [name, value] = ada.cookie.split("=");
  await context.addCookies([{ name, value, url: h.url }]);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("pageerror", (e) => problems.push(String(e)));
  await page.goto(`${h.url}/`);
  await page.getByRole("heading", { name: "Hello, ada" }).waitFor();
  // The home page registers the app's worker itself: a person who never opened a screen has it too.
  expect(await page.evaluate(async () => (await navigator.serviceWorker.ready).scope)).toBe(`${h.url}/`);
  await page.waitForFunction(() => !!navigator.serviceWorker.controller);
  await page.reload();
  await page.waitForFunction(async () => !!(await caches.match("/")));
  expect(await page.locator(".offline").count()).toBe(0);

  await context.setOffline(true);
  await page.reload();
  await page.getByRole("heading", { name: "Hello, ada" }).waitFor();
  await page.locator(".offline", { hasText: "Offline" }).waitFor();
  expect(await axeOn(page)).toEqual([]);
  await page.screenshot({ path: join(SHOTS, "home-offline-desktop-light.png") });
  // Back online, the notice goes.
  await context.setOffline(false);
  await page.locator(".offline").waitFor({ state: "detached" });
  expect(problems).toEqual([]);
  await context.close();
});
