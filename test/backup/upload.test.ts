// one store: the upload on /settings/restore in a browser; what is checked of the file, and the restore, run on both stores in test/backup/restore-page.test.ts and restore-now.test.ts
// A backup uploaded on /settings/restore is written to the data folder's
// work area as it arrives, with its size cap said before the upload and a
// progress bar while it goes; a file over the cap is refused before a byte
// is sent, and an upload stopped halfway leaves nothing behind. axe finds
// nothing on the page, light and dark, at 1280 and 390 px.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { backupsOf } from "../../core/backup/schedule.ts";
import { chromiumPresent, everyLook, launchChromium } from "../browser.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { signUp } from "../auth/people.ts";

const SHOTS = join(import.meta.dir, "..", "artifacts", "admin");
const folder = mkdtempSync(join(tmpdir(), "hearth-upload-"));
let h: Hearth;
let browser: Browser;

beforeAll(async () => {
  if (!chromiumPresent) return;
  h = await startHearth({ env: { HEARTH_METERING: "off", HEARTH_RATE_SIGNIN: "0", HEARTH_BACKUP: "on", HEARTH_BACKUP_TO: join(folder, "backups"), HEARTH_BACKUP_PASSPHRASE: "kept by the owner" } });
  browser = await launchChromium();
  mkdirSync(SHOTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await h?.stop();
  rmSync(folder, { recursive: true, force: true });
});

/** What the work area holds of uploads being received. */
const receiving = () => {
  const work = join(h.dir, ".restore");
  return existsSync(work) ? readdirSync(work).filter((n) => n.startsWith("upload-")) : [];
};

async function signedIn(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
  const page = await context.newPage();
  await page.goto(`${h.url}/signin`);
  await page.getByLabel("Username").fill("alice");
  await page.getByLabel("Password").fill("a long passphrase");
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.waitForURL(`${h.url}/`);
  return page;
}

test.skipIf(!chromiumPresent)("uploaded with a progress bar, checked; over the cap refused before sending; stopped halfway, nothing is left", async () => {
  await signUp(h, "alice");
  const b = (await backupsOf(h.rt).runNow()) as { name: string; file?: string };
  const backup = join(folder, "backups", b.name);
  const page = await signedIn();
  await page.goto(`${h.url}/settings/restore`);
  // The cap is said before anything is chosen.
  await page.getByText(/^Up to \d+(\.\d)? MB\. A larger backup/).waitFor();
  const found = await everyLook(page, h.url, [{ name: "restore-upload", path: "/settings/restore", ready: (p) => p.getByLabel("Or upload a file").waitFor() }], { shots: SHOTS });
  expect(found).toEqual({});

  // The good one, uploaded: the page opens again at its confirmation.
  await page.getByLabel("Or upload a file").setInputFiles(backup);
  await page.getByRole("button", { name: "Check the backup" }).click();
  await page.getByRole("heading", { name: "Checked: restore this backup?" }).waitFor();
  expect(receiving()).toEqual([]);
  await page.getByRole("button", { name: "Cancel", exact: true }).click();
  await page.getByText("Cancelled: no backup is waiting").waitFor();

  // Over the cap (the page's, made small here): said at once, and nothing is sent.
  let posted = 0;
  page.on("request", (r) => {
    if (r.method() === "POST") posted++;
  });
  await page.evaluate(() => ((document.getElementById("r-check") as HTMLFormElement).dataset.max = "1000"));
  await page.getByLabel("Or upload a file").setInputFiles(backup);
  await page.getByRole("alert").filter({ hasText: "more than this page takes" }).waitFor();
  await page.getByRole("button", { name: "Check the backup" }).click();
  expect(posted).toBe(0);

  // Stopped halfway: a large file sent slowly, stopped once the server has begun to keep it; what arrived is removed.
  await page.reload();
  const big = join(folder, "big.tar.age");
  writeFileSync(big, crypto.getRandomValues(new Uint8Array(4 * 1024 * 1024)));
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Network.enable");
  await cdp.send("Network.emulateNetworkConditions", { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 256 * 1024 });
  await page.getByLabel("Or upload a file").setInputFiles(big);
  await page.getByRole("button", { name: "Check the backup" }).click();
  await page.getByText(/^Sent [\d.]+ [KM]B of 4\.0 MB\.$/).waitFor();
  await page.locator("#r-upload").screenshot({ path: join(SHOTS, "restore-upload-progress-desktop-light.png") });
  while (!receiving().length) await Bun.sleep(50);
  await page.getByRole("button", { name: "Stop the upload" }).click();
  await page.getByRole("alert").filter({ hasText: "Upload stopped" }).waitFor();
  while (receiving().length) await Bun.sleep(50);
  expect((await fetch(`${h.url}/health`)).status).toBe(200);
  await page.context().close();
});
