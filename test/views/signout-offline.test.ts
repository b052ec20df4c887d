// one store: what the browser keeps; signing out itself runs on both stores in test/auth
// Signing out on a shared browser: the app's worker kept the person's pages
// (the home page with their tasks, each screen with their name in its
// header) for when the server cannot be reached. Once they sign out, the next
// person here, offline, sees none of it: only the offline page, while the
// app shell (the bundles) stays kept.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { signUp, type Signed } from "../auth/people.ts";
import { accountMenu, axeOn, chromiumPresent, launchChromium } from "../browser.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { signedIn, WIDTHS } from "./signed-in.ts";

const SHOTS = join(import.meta.dir, "..", "artifacts", "views");
const ENV = { HEARTH_SIGNUP: "open", HEARTH_METERING: "off", HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0" };
const TASK = "Buy seed packets";

let h: Hearth;
let browser: Browser;
let ada: Signed;

beforeAll(async () => {
  if (!chromiumPresent) return;
  mkdirSync(SHOTS, { recursive: true });
  h = await startHearth({ env: ENV });
  ada = await signUp(h, "ada");
  const added = await h.call("tasks/create", { title: TASK }, { token: await h.token("ada") });
  expect(added.status).toBe(200);
  browser = await launchChromium();
});
afterAll(async () => {
  if (!chromiumPresent) return;
  await browser?.close();
  await h?.stop();
});

const kept = (page: Page, path: string) => page.evaluate(async (p) => !!(await caches.match(p)), path);

test.skipIf(!chromiumPresent)("after signing out, the person's pages are gone from the app's cache: offline, the next person sees neither their name nor their tasks", async () => {
  const { context, page, problems } = await signedIn(browser, h.url, ada, { size: WIDTHS.phone, bypassCSP: true });
  await page.goto(`${h.url}/`);
  await page.waitForFunction(() => !!navigator.serviceWorker.controller);
  // Visited with the worker in charge, the home page and a screen are kept.
  await page.goto(`${h.url}/`);
  await page.getByText(TASK).first().waitFor();
  await page.goto(`${h.url}/my/notes`);
  await page.getByRole("heading", { name: "Notes", level: 1 }).waitFor();
  const ui = (await page.locator('link[rel="modulepreload"]').getAttribute("href"))!;
  await page.waitForFunction(async (u) => !!(await caches.match("/")) && !!(await caches.match("/my/notes")) && !!(await caches.match(u)), ui);

  // While signed in, offline, they are there: what signing out must take away.
  await context.setOffline(true);
  await page.goto(`${h.url}/`);
  await page.getByText(TASK).first().waitFor();
  await context.setOffline(false);

  await page.goto(`${h.url}/my/notes`);
  await (await accountMenu(page)).getByRole("button", { name: "Sign out", exact: true }).click();
  await page.waitForURL(/\/signin/);
  expect(await kept(page, "/")).toBe(false);
  expect(await kept(page, "/my/notes")).toBe(false);
  // The app shell stays: the next person's screens start from it.
  expect(await kept(page, ui)).toBe(true);
  expect(await kept(page, "/my/offline")).toBe(true);

  await context.setOffline(true);
  for (const path of ["/", "/my/notes"]) {
    await page.goto(`${h.url}${path}`);
    await page.getByText("Offline: the server cannot be reached").waitFor();
    const text = await page.locator("body").innerText();
    expect(text).not.toContain(TASK);
    expect(text).not.toMatch(/\bada\b/);
  }
  expect(await axeOn(page)).toEqual([]);
  await page.screenshot({ path: join(SHOTS, "signed-out-offline-phone-light.png") });
  expect(problems).toEqual([]);
  await context.close();
});
