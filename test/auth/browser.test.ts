// one store: the /token page in a browser; tokens and their revocation run on both stores in test/auth/tokens.test.ts
// A real browser, as a person uses the instance: sign up, open /token, make a
// token scoped to notes, read it off the page, use it with fetch, revoke it,
// and see the next call refused.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { startHearth, type Hearth } from "../harness.ts";
import { launchChromium, chromiumPresent } from "../browser.ts";
import { CHROMIUM } from "../prepare.ts";

const present = chromiumPresent;
if (!present) console.log(`skipping the browser test: ${CHROMIUM} is missing (bun test/prepare.ts installs it as root)`);

let h: Hearth;
let browser: Browser;

beforeAll(async () => {
  if (!present) return;
  h = await startHearth();
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await h?.stop();
});

test.skipIf(!present)(
  "sign up, make a notes token on /token, use it with fetch, revoke it",
  async () => {
    const page = await browser.newPage();
    await page.goto(`${h.url}/token`);
    // Not signed in: sent to sign in, and from there to sign up.
    expect(new URL(page.url()).pathname).toBe("/signin");
    await page.getByRole("link", { name: "Sign up" }).last().click();
    await page.getByLabel("Username").fill("alice");
    await page.getByLabel("Password").fill("a long passphrase");
    await page.getByRole("button", { name: "Create account" }).click();
    // The first account is the admin's: it lands on the first-run choices.
    await page.waitForURL(`${h.url}/setup`);
    expect(await page.locator("header").textContent()).toContain("Signed in as alice");
    await page.goto(`${h.url}/token`);

    await page.getByLabel("Name").fill("browser test");
    await page.getByLabel("Only the services ticked here:").check();
    await page.getByRole("checkbox", { name: "notes", exact: true }).check();
    await page.getByLabel("Expires after").selectOption("7");
    await page.getByRole("button", { name: "Create token" }).click();
    const token = (await page.locator("#new-token").textContent())!.trim();
    expect(token).toStartWith("hth_");

    const call = (path: string, init: { method: string; body?: string }) =>
      page.evaluate(
        async ([path, init, token]) => {
          const res = await fetch(path, {
            method: init.method,
            body: init.body,
            credentials: "omit",
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          });
          return { status: res.status, body: await res.json() };
        },
        [path, init, token] as const,
      );

    const added = await call("/api/v1/notes/add", { method: "POST", body: JSON.stringify({ title: "from the browser", text: "it works" }) });
    expect(added.status).toBe(200);
    const read = await call("/api/v1/notes/get?title=from%20the%20browser", { method: "GET" });
    expect(read).toEqual({ status: 200, body: { result: expect.objectContaining({ title: "from the browser", text: "it works" }) } });
    const outOfScope = await call("/api/v1/tasks/list", { method: "GET" });
    expect(outOfScope.status).toBe(403);

    await page.goto(`${h.url}/token`);
    await expect(page.locator("#new-token").count()).resolves.toBe(0);
    await page.getByRole("button", { name: "Revoke browser test" }).click();
    await page.waitForURL(`${h.url}/token?done=revoked`);
    const refused = await call("/api/v1/notes/get?title=from%20the%20browser", { method: "GET" });
    expect(refused.status).toBe(401);
    expect(refused.body.error.kind).toBe("unauthenticated");
    await page.close();
  },
);
