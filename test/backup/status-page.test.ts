// one store: what /status shows; scheduled backups run on both stores in test/backup (schedule, postgres)
// What an admin sees of scheduled backups on /status, in Chromium: the
// schedule, where they go, the last success and the newer failure with its
// reason. The page passes axe in light and dark at a phone's and a desktop's
// width, and each view is left in test/artifacts/ to be looked at.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { generateX25519Identity, identityToRecipient } from "age-encryption";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { backupsOf } from "../../core/backup/schedule.ts";
import { chromiumPresent, everyLook, launchChromium } from "../browser.ts";
import { TestClock, type Hearth } from "../harness.ts";
import { signUp, startFront, startProviders, type Person } from "../front/instance.ts";

const ARTIFACTS = join(import.meta.dir, "..", "artifacts");
const WIDTHS = { phone: { width: 390, height: 844 }, desktop: { width: 1280, height: 900 } };

const shared = startProviders();
const scratch = mkdtempSync(join(tmpdir(), "hearth-backup-status-"));
const dest = join(scratch, "backups");
const clock = new TestClock(Date.parse("2026-03-01T02:00:00Z"));
let browser: Browser | undefined;
let h: Hearth;
let admin: Person;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  const recipient = await identityToRecipient(await generateX25519Identity());
  h = await startFront(shared.url, { HEARTH_TZ: "UTC", HEARTH_BACKUP: "on", HEARTH_BACKUP_TO: dest, HEARTH_BACKUP_RECIPIENTS: recipient }, { clock });
  admin = await signUp(h.url, "ann");
  clock.set("2026-03-01T03:00:00Z");
  expect(await backupsOf(h.rt).runDue()).toMatchObject({ verified: true });
  // The backup disk is gone the next night: a file stands where the folder was.
  rmSync(dest, { recursive: true });
  writeFileSync(dest, "not a folder");
  clock.set("2026-03-02T03:00:00Z");
  expect(await backupsOf(h.rt).runDue()).toMatchObject({ reason: expect.stringContaining("cannot write the backup") });
  if (chromiumPresent) browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await h.stop();
  shared.stop();
  rmSync(scratch, { recursive: true, force: true });
});

test("an admin sees on /status when backups last worked and why the newer one failed, as JSON and as a page", async () => {
  const s = (await (await fetch(`${h.url}/status`, { headers: { accept: "application/json", cookie: admin.cookie } })).json()).result.backups;
  expect(s).toMatchObject({
    enabled: true,
    destination: dest,
    last_success: { at: "2026-03-01T03:00:00.000Z", verified: true, name: "hearth-20260301T030000Z.tar.age" },
    last_failure: { at: "2026-03-02T03:00:00.000Z", reason: expect.stringContaining(dest) },
    next: "2026-03-03T03:00:00.000Z",
  });
  const page = await (await fetch(`${h.url}/status`, { headers: { accept: "text/html", cookie: admin.cookie } })).text();
  expect(page).toContain("2026-03-01 03:00:00 UTC");
  expect(page).toMatch(/<span class="bad">2026-03-02 03:00:00 UTC<\/span>/);
  expect(page).toContain("cannot write the backup to");
});

test.skipIf(!chromiumPresent)("the backups section passes axe in light and dark at 390 and 1280 px", async () => {
  const [name, value] = admin.cookie.split("=");
  const ctx = await browser!.newContext({ bypassCSP: true, viewport: WIDTHS.desktop });
  await ctx.addCookies([{ name, value, url: h.url }]);
  const heading = (p: Page) => p.getByRole("heading", { name: "Backups" });
  const found = await everyLook(
    await ctx.newPage(),
    h.url,
    [
      { name: "status-backups", path: "/status", ready: (p) => heading(p).waitFor() },
      { name: "status-backups-section", path: "/status", ready: (p) => heading(p).waitFor(), each: (p) => heading(p).scrollIntoViewIfNeeded() },
    ],
    { shots: ARTIFACTS },
  );
  await ctx.close();
  expect(found).toEqual({});
});
