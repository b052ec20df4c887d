// one store: pages and the settings file; accounts, invitations and settings run on both stores in test/auth and test/settings/people.test.ts
// The first hour in Chromium: a fresh instance sends the owner to make the
// admin account and on to the first-run choices, which land in the settings
// file; the AI provider changed on /settings serves the next call without a
// restart; a bad value is shown at its field; an invited person signs up,
// and once disabled cannot sign in. axe finds nothing on the new pages (and the
// public blog under the site header) in
// light and dark at a phone's and a desktop's width; screenshots are left
// for a look.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseEnv } from "node:util";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { answerTo, axeOn, accountMenu, chromiumPresent, everyLook, laidOut, launchChromium } from "../browser.ts";
import { startOpenAiFixture, type OpenAiFixture } from "../fixtures/openai/server.ts";
import { startHearth, type Hearth } from "../harness.ts";

const SHOTS = process.env.HEARTH_SHOTS ?? join(import.meta.dir, "..", "artifacts", "settings");
const WIDTHS = { phone: { width: 390, height: 844 }, desktop: { width: 1280, height: 900 } };

let h: Hearth;
let browser: Browser;
let owner: BrowserContext;
let first: OpenAiFixture;
let second: OpenAiFixture;
const folder = mkdtempSync(join(tmpdir(), "hearth-firstrun-"));
const file = join(folder, "hearth.env");
const settings = () => parseEnv(readFileSync(file, "utf8"));

