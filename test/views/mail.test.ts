// one store: the Mail screen; receiving, threading and sending run on both stores in test/mail
// The Mail screen in Chromium, as a person uses it: a message from outside
// arrives over SMTP, is read as plain text (its markup shown, never run), and
// answered from the screen; the reply leaves through a loopback relay in the
// thread of the message it answers. The screen passes axe in light and dark
// at a laptop's and a phone's width (screenshots in test/artifacts/views, or
// $HEARTH_SHOTS).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import nodemailer from "nodemailer";
import type { Browser, Page } from "playwright-core";
import { mailOf } from "../../core/mail/index.ts";
import { signUp, type Signed } from "../auth/people.ts";
import { chromiumPresent, everyLook, launchChromium, sawToast } from "../browser.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { startDns } from "../mail/dns.ts";
import { startSink } from "../mail/sink.ts";
import { signedIn, WIDTHS, type SignedInOptions } from "./signed-in.ts";

const SHOTS = process.env.HEARTH_SHOTS ?? join(import.meta.dir, "..", "artifacts", "views");
const store = () => (process.env.HEARTH_TEST_DB === "pg" ? "pg" : "sqlite");

let h: Hearth;
let browser: Browser;
let erin: Signed;
let token: string;
let dns: Awaited<ReturnType<typeof startDns>>;
let relay: Awaited<ReturnType<typeof startSink>>;

beforeAll(async () => {
  if (!chromiumPresent) return;
  mkdirSync(SHOTS, { recursive: true });
  dns = await startDns();
  relay = await startSink();
  h = await startHearth({
    env: {
      HEARTH_SIGNUP: "open",
      HEARTH_METERING: "off",
      HEARTH_RATE_READS: "0",
      HEARTH_RATE_WRITES: "0",
      MAIL_DOMAIN: "example.test",
      SMTP_PORT: "0",
      SMTP_HOST: "127.0.0.1",
      SMTP_RELAY_URL: `smtp://127.0.0.1:${relay.port}`,
      MAIL_DNS: dns.server,
    },
  });
  erin = await signUp(h, "erin");
  token = await h.token("erin");
  browser = await launchChromium();
});
afterAll(async () => {
  if (!chromiumPresent) return;
  await browser?.close();
  await h?.stop();
  await relay?.stop();
  dns?.stop();
});

const open = (o: SignedInOptions = {}) => signedIn(browser, h.url, erin, o);

/** Mail from another domain's server, as it would arrive. */
async function arrive(subject: string, text: string, to = "erin@example.test") {
  const port = mailOf(h.rt).inbound.port!;
  await nodemailer.createTransport({ host: "127.0.0.1", port, secure: false, name: "mx.sender.test", tls: { rejectUnauthorized: false } }).sendMail({
    from: "Carol <carol@sender.test>",
    to,
    subject,
    text,
  });
}

test.skipIf(!chromiumPresent)("a message from outside is read as plain text and answered; the reply leaves through the relay in its thread", async () => {
  await arrive("Jam for the fair", 'Could you bring <img src="http://127.0.0.1:9/x.png" onerror="alert(1)"> two jars?\n\nCarol');
  const [got] = (await h.call("mail/inbox", { limit: 1 }, { token })).body.result;
  const { context, page, problems } = await open();
  await page.goto(`${h.url}/my/mail`);
  await page.locator(".search-list .item", { hasText: "Jam for the fair" }).click();
  await page.waitForURL(new RegExp(`open=${got.id}`));
  // The markup in the text is shown as text: no image is made, nothing runs.
  await page.locator(".mail-body", { hasText: '<img src="http://127.0.0.1:9/x.png"' }).waitFor();
  expect(await page.locator(".mail-body img").count()).toBe(0);

  await page.getByRole("button", { name: "Reply" }).click();
  expect(await page.inputValue("#mail-to")).toBe("carol@sender.test");
  expect(await page.inputValue("#mail-subject")).toBe("Re: Jam for the fair");
  expect(await page.inputValue("#mail-body")).toContain("> Could you bring");
  await page.locator("#mail-body").press("Control+Home");
  await page.keyboard.type("Two jars it is.");
  await page.getByRole("button", { name: "Send" }).click();
  await sawToast(page, "carol@sender.test");

  const wire = await relay.next();
  expect(wire.to).toEqual(["carol@sender.test"]);
  expect(wire.from).toBe("erin@example.test");
  expect(wire.raw).toContain(`In-Reply-To: <${got.message_id}>`);
  expect(wire.raw).toContain("Two jars it is.");
  expect(problems).toEqual([]);
  await context.close();
});

test.skipIf(!chromiumPresent)("on a phone the inbox gives way to the message; a refusal is shown beside the form, and c writes a new one", async () => {
  await arrive("Seed swap", "Saturday at ten.");
  const { context, page, problems } = await open({ size: WIDTHS.phone });
  await page.goto(`${h.url}/my/mail`);
  await page.locator(".search-list .item", { hasText: "Seed swap" }).click();
  await page.locator(".mail-body", { hasText: "Saturday at ten." }).waitFor();
  expect(await page.locator(".pane.list").isVisible()).toBe(false);
  await page.getByRole("button", { name: "← Inbox" }).click();
  await page.locator(".pane.list").waitFor({ state: "visible" });

  await page.keyboard.press("c");
  await page.locator("#mail-to").waitFor();
  await page.fill("#mail-to", "nobody-here");
  await page.fill("#mail-subject", "Hello");
  await page.getByRole("button", { name: "Send" }).click();
  await page.locator(".compose .alert").waitFor();
  expect(await page.inputValue("#mail-to")).toBe("nobody-here");
  expect(problems).toEqual([]);
  await context.close();
});

test.skipIf(!chromiumPresent)("the Mail screen passes axe in light and dark at 1280 and 390 px; screenshots for a look", async () => {
  await arrive("Allotment rota", "You are on watering duty next week.\n\nThanks!", "erin+garden@example.test");
  const [m] = (await h.call("mail/inbox", { limit: 1 }, { token })).body.result;
  const found: Record<string, unknown> = {};
  const pages: [string, string, (p: Page) => Promise<unknown>][] = [
    ["mail-list", "/my/mail", (p) => p.locator(".search-list .item").first().waitFor()],
    ["mail-read", `/my/mail?open=${m.id}`, (p) => p.locator(".mail-body").waitFor()],
    ["mail-reply", `/my/mail?reply=${m.id}`, (p) => p.locator("#mail-body").waitFor()],
  ];
  const { context, page } = await open({ bypassCSP: true });
  Object.assign(found, await everyLook(page, h.url, pages.map(([name, path, ready]) => ({ name, path, ready })), { shots: SHOTS, suffix: `-${store()}` }));
  await context.close();
  expect(found).toEqual({});
});
