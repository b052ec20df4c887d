// one store: the /mcp page's look; nothing it shows comes from the store
// The /mcp page in a real browser, as a person opens it on a phone: the same
// page shell as the other pages (site header, light and dark), nothing wider
// than the screen, and the instance's icon. Screenshots go to test/artifacts/.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { startHearth, type Hearth } from "../harness.ts";
import { everyLook, launchChromium, chromiumPresent } from "../browser.ts";
import { CHROMIUM } from "../prepare.ts";

const present = chromiumPresent;
if (!present) console.log(`skipping the /mcp page browser test: ${CHROMIUM} is missing (bun test/prepare.ts installs it as root)`);

const ARTIFACTS = join(import.meta.dir, "..", "artifacts");
const PHONE = { width: 390, height: 844 };

let h: Hearth;
let browser: Browser;

beforeAll(async () => {
  h = await startHearth();
  if (!present) return;
  browser = await launchChromium();
  mkdirSync(ARTIFACTS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  await h.stop();
});

test("/favicon.ico and the icon the pages link answer an image, cached", async () => {
  for (const path of ["/favicon.ico", "/favicon.svg"]) {
    const res = await fetch(`${h.url}${path}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("image/");
    expect(res.headers.get("cache-control")).toContain("max-age=");
    expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(0);
  }
});

test.skipIf(!present)("on a 390 px phone the /mcp page fits the screen and has the site header, light and dark; it passes axe in both at both widths", async () => {
  // The audit's own script is injected, so this context alone sets the pages' script policy aside.
  const context = await browser.newContext({ bypassCSP: true });
  const seen: string[] = [];
  const found = await everyLook(
    await context.newPage(),
    h.url,
    [
      {
        name: "mcp",
        path: "/mcp",
        each: async (page) => {
          if (page.viewportSize()?.width !== PHONE.width) return;
          const scheme = (await page.evaluate(() => matchMedia("(prefers-color-scheme: dark)").matches)) ? "dark" : "light";
          expect(await page.locator("header a.brand").allTextContents()).toEqual(["Hearth"]);
          expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Connect over MCP");
          expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
          const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
          const [r, g, b] = background.match(/\d+/g)!.map(Number);
          // Perceived brightness of the page's background: dark under a dark preference, light otherwise.
          const brightness = (r * 299 + g * 587 + b * 114) / 1000;
          if (scheme === "dark") expect(brightness).toBeLessThan(64);
          else expect(brightness).toBeGreaterThan(192);
          // The icon the page links is the instance's own.
          expect(await page.locator('link[rel="icon"]').getAttribute("href")).toBe("/favicon.svg");
          seen.push(scheme);
        },
      },
    ],
    { shots: ARTIFACTS },
  );
  await context.close();
  expect(seen).toEqual(["light", "dark"]);
  expect(found).toEqual({});
});
