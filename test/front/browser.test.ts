// one store: the front pages in a browser; the methods behind them run on both stores in their services' tests
// The front door in a real browser, as a person meets it: sign up, set a
// place, see the home cards filled from recorded provider answers, add a note
// with the services page's form, read the API reference with nothing fetched
// from outside the instance, and leave screenshots of each page at a phone's
// and a desktop's width in test/artifacts/ to be looked at. The same pages
// under axe are browser-axe.test.ts's.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { settle } from "../../core/upstream/index.ts";
import type { Hearth } from "../harness.ts";
import { launchChromium, chromiumPresent } from "../browser.ts";
import { CHROMIUM } from "../prepare.ts";
import { startFront, startProviders } from "./instance.ts";

const present = chromiumPresent;
if (!present) console.log(`skipping the front-door browser test: ${CHROMIUM} is missing (bun test/prepare.ts installs it as root)`);

const ARTIFACTS = join(import.meta.dir, "..", "artifacts");
const WIDTHS = { phone: { width: 390, height: 844 }, desktop: { width: 1280, height: 900 } };

const fixture = startProviders();
let h: Hearth;
let browser: Browser;
let context: BrowserContext;
/** Every request the browser made, and those for anywhere but this instance (refused). */
const requested: string[] = [];
const outside: string[] = [];

beforeAll(async () => {
  if (!present) return;
  h = await startFront(fixture.url, { HEARTH_METERING: "off" });
  browser = await launchChromium();
  context = await browser.newContext({ viewport: WIDTHS.desktop });
  const own = new URL(h.url).origin;
  await context.route("**/*", (route) => {
    const url = route.request().url();
    requested.push(url);
    if (new URL(url).origin === own || url.startsWith("data:")) return route.continue();
    outside.push(url);
    return route.abort();
  });
  mkdirSync(ARTIFACTS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  if (h) {
    await settle(h.rt);
    await h.stop();
  }
  fixture.stop();
});

async function shoot(page: Page, name: string) {
  for (const [label, size] of Object.entries(WIDTHS)) {
    await page.setViewportSize(size);
    await page.screenshot({ path: join(ARTIFACTS, `${name}-${label}.png`), fullPage: true });
  }
  await page.setViewportSize(WIDTHS.desktop);
}

test.skipIf(!present)(
  "sign up, set a place, and see the home cards from real answers",
  async () => {
    const page = await context.newPage();
    await page.goto(`${h.url}/`);
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("Welcome to Hearth");
    await expect(page.getByRole("link", { name: "weather" }).getAttribute("href")).resolves.toBe("/services#service-weather");
    await shoot(page, "home-signed-out");
    await page.getByRole("link", { name: "Sign up" }).first().click();
    await page.getByLabel("Username").fill("ann");
    await page.getByLabel("Password").fill("a long passphrase");
    await page.getByRole("button", { name: "Create account" }).click();
    await page.waitForURL(`${h.url}/setup`);

    const token = await h.token("ann");
    await h.call("events/create", { title: "Dentist", when: "2026-11-21T15:00:00+00:00" }, { token });
    await h.call("tasks/create", { title: "Buy milk", due: "2026-11-22 10:00" }, { token });

    await page.goto(`${h.url}/`);
    await page.getByLabel("Town, address or “latitude, longitude”").fill("51.5012, -0.1246");
    await page.getByLabel("Show today's prayer times").check();
    await page.getByRole("button", { name: "Save" }).click();
    await page.waitForURL(`${h.url}/?saved=1`);

    const card = (name: string) => page.locator("li.card", { has: page.getByRole("heading", { name }) });
    await expect(card("Next events").textContent()).resolves.toContain("Dentist");
    await expect(card("Open tasks").textContent()).resolves.toContain("Buy milk");
    await expect(card("Weather").textContent()).resolves.toContain("Now: overcast, 6°C");
    await expect(card("Prayer times").textContent()).resolves.toContain("Maghrib");
    await expect(card("Markets").textContent()).resolves.toContain("Bitcoin (BTC)");
    // Each card's heading leads to its service.
    await expect(card("Weather").getByRole("link", { name: "Weather" }).getAttribute("href")).resolves.toBe("/services#service-weather");
    await shoot(page, "home");

    await page.goto(`${h.url}/token`);
    await shoot(page, "token");
    await page.goto(`${h.url}/status`);
    await expect(page.getByRole("heading", { name: "Providers" }).count()).resolves.toBe(1);
    await shoot(page, "status");
    await page.close();
  },
);

test.skipIf(!present)(
  "the services page's try-it form adds a note as the signed-in person",
  async () => {
    const page = await context.newPage();
    await page.goto(`${h.url}/services`);
    await page.locator("#notes_add summary").click();
    await page.locator("#notes_add-title").fill("from the services page");
    await page.locator("#notes_add-text").fill("typed into the try-it form");
    await page.getByRole("button", { name: "Call (removes or overwrites data) notes/add" }).click();
    await page.waitForURL(`${h.url}/services#notes_add-answer`);
    const answer = page.getByLabel("Answer from notes/add");
    await expect(answer.textContent()).resolves.toContain('"title": "from the services page"');
    await expect(page.locator("#notes_add").getByRole("status").textContent()).resolves.toContain("HTTP 200");
    const read = await h.call("notes/get", { title: "from the services page" }, { token: await h.token("ann") });
    expect(read.body.result).toMatchObject({ text: "typed into the try-it form" });
    await page.goto(`${h.url}/services`);
    await shoot(page, "services");
    await page.close();
  },
);

test.skipIf(!present)(
  "/reference renders the OpenAPI document with nothing fetched from outside the instance",
  async () => {
    const before = requested.length;
    const page = await context.newPage();
    const failed: string[] = [];
    page.on("console", (m) => {
      if (m.type() === "error") failed.push(m.text());
    });
    await page.goto(`${h.url}/reference`);
    await page.locator(".swagger-ui .info .title").waitFor();
    await expect(page.locator(".swagger-ui .info .title").textContent()).resolves.toContain("Hearth");
    // Swagger UI draws only the operations in view; every method is in what it read.
    const known = await page.evaluate(() => (window as unknown as { ui: { specSelectors: { operations(): { size: number } } } }).ui.specSelectors.operations().size);
    expect(known).toBe(h.rt.registry.methods.size);
    // Filtered to one service, an operation opens with its parameters read from the TypeBox schema.
    await page.locator(".operation-filter-input").fill("weather");
    const op = page.locator("#operations-weather-weather_forecast");
    await op.locator(".opblock-summary-control").click();
    await op.locator(".parameters").waitFor();
    await expect(op.locator(".parameter__name").allInnerTexts()).resolves.toEqual([expect.stringContaining("lat"), expect.stringContaining("lon")]);
    const mine = requested.slice(before);
    expect(mine).toContain(`${h.url}/reference/swagger-ui-bundle.js`);
    expect(mine).toContain(`${h.url}/openapi.json`);
    expect(outside).toEqual([]);
    expect(failed).toEqual([]);
    await op.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(ARTIFACTS, "reference-desktop.png") });
    await page.close();
  },
);
