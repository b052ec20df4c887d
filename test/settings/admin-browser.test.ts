// one store: the admin's pages in a browser; two-factor reset, settings and staged restores run on both stores in test/settings (twofactor-reset, people, settings) and test/backup/restore-page.test.ts
// The admin's newer parts in Chromium: turning off a person's two-factor
// sign-in from /people (the person, signing in with their password alone,
// lands on /account and is told), a setting the environment overrides on
// /settings, the x402 network on /setup, and /settings/restore checking a
// backup and asking to confirm. axe finds nothing on each, light and dark, at
// 1280 and 390 px; screenshots are left in test/artifacts/admin for a look.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Secret, TOTP } from "otpauth";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { backupsOf } from "../../core/backup/schedule.ts";
import { answerTo, chromiumPresent, everyLook, launchChromium } from "../browser.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { post, signUp } from "../auth/people.ts";

const SHOTS = join(import.meta.dir, "..", "artifacts", "admin");
const WIDTHS = { phone: { width: 390, height: 844 }, desktop: { width: 1280, height: 900 } };

let h: Hearth;
let browser: Browser;
let owner: BrowserContext;
const clock = new TestClock(Date.now());
const folder = mkdtempSync(join(tmpdir(), "hearth-adminpages-"));
const file = join(folder, "hearth.env");

beforeAll(async () => {
  if (!chromiumPresent) return;
  writeFileSync(file, "AI_MODEL=file-model\nHEARTH_SIGNUP=open\n");
  h = await startHearth({
    clock,
    env: { HEARTH_CONFIG: file, AI_MODEL: "env-model", AI_OLLAMA_URL: "", HEARTH_METERING: "off", HEARTH_RATE_SIGNIN: "0", HEARTH_SIGNUP: "open", HEARTH_BACKUP: "on", HEARTH_BACKUP_TO: join(folder, "backups"), HEARTH_BACKUP_PASSPHRASE: "kept by the owner" },
    environment: new Set(["AI_MODEL"]),
  });
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
  rmSync(folder, { recursive: true, force: true });
});

async function signInPage(page: Page, username: string) {
  await page.goto(`${h.url}/signin`);
  await page.getByLabel("Username").fill(username);
  await page.getByLabel("Password").fill("a long passphrase");
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
}

test.skipIf(!chromiumPresent)("people: a lost phone; the admin turns off the person's two-factor sign-in, and they are told when they sign in", async () => {
  await signUp(h, "olive");
  const page = await owner.newPage();
  await signInPage(page, "olive");
  await page.waitForURL(`${h.url}/`);
  // Sam turns on codes, then loses the phone.
  const sam = await signUp(h, "sam");
  const { secret } = (await post(h, "/account/totp/start", {}, { cookie: sam.cookie, "x-csrf-token": sam.csrf })).body.result;
  const code = new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: "SHA1" }).generate({ timestamp: clock.t });
  expect((await post(h, "/account/totp/confirm", { code }, { cookie: sam.cookie, "x-csrf-token": sam.csrf })).status).toBe(200);

  await page.goto(`${h.url}/people`);
  await page.getByText("Lost phone: turn off sam's two-factor sign-in…").click();
  await page.screenshot({ path: join(SHOTS, "people-reset-desktop-light.png"), fullPage: true });
  // The click and the form's answer are awaited together, and what the answering page says is read whichever kind of
  // message it is (test/browser.ts answerTo): a refusal fails here at once with its status and reason.
  const reset = await answerTo(page, () => page.getByRole("button", { name: "Turn off sam's two-factor sign-in" }).click(), "/people");
  expect(reset).toMatchObject({ status: 200, said: expect.stringContaining("sam: two-factor sign-in is off") });

  const theirs = await (await browser.newContext({ viewport: WIDTHS.phone, serviceWorkers: "block" })).newPage();
  await signInPage(theirs, "sam");
  await theirs.waitForURL(`${h.url}/account`);
  await expect(theirs.getByRole("status", { name: "Changed while you were away" }).textContent()).resolves.toContain("The admin olive turned off your two-factor sign-in");
  await theirs.screenshot({ path: join(SHOTS, "account-told-phone-light.png"), fullPage: true });
  await theirs.context().close();
  await page.close();
});

test.skipIf(!chromiumPresent)("restore: a backup from the destination is checked, and the page asks to confirm what it replaces", async () => {
  const b = (await backupsOf(h.rt).runNow()) as { name: string };
  const page = await owner.newPage();
  await page.goto(`${h.url}/settings/restore`);
  await page.getByLabel(/^From /).selectOption(b.name);
  await page.getByLabel("Passphrase").fill("not the passphrase");
  const refused = await answerTo(page, () => page.getByRole("button", { name: "Check the backup" }).click(), "/settings/restore");
  expect(refused.said).toContain("Not restored, nothing changed");
  await page.screenshot({ path: join(SHOTS, "restore-refused-desktop-light.png"), fullPage: true });
  await page.getByLabel(/^From /).selectOption(b.name);
  await page.getByRole("button", { name: "Check the backup" }).click();
  await expect(page.getByRole("heading", { name: "Checked: restore this backup?" }).textContent()).resolves.toBeTruthy();
  await page.screenshot({ path: join(SHOTS, "restore-checked-desktop-light.png"), fullPage: true });
  await page.close();
});

test.skipIf(!chromiumPresent)("axe: no violations, light and dark, 1280 and 390 px; screenshots", async () => {
  const ctx = await browser.newContext({ viewport: WIDTHS.desktop, bypassCSP: true, serviceWorkers: "block" });
  await ctx.addCookies(await owner.cookies());
  const page = await ctx.newPage();
  // Each page loaded once and seen in the four looks in place (test/browser.ts), as a person turning their phone or
  // their system's dark mode would.
  const found = await everyLook(
    page,
    h.url,
    [
      { name: "people", path: "/people", fullPage: true, ready: async (p) => { for (const d of await p.locator("details.reset").all()) await d.locator("summary").click(); } },
      { name: "settings-restore", path: "/settings/restore", fullPage: true },
      { name: "setup-x402", path: "/setup", part: (p) => p.locator("fieldset", { hasText: "x402 payments" }) },
      // At the top of the window, clear of the sticky row of buttons at its foot.
      { name: "settings-env", path: "/settings#g-ai-models", each: (p) => p.locator("#s-AI_MODEL").evaluate((e) => e.parentElement!.scrollIntoView({ block: "start" })) },
    ],
    { shots: SHOTS },
  );
  await ctx.close();
  expect(found).toEqual({});
});
