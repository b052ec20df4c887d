// one store: the /activity page; the log, its filters and exports run on both stores in test/audit/audit.test.ts
// The /activity page in a real browser: the owner's calls listed with who
// made them and how they ended, the filter form narrowing them, the link to
// older entries and the exports; axe's checks in light and dark at a phone's
// and a desktop's width, with screenshots left in test/artifacts/.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { signUp, type Signed } from "../auth/people.ts";
import { accountMenu, chromiumPresent, everyLook, launchChromium } from "../browser.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { findAccount, issueToken } from "../../core/auth/tokens.ts";

const ARTIFACTS = join(import.meta.dir, "..", "artifacts");
const WIDTHS = { phone: { width: 390, height: 844 }, desktop: { width: 1280, height: 900 } };

let h: Hearth;
let browser: Browser;
let s: Signed;

beforeAll(async () => {
  if (!chromiumPresent) return;
  h = await startHearth({ env: { HEARTH_SIGNUP: "open", HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0" } });
  s = await signUp(h, "alice");
  const account = (await findAccount(h.rt.store, "alice"))!;
  const laptop = (await issueToken(h.rt.store, account, { name: "laptop", scopes: ["notes"] })).token;
  for (let i = 0; i < 55; i++) await h.call("notes/add", { title: `Note ${i}`, text: "Plant garlic in November, before the ground freezes." }, { token: laptop });
  await h.call("tasks/create", { title: "out of scope" }, { token: laptop });
  await h.call("notes/add", { title: "", text: "no title", password: "hunter2" }, { token: laptop });
  await h.call("notes/list", {});
  browser = await launchChromium();
  mkdirSync(ARTIFACTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await h?.stop();
});

async function context(colorScheme: "light" | "dark", size: { width: number; height: number }, bypassCSP = false) {
  const ctx = await browser.newContext({ colorScheme, viewport: size, bypassCSP });
  const [name, value] = s.cookie.split("=");
  await ctx.addCookies([{ name, value, url: h.url }]);
  return ctx;
}

test.skipIf(!chromiumPresent)(
  "lists the owner's calls, filters them, pages to older ones and offers the exports",
  async () => {
    const ctx = await context("light", WIDTHS.desktop);
    const page = await ctx.newPage();
    await page.goto(`${h.url}/token`);
    await (await accountMenu(page)).getByRole("link", { name: "Activity" }).click();
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Activity");
    const rows = page.locator("tbody tr");
    expect(await rows.count()).toBe(50);
    const first = await rows.first().textContent();
    expect(first).toContain("notes/add");
    expect(first).toContain("laptop");
    expect(first).toContain("invalid_argument (400)");
    expect(first).toContain("(hidden)");
    expect(first).not.toContain("hunter2");

    await page.getByLabel("Outcome").selectOption("refused");
    await page.getByRole("button", { name: "Show" }).click();
    expect(page.url()).toContain("outcome=refused");
    const refused = await page.locator("tbody tr").allTextContents();
    expect(refused.length).toBe(2);
    expect(refused[1]).toContain("tasks/create");
    expect(refused[1]).toContain("forbidden (403)");
    expect(await page.getByRole("link", { name: "CSV" }).getAttribute("href")).toBe("/activity/export.csv?outcome=refused");

    await page.goto(`${h.url}/activity`);
    await page.getByRole("link", { name: "Older entries" }).click();
    const older = await page.locator("tbody tr").allTextContents();
    expect(older.length).toBe(7);
    expect(older.at(-1)).toContain("Note 0");
    await ctx.close();
  },
);

test.skipIf(!chromiumPresent)(
  "each token on /token shows its last calls, linked to all of them",
  async () => {
    const ctx = await context("light", WIDTHS.desktop);
    const page = await ctx.newPage();
    await page.goto(`${h.url}/token`);
    const row = page.locator("tbody tr", { hasText: "laptop" });
    const cell = row.locator("td[data-label='Recent calls']");
    expect(await cell.locator("li").allTextContents()).toEqual(["notes/add invalid_argument (400)", "tasks/create forbidden (403)", "notes/add done"]);
    await cell.getByRole("link", { name: "All calls" }).click();
    expect(await page.locator("tbody tr").count()).toBe(50);
    expect(new URL(page.url()).searchParams.get("credential")).toMatch(/.+/);
    await ctx.close();
  },
);

test.skipIf(!chromiumPresent)(
  "passes axe's WCAG 2.1 AA and best-practice checks in light and dark at both widths; screenshots for a look",
  async () => {
    const ctx = await context("light", WIDTHS.desktop, true);
    const found = await everyLook(
      await ctx.newPage(),
      h.url,
      [
        { name: "activity", path: "/activity" },
        // On /token what is new is the tokens' table, further down the page: that is what is shot.
        { name: "token", path: "/token", part: (page) => page.locator("tbody tr", { hasText: "laptop" }) },
      ],
      { shots: ARTIFACTS },
    );
    await ctx.close();
    expect(found).toEqual({});
  },
);
