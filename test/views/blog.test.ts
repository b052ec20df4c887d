// one store: the Posts screen; posts, publishing and Undo run on both stores in test/blog
// The blog's Posts screen in Chromium, as a person uses it: a post written in
// Markdown, previewed, published and read on /blog by someone not signed in;
// edited, and deleted with its page gone, then brought back with Undo. The
// screen passes axe in light and dark at a laptop's and a phone's width
// (screenshots in test/artifacts/views, or $HEARTH_SHOTS).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { signUp, type Signed } from "../auth/people.ts";
import { chromiumPresent, everyLook, launchChromium, sawToast } from "../browser.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { signedIn, type SignedInOptions } from "./signed-in.ts";

const SHOTS = process.env.HEARTH_SHOTS ?? join(import.meta.dir, "..", "artifacts", "views");
const store = () => (process.env.HEARTH_TEST_DB === "pg" ? "pg" : "sqlite");

let h: Hearth;
let browser: Browser;
let erin: Signed;
let token: string;

beforeAll(async () => {
  if (!chromiumPresent) return;
  mkdirSync(SHOTS, { recursive: true });
  h = await startHearth({ env: { HEARTH_SIGNUP: "open", HEARTH_METERING: "off", HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0" } });
  erin = await signUp(h, "erin");
  token = await h.token("erin");
  browser = await launchChromium();
});
afterAll(async () => {
  if (!chromiumPresent) return;
  await browser?.close();
  await h?.stop();
});

const open = (o: SignedInOptions = {}) => signedIn(browser, h.url, erin, o);

const TEXT = "The *tomatoes* came in early this year, and the beans followed a week after.";

test.skipIf(!chromiumPresent)("a post is written, previewed, published and read on /blog; edited; deleted and brought back with Undo", async () => {
  const { context, page, problems } = await open();
  await page.goto(`${h.url}/my/blog/posts`);
  await page.getByRole("button", { name: "New post" }).click();
  await page.fill("#post-title", "Early tomatoes");
  await page.fill("#post-text", "Too short.");
  expect(await page.getByRole("button", { name: "Publish" }).isDisabled()).toBe(true);
  await page.fill("#post-text", TEXT);
  await page.fill("#post-tags", "garden");
  await page.getByRole("tab", { name: "Preview" }).click();
  await page.locator(".prose em", { hasText: "tomatoes" }).waitFor();
  await page.getByRole("tab", { name: "Write" }).click();
  await page.getByRole("button", { name: "Publish" }).click();
  await sawToast(page, "Published “Early tomatoes”");
  await page.waitForURL(/open=/);

  const index = await (await fetch(`${h.url}/blog`)).text();
  expect(index).toContain("Early tomatoes");
  const url = (await page.getByRole("link", { name: "Its page" }).getAttribute("href"))!;
  const stranger = await fetch(url);
  expect(stranger.status).toBe(200);
  expect(await stranger.text()).toContain("<em>tomatoes</em>");

  // Edited: the page changes once saved.
  await page.fill("#post-text", `${TEXT} The squash is late.`);
  await page.getByRole("button", { name: "Save changes" }).click();
  await sawToast(page, "Saved");
  expect(await (await fetch(url)).text()).toContain("The squash is late.");

  // Deleted: the page is gone; Undo publishes it again.
  await page.getByRole("button", { name: "Delete" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
  await page.locator(".toast", { hasText: "Deleted “Early tomatoes”" }).waitFor();
  expect((await fetch(url)).status).toBe(404);
  await page.locator(".toast").getByRole("button", { name: "Undo" }).click();
  await page.waitForURL(/open=/);
  await page.locator("#post-title").waitFor();
  expect(await page.inputValue("#post-text")).toContain("The squash is late.");
  expect((await h.call("blog/list", {}, { token })).body.result.map((p: { title: string }) => p.title)).toEqual(["Early tomatoes"]);
  expect(problems).toEqual([]);
  await context.close();
});

test.skipIf(!chromiumPresent)("the Posts screen passes axe in light and dark at 1280 and 390 px; screenshots for a look", async () => {
  const made = await h.call("blog/create", { title: "Seed swap", content: "# Seed swap\n\nBring what you saved last autumn; **labelled**, please. Tea provided.", tags: "garden" }, { token });
  const id = made.body.result.id;
  const found: Record<string, unknown> = {};
  const pages: [string, string, (p: Page) => Promise<unknown>][] = [
    ["posts-list", "/my/blog/posts", (p) => p.locator(".search-list .item").first().waitFor()],
    ["posts-edit", `/my/blog/posts?open=${id}`, (p) => p.locator("#post-text").waitFor()],
    ["posts-new", "/my/blog/posts?new=1", (p) => p.locator("#post-title").waitFor()],
  ];
  const { context, page } = await open({ bypassCSP: true });
  Object.assign(found, await everyLook(page, h.url, pages.map(([name, path, ready]) => ({ name, path, ready })), { shots: SHOTS, suffix: `-${store()}` }));
  await context.close();
  expect(found).toEqual({});
});
