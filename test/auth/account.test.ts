// one store: the account pages; two-factor, passkeys, sessions and passwords run on both stores in test/auth (twofactor, sessions, accounts)
// One's own account in a real browser: an invited person signs up, turns on
// two-factor sign-in (the test reads the key off the page and computes the
// codes, as an authenticator app does), signs out and in with password and
// code, uses a recovery code once, registers a passkey through Chromium's
// virtual authenticator and signs in with it, signs another browser out from
// the session list, and changes the password, which signs a second browser
// out (account-sessions.test.ts, a file of its own so the two run at once). Each page passes axe in light and dark at a phone's and a desktop's
// width; screenshots are left in test/artifacts/account (or HEARTH_SHOTS).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { Secret, TOTP } from "otpauth";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { createInvite, signUp } from "../../core/auth/people.ts";
import { accountMenu, axeOn, chromiumPresent, everyLook, laidOut, launchChromium, LOOKS } from "../browser.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { header, PASSWORD, signInWithPassword, WIDTHS } from "./account-pages.ts";

const SHOTS = process.env.HEARTH_SHOTS ?? join(import.meta.dir, "..", "artifacts", "account");

let h: Hearth;
let browser: Browser;
const clock = new TestClock();

beforeAll(async () => {
  if (!chromiumPresent) return;
  mkdirSync(SHOTS, { recursive: true });
  // Every browser here comes from 127.0.0.1: the per-address limit on sign-in attempts is not what is tested.
  h = await startHearth({ clock, env: { HEARTH_SIGNUP: "invite", HEARTH_RATE_SIGNIN: "1000" } });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await h?.stop();
});

/** Runs axe on the page the URL shows, in light and dark at both widths, with this context's cookies; a screenshot of each. */
async function audit(ctx: BrowserContext, url: string, name: string): Promise<Record<string, unknown>> {
  // axe's script is added to the page, so this context alone sets the page's script policy aside.
  const c = await browser.newContext({ viewport: WIDTHS.desktop, bypassCSP: true });
  await c.addCookies(await ctx.cookies());
  const found = await everyLook(await c.newPage(), "", [{ name, path: url, fullPage: true }], { shots: SHOTS });
  await c.close();
  return found;
}

/** The code an authenticator app shows now, by the server's clock. */
const codeFor = (secret: string) => new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: "SHA1" }).generate({ timestamp: clock.t });


async function enterCode(page: Page, code: string) {
  // The page after the password is the code's: waited for, as the sign-in page may still be showing.
  await page.getByRole("heading", { level: 1, name: "Enter your code" }).waitFor();
  await page.getByLabel("Code", { exact: true }).fill(code);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
}

async function signOut(page: Page) {
  await (await accountMenu(page)).getByRole("button", { name: "Sign out", exact: true }).click();
  await page.waitForURL(/\/signin\?out=1$/);
}


