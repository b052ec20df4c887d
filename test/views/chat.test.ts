// one store: the Chat screen; rooms and their live stream run on both stores in test/chat
// The Chat screen in Chromium: a room started by its first message, another
// person's message arriving while it is open (the room's live stream), and
// axe in light and dark at 1280 and 390 px (screenshots in
// test/artifacts/views, or $HEARTH_SHOTS).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { signUp, type Signed } from "../auth/people.ts";
import { chromiumPresent, everyLook, launchChromium } from "../browser.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { signedIn, type SignedInOptions } from "./signed-in.ts";

const SHOTS = process.env.HEARTH_SHOTS ?? join(import.meta.dir, "..", "artifacts", "views");
const store = () => (process.env.HEARTH_TEST_DB === "pg" ? "pg" : "sqlite");

let h: Hearth;
let browser: Browser;
let erin: Signed;
let ada: string;

beforeAll(async () => {
  if (!chromiumPresent) return;
  mkdirSync(SHOTS, { recursive: true });
  h = await startHearth({ env: { HEARTH_SIGNUP: "open", HEARTH_METERING: "off", HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0" } });
  erin = await signUp(h, "erin");
  ada = await h.token("ada");
  browser = await launchChromium();
});
afterAll(async () => {
  if (!chromiumPresent) return;
  await browser?.close();
  await h?.stop();
});

const open = (o: SignedInOptions = {}) => signedIn(browser, h.url, erin, o);

test.skipIf(!chromiumPresent)("a room is started by its first message, and another person's message appears while it is open", async () => {
  const { context, page, problems } = await open();
  await page.goto(`${h.url}/my/chat`);
  await page.fill("#chat-room-name", "Allotment");
  await page.getByRole("button", { name: "Open" }).click();
  await page.waitForURL(/room=allotment/);
  await page.fill("#chat-text", "Who has the shed key?");
  await page.press("#chat-text", "Enter");
  await page.locator(".chat-log li", { hasText: "Who has the shed key?" }).waitFor();
  expect(await page.inputValue("#chat-text")).toBe("");
  expect((await h.call("chat/send", { room: "allotment", content: "I do, by the gate." }, { token: ada })).status).toBe(200);
  await page.locator(".chat-log li", { hasText: "I do, by the gate." }).waitFor();
  expect(await page.locator(".chat-log li .who", { hasText: "ada" }).count()).toBe(1);
  expect(problems).toEqual([]);
  await context.close();
});

test.skipIf(!chromiumPresent)("the Chat screen passes axe in light and dark at 1280 and 390 px; screenshots for a look", async () => {
  await h.call("chat/send", { room: "general", content: "Morning all. Frost tonight, cover the dahlias." }, { token: ada });
  const found: Record<string, unknown> = {};
  const pages: [string, string, (p: Page) => Promise<unknown>][] = [
    ["chat-rooms", "/my/chat", (p) => p.locator(".search-list .item").first().waitFor()],
    ["chat-room", "/my/chat?room=general", (p) => p.locator(".chat-log li").first().waitFor()],
  ];
  const { context, page } = await open({ bypassCSP: true });
  Object.assign(found, await everyLook(page, h.url, pages.map(([name, path, ready]) => ({ name, path, ready })), { shots: SHOTS, suffix: `-${store()}` }));
  await context.close();
  expect(found).toEqual({});
});
