// one store: a screen reading a paged list to its end; the paging itself runs on both stores in test/scale/paging.test.ts
// A screen shows everything a person has, not the first thousand: the lists
// it reads answer at most 1,000 records unless asked for pages, and the
// screen asks for every page.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { signUp, type Signed } from "../auth/people.ts";
import { chromiumPresent, launchChromium } from "../browser.ts";
import { startHearth, type Hearth } from "../harness.ts";

const ENV = { HEARTH_SIGNUP: "open", HEARTH_METERING: "off", HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0" };
const COUNT = 1003;
const title = (n: number) => `note ${String(n).padStart(4, "0")}`;

let h: Hearth;
let browser: Browser;
let gwen: Signed;

beforeAll(async () => {
  if (!chromiumPresent) return;
  h = await startHearth({ env: ENV });
  gwen = await signUp(h, "gwen");
  const token = await h.token("gwen");
  for (let from = 1; from <= COUNT; from += 50) {
    const batch = Array.from({ length: Math.min(50, COUNT - from + 1) }, (_, i) => from + i);
    const answers = await Promise.all(batch.map((n) => h.call("notes/add", { title: title(n), text: `text ${n}` }, { token, method: "POST" })));
    expect(answers.map((a) => a.status)).toEqual(batch.map(() => 200));
  }
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await h?.stop();
});

test.skipIf(!chromiumPresent)("the Notes screen lists all 1,003 notes, the last three past the first thousand included", async () => {
  const plain = await h.call("notes/list", {}, { token: await h.token("gwen") });
  expect(plain.body.result).toHaveLength(1000);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const [name, value] = gwen.cookie.split("=");
  await context.addCookies([{ name, value, url: h.url }]);
  const page = await context.newPage();
  await page.goto(`${h.url}/my/notes`);
  await page.locator(".search-list button.item").first().waitFor();
  await page.waitForFunction((n) => document.querySelectorAll(".search-list button.item").length === n, COUNT);
  await page.locator("#note-search").fill(title(COUNT));
  await page.locator(".search-list button.item", { hasText: title(COUNT) }).waitFor();
  await context.close();
});

test.skipIf(!chromiumPresent)("the header's search finds a note past the first thousand, in the page's search field and on /my/search", async () => {
  const found = await fetch(`${h.url}/my/find?q=${encodeURIComponent(title(COUNT))}`, { headers: { cookie: gwen.cookie } });
  const notes = ((await found.json()) as { result: { service: string; items: { title: string; href: string }[] }[] }).result.find((f) => f.service === "notes");
  expect(notes?.items.map((i) => i.title)).toEqual([title(COUNT)]);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const [name, value] = gwen.cookie.split("=");
  await context.addCookies([{ name, value, url: h.url }]);
  const page = await context.newPage();
  await page.goto(`${h.url}/my/notes`);
  await page.locator("#find").fill(title(1002));
  await page.locator(".find-results .find-item", { hasText: title(1002) }).waitFor();
  await page.locator("#find").press("ArrowDown");
  await page.locator("#find").press("Enter");
  await page.waitForURL((u) => u.pathname === "/my/notes" && u.searchParams.get("open") === title(1002));
  await page.getByText("text 1002").first().waitFor();
  await page.goto(`${h.url}/my/search?q=${encodeURIComponent(title(1001))}`);
  await page.locator(".found li a", { hasText: title(1001) }).waitFor();
  await context.close();
});
