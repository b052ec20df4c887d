// one store: the account pages; sessions and passwords run on both stores in test/auth (sessions, accounts)
// One's own sessions in a real browser: signing another browser out from the session list, and changing the
// password, which signs a second browser out (account.test.ts has the rest of the account pages).
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { createInvite, signUp } from "../../core/auth/people.ts";
import { chromiumPresent, launchChromium } from "../browser.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { header, NEW_PASSWORD, PASSWORD, signInWithPassword, WIDTHS } from "./account-pages.ts";

let h: Hearth;
let browser: Browser;
const clock = new TestClock();

beforeAll(async () => {
  if (!chromiumPresent) return;
  // Every browser here comes from 127.0.0.1: the per-address limit on sign-in attempts is not what is tested.
  h = await startHearth({ clock, env: { HEARTH_SIGNUP: "invite", HEARTH_RATE_SIGNIN: "1000" } });
  // The instance's admin, who invites.
  await signUp(h.rt, { username: "ada", password: PASSWORD });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await h?.stop();
});

test.skipIf(!chromiumPresent)("the session list signs another browser out, and changing the password signs out every browser but this one", async () => {
  const ada = (await h.rows<{ id: string; username: string; admin: boolean }>("SELECT id, username, admin FROM accounts WHERE username = 'ada'"))[0];
  const { code } = await createInvite(h.rt, { id: ada.id, username: "ada", admin: true });
  await signUp(h.rt, { username: "cai", password: PASSWORD, invite: code });

  const a = await browser.newContext({ viewport: WIDTHS.desktop });
  const b = await browser.newContext({ viewport: WIDTHS.phone });
  const pa = await a.newPage();
  const pb = await b.newPage();
  await signInWithPassword(pa, h.url, "cai", PASSWORD);
  await pa.waitForURL(`${h.url}/`);
  await signInWithPassword(pb, h.url, "cai", PASSWORD);
  await pb.waitForURL(`${h.url}/`);

  // Both browsers are listed, this one marked; the other is signed out from here.
  await pa.goto(`${h.url}/account`);
  const rows = pa.locator("table").first().locator("tbody tr");
  await expect(rows.count()).resolves.toBe(2);
  await expect(rows.filter({ hasText: "(this browser)" }).count()).resolves.toBe(1);
  expect(await rows.first().textContent()).toContain("Headless Chrome on Linux");
  await rows.filter({ hasNotText: "(this browser)" }).getByRole("button", { name: /^Sign out / }).click();
  await pa.waitForURL(`${h.url}/account?done=signed-out#sessions`);
  await expect(pa.locator("table").first().locator("tbody tr").count()).resolves.toBe(1);
  await pb.goto(`${h.url}/account`);
  await pb.waitForURL(/\/signin\?next=\/account$/);

  // Signed in again on the second browser; the first changes the password.
  await signInWithPassword(pb, h.url, "cai", PASSWORD);
  await pb.waitForURL(`${h.url}/`);
  await pa.getByLabel("Current password").fill("not the password");
  await pa.getByLabel("New password").fill(NEW_PASSWORD);
  await pa.getByRole("button", { name: "Change password" }).click();
  await pa.getByRole("alert").filter({ hasText: "the current password is wrong" }).first().waitFor();
  await pa.getByLabel("Current password").fill(PASSWORD);
  await pa.getByLabel("New password").fill(NEW_PASSWORD);
  await pa.getByRole("button", { name: "Change password" }).click();
  await pa.waitForURL(`${h.url}/account?done=password#password`);
  expect(await pa.getByRole("status").first().textContent()).toContain("Your password is changed");
  expect(await header(pa)).toContain("Signed in as cai");

  // The second browser is signed out; the old password no longer works, the new one does.
  await pb.goto(`${h.url}/account`);
  await pb.waitForURL(/\/signin\?next=\/account$/);
  await signInWithPassword(pb, h.url, "cai", PASSWORD);
  await pb.getByRole("alert").filter({ hasText: "the username or password is wrong" }).first().waitFor();
  await signInWithPassword(pb, h.url, "cai", NEW_PASSWORD);
  await pb.waitForURL(`${h.url}/`);
  expect(await header(pb)).toContain("Signed in as cai");
  await a.close();
  await b.close();
});