test.skipIf(!chromiumPresent)("an invited person turns on two-factor sign-in, signs in with a code and a recovery code, adds a passkey and signs in with it", async () => {
  const owner = await signUp(h.rt, { username: "ada", password: PASSWORD });
  const { code: invite } = await createInvite(h.rt, owner);

  const ctx = await browser.newContext({ viewport: WIDTHS.desktop });
  // The page the invitation opens, looked at before it is used.
  expect(await audit(ctx, `${h.url}/signup?invite=${invite}`, "signup-invite")).toEqual({});
  const page = await ctx.newPage();
  await page.goto(`${h.url}/signup?invite=${invite}`);
  await page.getByLabel("Username").fill("bea");
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Create account" }).click();
  await page.waitForURL(`${h.url}/token`);

  // An admin's page, opened by someone who is not one: a page saying so, with a way back, not JSON.
  const refused = await page.goto(`${h.url}/settings`);
  expect(refused!.status()).toBe(403);
  expect(refused!.headers()["content-type"]).toStartWith("text/html");
  await expect(page.getByRole("alert").textContent()).resolves.toContain("only an admin of this instance may open this page");
  await expect(page.getByRole("link", { name: "Back", exact: true }).getAttribute("href")).resolves.toBe("/");
  expect(await audit(ctx, `${h.url}/settings`, "settings-not-admin")).toEqual({});

  // The header leads to the account page, from the menu under the person's name.
  await (await accountMenu(page)).getByRole("link", { name: "Account", exact: true }).click();
  await page.waitForURL(`${h.url}/account`);
  expect(await page.locator("main").textContent()).toContain("Tokens and app passwords are not affected");
  expect(await audit(ctx, `${h.url}/account`, "account-off")).toEqual({});

  // Setting up: the page shows a QR code, the otpauth link and the key.
  await page.getByRole("button", { name: "Set up an authenticator app" }).click();
  await page.waitForURL(/\/account\?done=setup/);
  const link = await page.getByRole("link", { name: "this otpauth link" }).getAttribute("href");
  expect(link).toStartWith("otpauth://totp/");
  const secret = (await page.locator("#totp-secret").textContent())!.replace(/\s+/g, "");
  expect(new URL(link!).searchParams.get("secret")).toBe(secret);
  await expect(page.getByRole("img", { name: /QR code/ }).count()).resolves.toBe(1);
  expect(await audit(ctx, page.url(), "account-totp-setup")).toEqual({});

  // A wrong code first: refused, still off.
  await page.getByLabel("The six-digit code the app now shows").fill(codeFor(secret) === "123456" ? "654321" : "123456");
  await page.getByRole("button", { name: "Turn on two-factor sign-in" }).click();
  await page.getByRole("alert").filter({ hasText: "that code is not right" }).first().waitFor();
  await page.getByLabel("The six-digit code the app now shows").fill(codeFor(secret));
  await page.getByRole("button", { name: "Turn on two-factor sign-in" }).click();
  await page.locator("#recovery-codes li").first().waitFor();
  const recovery = (await page.locator("#recovery-codes li").allTextContents()).map((c) => c.trim());
  expect(recovery.length).toBe(10);
  // Shown once, as the answer to turning it on: each look is set on this page, not on a page loaded again.
  const codesFound: Record<string, unknown> = {};
  for (const look of LOOKS) {
    await page.setViewportSize(look.size);
    await page.emulateMedia({ colorScheme: look.scheme });
    await laidOut(page);
    await page.screenshot({ path: join(SHOTS, `account-recovery-codes-${look.label}-${look.scheme}.png`), fullPage: true });
    const v = await axeOn(page);
    if (v.length) codesFound[`${look.scheme} ${look.label}`] = v;
  }
  expect(codesFound).toEqual({});
  await page.setViewportSize(WIDTHS.desktop);
  await page.emulateMedia({ colorScheme: null });
  // Only hashes are kept.
  const stored = await h.rows<{ hash: string }>("SELECT hash FROM recovery_codes");
  expect(stored.length).toBe(10);
  expect(stored.map((r) => r.hash)).not.toContain(recovery[0]);

  // Signed out, the password alone no longer signs in: the code is asked for.
  await signOut(page);
  clock.advance(60_000);
  await signInWithPassword(page, h.url, "bea", PASSWORD);
  expect(await audit(ctx, `${h.url}/signin/code`, "signin-code")).toEqual({});
  await enterCode(page, "000000");
  await page.getByRole("alert").filter({ hasText: "that code is not right" }).first().waitFor();
  await enterCode(page, codeFor(secret));
  await page.waitForURL(`${h.url}/`);
  expect(await header(page)).toContain("Signed in as bea");

  // The same code again (the same time step) is refused: a code seen over a shoulder is spent.
  await signOut(page);
  await signInWithPassword(page, h.url, "bea", PASSWORD);
  await enterCode(page, codeFor(secret));
  await page.getByRole("alert").filter({ hasText: "that code is not right" }).first().waitFor();

  // A recovery code works once.
  await enterCode(page, recovery[3].toUpperCase());
  await page.waitForURL(`${h.url}/`);
  expect(await header(page)).toContain("Signed in as bea");
  await signOut(page);
  await signInWithPassword(page, h.url, "bea", PASSWORD);
  await enterCode(page, recovery[3]);
  await page.getByRole("alert").filter({ hasText: "that code is not right" }).first().waitFor();
  clock.advance(60_000);
  await enterCode(page, codeFor(secret));
  await page.waitForURL(`${h.url}/`);
  await page.goto(`${h.url}/account`);
  expect(await page.locator("#two-factor ~ p").first().textContent()).toContain("9 of 10 recovery codes are unused");

  // Passkeys: WebAuthn needs a host name, so this browser opens the instance as localhost.
  const local = h.url.replace("127.0.0.1", "localhost");
  const pctx = await browser.newContext({ viewport: WIDTHS.desktop });
  const pk = await pctx.newPage();
  const cdp = await pctx.newCDPSession(pk);
  await cdp.send("WebAuthn.enable");
  const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: { protocol: "ctap2", transport: "internal", hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  clock.advance(60_000);
  await signInWithPassword(pk, local, "bea", PASSWORD);
  await enterCode(pk, codeFor(secret));
  await pk.waitForURL(`${local}/`);
  await pk.goto(`${local}/account`);
  await pk.getByLabel("Name of the new passkey").fill("laptop");
  await pk.getByRole("button", { name: "Add a passkey" }).click();
  await pk.waitForURL(`${local}/account?done=passkey-added#passkeys`);
  await expect(pk.getByLabel("Name of passkey 1").inputValue()).resolves.toBe("laptop");
  const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
  expect(credentials.length).toBe(1);
  expect(credentials[0].isResidentCredential).toBe(true);
  await pk.getByLabel("Name of passkey 1").fill("work laptop");
  await pk.getByRole("button", { name: "Rename passkey 1" }).click();
  await pk.waitForURL(`${local}/account?done=passkey-renamed#passkeys`);
  await expect(pk.getByLabel("Name of passkey 1").inputValue()).resolves.toBe("work laptop");
  expect(await audit(pctx, `${local}/account`, "account-on")).toEqual({});

  // Signed out, the passkey signs in with no username, password or code.
  await signOut(pk);
  expect(await audit(pctx, `${local}/signin`, "signin")).toEqual({});
  await pk.getByRole("button", { name: "Sign in with a passkey" }).click();
  await pk.waitForURL(`${local}/`);
  expect(await header(pk)).toContain("Signed in as bea");
  const used = await h.row<{ last_used: number | null }>("SELECT last_used FROM passkeys");
  expect(used?.last_used).toBe(clock.t);

  // Removed, it no longer signs in.
  await pk.goto(`${local}/account`);
  await pk.getByRole("button", { name: "Remove work laptop" }).click();
  await pk.waitForURL(`${local}/account?done=passkey-removed#passkeys`);
  await signOut(pk);
  await pk.getByRole("button", { name: "Sign in with a passkey" }).click();
  await pk.locator("#passkey-status", { hasText: "not registered here" }).waitFor();
  await pctx.close();
  await ctx.close();
});