beforeAll(async () => {
  if (!chromiumPresent) return;
  first = await startOpenAiFixture();
  second = await startOpenAiFixture();
  h = await startHearth({ env: { HEARTH_CONFIG: file, AI_OLLAMA_URL: "", UPSTREAM_RETRY_MS: "0", HEARTH_METERING: "off", HEARTH_RATE_SIGNIN: "0" } });
  browser = await launchChromium();
  // The app's worker is left out of every context here: these pages do not use it (the screens' own tests cover it),
  // and with it Playwright now and then was handed the answer to a request the worker made after the worker had
  // gone ("Cannot find parent object request@… to create response@…", "Cannot find object to __dispose__: worker@…"),
  // which failed every test of the file from then on.
  owner = await browser.newContext({ viewport: WIDTHS.desktop, serviceWorkers: "block" });
  mkdirSync(SHOTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await h?.stop();
  first?.stop();
  second?.stop();
  rmSync(folder, { recursive: true, force: true });
});

/** Calls a method from the page, as the page's own script would, with the session. */
const callFromPage = (page: Page, path: string) =>
  page.evaluate(async (path) => {
    const res = await fetch(path, { headers: { accept: "application/json" } });
    return { status: res.status, body: await res.json() };
  }, path);

const TEXT = encodeURIComponent("A long walk along the river on a sunny day, with a stop for lunch at the old mill. ".repeat(3));

test.skipIf(!chromiumPresent)("a fresh instance: the admin account, then the first-run choices, written to the settings file", async () => {
  const page = await owner.newPage();
  await page.goto(`${h.url}/setup`);
  expect(new URL(page.url()).pathname).toBe("/signup");
  await page.getByLabel("Username").fill("olive");
  await page.getByLabel("Password").fill("a long passphrase");
  await page.getByRole("button", { name: "Create account" }).click();
  await page.waitForURL(`${h.url}/setup`);

  await page.getByLabel("Name of this instance").fill("Olive's hearth");
  await page.getByLabel("Public address").fill(h.url);
  await page.getByLabel("Time zone").fill("Europe/London");
  await page.getByLabel("By invitation").check();
  await page.getByLabel("API address").fill(first.base);
  await page.getByLabel("Model", { exact: true }).fill("first-model");
  first.reply({ say: "ready" });
  // Each form's answer is awaited with its click and its message read whichever kind it is (test/browser.ts answerTo):
  // a wrong answer fails with what the page said, and a page that cannot be read fails in a minute saying so.
  const probe = await answerTo(page, () => page.getByRole("button", { name: "Test the AI provider" }).click(), "/setup");
  expect(probe).toMatchObject({ status: 200, said: expect.stringMatching(/^Works: .* answered with model/) });
  // The test saves nothing, and what was typed is still there.
  expect(await page.getByLabel("Model", { exact: true }).inputValue()).toBe("first-model");
  await page.getByRole("button", { name: "Save and finish" }).click();
  await page.waitForURL(`${h.url}/?setup=done`);
  expect(settings()).toMatchObject({ HEARTH_NAME: "Olive's hearth", HEARTH_PUBLIC_URL: h.url, HEARTH_TZ: "Europe/London", HEARTH_SIGNUP: "invite", AI_BASE_URL: first.base, AI_MODEL: "first-model" });
  await expect(page.locator("header").textContent()).resolves.toContain("Signed in as olive");

  first.reply({ say: "A summary from the first provider." });
  const a = await callFromPage(page, `/api/v1/text/summarise?text=${TEXT}`);
  expect(a.status).toBe(200);
  expect(JSON.stringify(a.body)).toContain("first provider");
  await page.close();
});

test.skipIf(!chromiumPresent)("settings: a bad value is shown at its field; a new AI provider serves the next call without a restart", async () => {
  const page = await owner.newPage();
  await page.goto(`${h.url}/`);
  await (await accountMenu(page)).getByRole("link", { name: "Settings" }).click();
  await page.waitForURL(`${h.url}/settings`);

  const instance = page.locator("section", { has: page.getByRole("heading", { name: "Instance", exact: true }) });
  await instance.getByLabel("PORT", { exact: true }).fill("eighty");
  const refused = await answerTo(page, () => instance.getByRole("button", { name: "Save instance" }).click(), "/settings");
  expect(refused).toMatchObject({ status: 400, said: expect.stringContaining("PORT: must be a whole number") });
  const port = page.getByLabel("PORT", { exact: true });
  await expect(port.getAttribute("aria-invalid")).resolves.toBe("true");
  await expect(page.locator("#s-PORT-error").textContent()).resolves.toContain("must be a whole number");
  expect(await port.inputValue()).toBe("eighty");
  await page.locator(".setting.wrong").screenshot({ path: join(SHOTS, "settings-error-desktop-light.png") });
  expect(settings().PORT).toBeUndefined();

  const ai = page.locator("section", { has: page.getByRole("heading", { name: "AI models", exact: true }) });
  await ai.getByLabel("AI_BASE_URL", { exact: true }).fill(second.base);
  await ai.getByLabel("AI_MODEL", { exact: true }).fill("second-model");
  await ai.getByRole("button", { name: "Save ai models" }).click();
  await page.waitForURL(/\/settings\?saved=/);
  expect(settings()).toMatchObject({ AI_BASE_URL: second.base, AI_MODEL: "second-model" });

  second.reply({ say: "A summary from the second provider." });
  const n = first.posts.length;
  const b = await callFromPage(page, `/api/v1/text/summarise?text=${TEXT}`);
  expect(b.status).toBe(200);
  expect(JSON.stringify(b.body)).toContain("second provider");
  expect(second.posts.at(-1)!.body.model).toBe("second-model");
  expect(first.posts.length).toBe(n);
  await page.close();
});

test.skipIf(!chromiumPresent)("people: an invited person signs up; disabled, they cannot sign in", async () => {
  const page = await owner.newPage();
  await page.goto(`${h.url}/people`);
  await page.getByRole("button", { name: "Invite someone" }).click();
  const link = (await page.locator("#made-link").textContent())!.trim();
  expect(link).toContain("/signup?invite=");

  const guest = await browser.newContext({ viewport: WIDTHS.phone, serviceWorkers: "block" });
  const theirs = await guest.newPage();
  await theirs.goto(link);
  await theirs.getByLabel("Username").fill("pat");
  await theirs.getByLabel("Password").fill("pat's long passphrase");
  await theirs.getByRole("button", { name: "Create account" }).click();
  await theirs.waitForURL(`${h.url}/token`);

  await page.goto(`${h.url}/people`);
  const disabled = await answerTo(page, () => page.getByRole("button", { name: "Disable pat" }).click(), "/people");
  expect(disabled).toMatchObject({ status: 200, said: expect.stringContaining("pat is disabled") });
  // Signed out at once: the next page asks them to sign in, and signing in is refused.
  await theirs.goto(`${h.url}/token`);
  expect(new URL(theirs.url()).pathname).toBe("/signin");
  await theirs.getByLabel("Username").fill("pat");
  await theirs.getByLabel("Password").fill("pat's long passphrase");
  const refusal = await answerTo(theirs, () => theirs.getByRole("button", { name: "Sign in", exact: true }).click(), "/signin");
  expect(refusal.said).toContain("disabled");
  await guest.close();
  await page.close();
});

test.skipIf(!chromiumPresent)("axe: no violations on the new pages, light and dark, 1280 and 390 px; screenshots", async () => {
  const cookies = await owner.cookies();
  const ctx = await browser.newContext({ viewport: WIDTHS.desktop, bypassCSP: true, serviceWorkers: "block" });
  await ctx.addCookies(cookies);
  const page = await ctx.newPage();
  const screens = ["", "setup", "settings", "people", "blog"].map((path) => ({ name: path || "home", path: `/${path}`, fullPage: path !== "settings" }));
  const found: Record<string, unknown> = await everyLook(page, h.url, screens, { shots: SHOTS });
  // The phone's menu, opened on the home page, in both schemes.
  await page.setViewportSize(WIDTHS.phone);
  await page.goto(`${h.url}/`);
  await page.getByText("Menu", { exact: true }).click();
  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await laidOut(page);
    await page.screenshot({ path: join(SHOTS, `menu-phone-${scheme}.png`) });
    const v = await axeOn(page);
    if (v.length) found[`${scheme} phone menu`] = v;
  }
  // The menu under the person's name, at both widths and in both schemes: it lists the account's own places and signing out.
  for (const [width, size] of Object.entries(WIDTHS)) {
    await page.setViewportSize(size);
    await page.goto(`${h.url}/my/notes`);
    const menu = await accountMenu(page);
    expect(await menu.getByRole("link").allTextContents()).toEqual(["Account", "Tokens", "Activity", "Approvals", "Settings", "People"]);
    await menu.getByRole("button", { name: "Sign out" }).waitFor();
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await laidOut(page);
      await page.screenshot({ path: join(SHOTS, `account-menu-${width}-${scheme}.png`) });
      const v = await axeOn(page);
      if (v.length) found[`${scheme} ${width} account menu`] = v;
    }
    // On a screen (where script runs) Escape closes it, as a menu does, and gives focus back to its button.
    await page.keyboard.press("Escape");
    expect(await menu.evaluate((d: HTMLDetailsElement) => d.open)).toBe(false);
    expect(await page.evaluate(() => document.activeElement?.closest("details")?.className)).toBe("me");
  }
  await ctx.close();
  expect(found).toEqual({});
});
