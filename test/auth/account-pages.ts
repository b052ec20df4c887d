// What the account pages' browser tests share (account.test.ts, account-sessions.test.ts): the passwords, the two
// widths, signing in on the page and reading the header.
import type { Page } from "playwright-core";

export const WIDTHS = { phone: { width: 390, height: 844 }, desktop: { width: 1280, height: 900 } };
export const PASSWORD = "a long passphrase";
export const NEW_PASSWORD = "another long passphrase";

export async function signInWithPassword(page: Page, base: string, username: string, password: string) {
  await page.goto(`${base}/signin`);
  await page.getByLabel("Username").fill(username);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
}

export const header = (page: Page) => page.locator("header").textContent();
