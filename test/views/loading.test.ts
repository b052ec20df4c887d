// one store: what the browser draws; the waiting method keeps nothing
// Two parts of one screen each showing the shared Loading at once, then
// their answers arriving in either order: the page keeps drawing, with no
// error thrown in it (the Recall screen once broke on exactly this).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { signUp, type Signed } from "../auth/people.ts";
import { chromiumPresent, launchChromium } from "../browser.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { gate, gates } from "./plugins/waits/index.ts";

let h: Hearth;
let browser: Browser;
let erin: Signed;

beforeAll(async () => {
  if (!chromiumPresent) return;
  h = await startHearth({ env: { HEARTH_SIGNUP: "open", HEARTH_METERING: "off", HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0", HEARTH_PLUGINS: join(import.meta.dir, "plugins") } });
  erin = await signUp(h, "erin");
  browser = await launchChromium();
});
afterAll(async () => {
  for (const g of gates.values()) g.open();
  await browser?.close();
  await h?.stop();
});

async function opened(path: string) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const [name, value] = erin.cookie.split("=");
  await context.addCookies([{ name, value, url: h.url }]);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("pageerror", (e) => problems.push(String(e)));
  page.on("console", (m) => m.type() === "error" && !/Failed to load resource|EventSource/.test(m.text()) && problems.push(m.text()));
  await page.goto(`${h.url}${path}`);
  return { context, page, problems };
}

for (const shape of ["parts", "whole", "siblings"])
  for (const first of ["list", "part", "both"])
    test.skipIf(!chromiumPresent)(`two Loading notices at once (${shape}), ${first} answered first`, async () => {
      gates.clear();
      const { context, page, problems } = await opened(`/my/waits?shape=${shape}`);
      await page.getByText("Loading the list…").waitFor();
      if (shape !== "whole") await page.getByText("Loading part…").waitFor();
      if (first === "both") {
        gate("list").open();
        gate("part").open();
      } else {
        gate(first).open();
        if (shape !== "whole" || first === "list") await page.locator(`.done-${first}`).waitFor();
        gate(first === "list" ? "part" : "list").open();
      }
      await page.locator(".done-list").waitFor();
      await page.locator(".done-part").waitFor();
      expect(await page.locator("#view .loading").count()).toBe(0);
      expect(problems).toEqual([]);
      await context.close();
    });

test.skipIf(!chromiumPresent)("a part waiting for one answer is replaced by another that waits, while the list still waits", async () => {
  gates.clear();
  const { context, page, problems } = await opened("/my/waits");
  await page.getByText("Loading part…").waitFor();
  await page.getByRole("button", { name: "Other" }).click();
  await page.getByText("Loading other…").waitFor();
  gate("other").open();
  await page.locator(".done-other").waitFor();
  gate("list").open();
  await page.locator(".done-list").waitFor();
  expect(problems).toEqual([]);
  await context.close();
});
