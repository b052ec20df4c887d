// one store: the Files screen; uploads, downloads and previews on disk and S3 run in test/files (large.test.ts, backends.test.ts)
// The Files screen in Chromium: a 20 MB file dropped on the page uploads with
// a progress bar and downloads byte for byte; an image and a PDF uploaded by
// the picker are previewed, Markdown is rendered; a file is deleted (with Undo); and axe
// in light and dark at a laptop's and a phone's width (screenshots in
// test/artifacts/views, or $HEARTH_SHOTS).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { signUp, type Signed } from "../auth/people.ts";
import { chromiumPresent, everyLook, launchChromium, sawToast } from "../browser.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { signedIn, WIDTHS, type SignedInOptions } from "./signed-in.ts";

const SHOTS = process.env.HEARTH_SHOTS ?? join(import.meta.dir, "..", "artifacts", "views");
const ENV = { HEARTH_SIGNUP: "open", HEARTH_METERING: "off", HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0" };
const store = () => (process.env.HEARTH_TEST_DB === "pg" ? "pg" : "sqlite");
const BIG = 20 * 1024 * 1024;
/** The dropped file's bytes: the same pattern made in the page and here. */
const pattern = (n: number) => {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + (i >> 11)) & 255;
  return b;
};
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAYAAABytg0kAAAAFElEQVR4nGP8z8DwnwEJMDKgCQAAOhwD/UjbkPoAAAAASUVORK5CYII=", "base64");
const PDF = Buffer.from("%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj 2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj 3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n");

let h: Hearth;
let browser: Browser;
let erin: Signed;
let token: string;

beforeAll(async () => {
  if (!chromiumPresent) return;
  mkdirSync(SHOTS, { recursive: true });
  h = await startHearth({ env: ENV });
  erin = await signUp(h, "erin");
  token = await h.token("erin");
  browser = await launchChromium();
});
afterAll(async () => {
  if (!chromiumPresent) return;
  await browser?.close();
  await h?.stop();
});

// The app's worker is left out: the screens' own test covers it, and here each visit should reach the server.
const open = (o: SignedInOptions = {}) => signedIn(browser, h.url, erin, { serviceWorkers: "block", ...o });

test.skipIf(!chromiumPresent)("a 20 MB file dropped on the page uploads with a progress bar and downloads byte for byte", async () => {
  const { context, page, problems } = await open();
  await page.goto(`${h.url}/my/files`);
  await page.locator(".drop-hint").waitFor();
  // The page notes every progress value it shows, so the test sees the bar move without timing it; the notices it
  // shows are noted for every page by the browser helper (sawToast), since one goes after six seconds.
  await page.evaluate(() => {
    const w = window as unknown as { seen: number[] };
    w.seen = [];
    new MutationObserver(() => document.querySelectorAll("progress").forEach((p) => w.seen.push(Number(p.value)))).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
  });
  await page.evaluate((n) => {
    const b = new Uint8Array(n);
    for (let i = 0; i < n; i++) b[i] = (i * 31 + (i >> 11)) & 255;
    const dt = new DataTransfer();
    dt.items.add(new File([b], "big.bin", { type: "application/octet-stream" }));
    const target = document.querySelector(".pane.list")!;
    target.dispatchEvent(new DragEvent("dragover", { dataTransfer: dt, bubbles: true, cancelable: true }));
    target.dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, BIG);
  // Done, or refused: an upload that failed says why in the list, and the test says it too instead of waiting on.
  await page.waitForFunction(() => ((window as unknown as { __toasts?: string[] }).__toasts ?? []).some((t) => t.includes("Uploaded “big.bin”")) || document.querySelector(".uploads .bad"), null, { polling: 100 });
  expect(await page.locator(".uploads li").allTextContents()).toEqual([]);
  const seen = await page.evaluate(() => (window as unknown as { seen: number[] }).seen);
  expect(seen.length).toBeGreaterThan(0);
  await page.waitForURL(/open=/);
  await page.getByRole("heading", { name: "big.bin" }).waitFor();
  const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Download" }).click()]);
  expect(download.suggestedFilename()).toBe("big.bin");
  const got = readFileSync((await download.path())!);
  expect(got.length).toBe(BIG);
  expect(Buffer.compare(got, Buffer.from(pattern(BIG)))).toBe(0);
  expect(problems).toEqual([]);
  await context.close();
});

test.skipIf(!chromiumPresent)("an image and a PDF chosen with the picker are previewed, Markdown is rendered, and a file is deleted", async () => {
  const { context, page, problems } = await open({ size: WIDTHS.phone });
  await page.goto(`${h.url}/my/files`);
  await page.locator(".drop-hint").waitFor();
  await page.setInputFiles("input[type=file]", [{ name: "dot.png", mimeType: "image/png", buffer: PNG }]);
  const img = page.getByRole("img", { name: "Preview of dot.png" });
  await img.waitFor();
  await page.waitForFunction(() => (document.querySelector(".file-preview img") as HTMLImageElement | null)?.naturalWidth === 2);
  await page.getByRole("button", { name: "← All files" }).click();
  await page.setInputFiles("input[type=file]", [{ name: "form.pdf", mimeType: "application/pdf", buffer: PDF }]);
  // A PDF opens in the browser's own viewer: its link gives the file inline, as a PDF.
  const link = page.getByRole("link", { name: "Read “form.pdf” in the browser’s PDF viewer" });
  await link.waitFor();
  const pdf = await fetch((await link.getAttribute("href"))!, { headers: { cookie: erin.cookie } });
  expect(pdf.headers.get("content-type")).toContain("application/pdf");
  expect(pdf.headers.get("content-disposition")).toStartWith("inline");
  expect(Buffer.from(await pdf.arrayBuffer()).equals(PDF)).toBe(true);
  await page.getByRole("button", { name: "← All files" }).click();
  await page.setInputFiles("input[type=file]", [{ name: "plan.md", mimeType: "text/markdown", buffer: Buffer.from("# Plan\n\nDig the *beds*.") }]);
  await page.locator(".file-preview em", { hasText: "beds" }).waitFor();

  await page.getByRole("button", { name: "Delete" }).click();
  await sawToast(page, "Deleted “plan.md”");
  const names = (await h.call("files/list", {}, { token })).body.result.map((f: { name: string }) => f.name);
  expect(names).not.toContain("plan.md");
  expect(names).toContain("form.pdf");
  expect(problems).toEqual([]);
  await context.close();
});

test.skipIf(!chromiumPresent)("the Files screen passes axe in light and dark at 1280 and 390 px; screenshots for a look", async () => {
  const png = (await h.call("files/put", { name: "look.png", content: PNG.toString("base64"), encoding: "base64" }, { token })).body.result;
  const found: Record<string, unknown> = {};
  const pages: [string, string, (p: Page) => Promise<unknown>][] = [
    ["files-list", "/my/files", (p) => p.locator(".search-list .item").first().waitFor()],
    ["file-image", `/my/files?open=${png.id}`, (p) => p.waitForFunction(() => (document.querySelector(".file-preview img") as HTMLImageElement | null)?.complete)],
  ];
  const { context, page } = await open({ bypassCSP: true });
  Object.assign(found, await everyLook(page, h.url, pages.map(([name, path, ready]) => ({ name, path, ready })), { shots: SHOTS, suffix: `-${store()}` }));
  await context.close();
  expect(found).toEqual({});
});
