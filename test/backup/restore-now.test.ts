// A restore confirmed in the browser takes effect at once: a real `hearth
// serve` process, its data folder a read-only parent's mount point as in the
// container, restores a backup chosen on /settings/restore in Chromium and
// answers from the restored data without anyone restarting it; the admin,
// whose session the backup does not hold, signs in again and is told how it
// went. A backup damaged after it was checked fails to restore: the data is
// as it was, the instance up, the page saying why.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { chromiumPresent, everyLook, launchChromium } from "../browser.ts";
import { storeEnv, type Hearth } from "../harness.ts";
import { call, cli, serve, type Served } from "../hardening/process.ts";
import { signUp } from "../auth/people.ts";
import { asMounted, mountsPossible } from "./mounted.ts";

const SHOTS = join(import.meta.dir, "..", "artifacts", "admin");
const home = mkdtempSync(join(tmpdir(), "hearth-restorenow-"));
const data = join(home, "data");
const dest = join(home, "backups");
let env: Record<string, string>;
let s: Served;
let browser: Browser;

beforeAll(async () => {
  if (!chromiumPresent) return;
  mkdirSync(data, { recursive: true });
  mkdirSync(SHOTS, { recursive: true });
  env = {
    ...(await storeEnv(data)),
    HEARTH_DATA: data,
    HEARTH_SIGNUP: "open",
    HEARTH_RATE_SIGNIN: "0",
    HEARTH_METERING: "off",
    HEARTH_BACKUP: "on",
    HEARTH_BACKUP_TO: dest,
    HEARTH_BACKUP_PASSPHRASE: "the owner's passphrase",
  };
  s = await serve(data, env, { prefix: mountsPossible ? asMounted(data, home) : [] });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
  rmSync(home, { recursive: true, force: true });
});

async function signInPage(page: Page, base: string) {
  await page.goto(`${base}/signin?next=/settings/restore`);
  await page.getByLabel("Username").fill("alice");
  await page.getByLabel("Password").fill("a long passphrase");
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.waitForURL(`${base}/settings/restore`);
}

/** Checks the only backup listed, in the browser, until the page asks to confirm. */
async function checkListed(page: Page, name: string) {
  await page.goto(`${s.url}/settings/restore`);
  await page.getByLabel(/^From /).selectOption(name);
  await page.getByRole("button", { name: "Check the backup" }).click();
  await page.getByRole("heading", { name: "Checked: restore this backup?" }).waitFor();
}

test.skipIf(!chromiumPresent)("confirmed in the browser, a backup is restored at once and the same process answers from it; a damaged one changes nothing", async () => {
  const h = { url: s.url } as Hearth;
  await signUp(h, "alice");
  const token = (await cli(["token", "create", "--user", "alice"], env)).out;
  expect((await call(s.url, "notes/add", { title: "kept", text: "in the backup" }, token)).status).toBe(200);
  const made = await cli(["backup", "--now"], env);
  expect(made.code).toBe(0);
  const name = JSON.parse(made.out).name as string;
  // Written after the backup: gone once it is restored.
  expect((await call(s.url, "notes/add", { title: "later", text: "after the backup" }, token)).status).toBe(200);

  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
  const page = await context.newPage();
  // Signed in after the backup was made: the restored data does not hold this session.
  await signInPage(page, s.url);
  await checkListed(page, name);
  await page.getByText("restored at once").waitFor();
  // Every answer the browser got for the page while it was away, to see that it was told to come back.
  const answers: number[] = [];
  page.on("response", (r) => {
    if (new URL(r.url()).pathname === "/settings/restore" && r.request().method() === "GET") answers.push(r.status());
  });
  await page.getByRole("button", { name: "Replace this instance's data now" }).click();
  // Back on the restored data, which does not know this browser's session: sign in again, and the page says how it went.
  await page.waitForURL(/\/signin/);
  await signInPage(page, s.url);
  await page.getByRole("status").filter({ hasText: `Restored ${name}` }).waitFor();
  expect(answers.every((st) => st === 503 || st === 303 || st === 200)).toBe(true);

  // The same process, never restarted, answers from the restored data.
  expect(s.proc.exitCode).toBeNull();
  expect((await call(s.url, "notes/get", { title: "kept" }, token)).body.result.text).toBe("in the backup");
  expect((await call(s.url, "notes/get", { title: "later" }, token)).status).toBe(404);
  // What was there is kept inside the data folder (its parent is read-only, and it cannot be renamed).
  const work = join(data, ".restore");
  const before = readdirSync(work).filter((n) => n.startsWith("before-restore-"));
  expect(before).toHaveLength(1);
  expect(existsSync(join(work, before[0], env.HEARTH_DATABASE_URL ? "hearth.pgdump" : "hearth.db"))).toBe(true);
  expect(existsSync(join(work, "staged.tar"))).toBe(false);

  const found = await everyLook(page, s.url, [{ name: "restore-done", path: "/settings/restore", ready: (p) => p.getByRole("status").filter({ hasText: "Restored" }).waitFor() }], { shots: SHOTS });
  expect(found).toEqual({});

  // Damaged after it was checked (a disk that went bad): the restore fails, nothing changes, the page says why.
  expect((await call(s.url, "notes/add", { title: "after", text: "the restore" }, token)).status).toBe(200);
  await checkListed(page, name);
  const checked = join(work, "checked.tar");
  const bytes = readFileSync(checked);
  // The database's own first bytes: SQLite's header, or pg_dump's.
  const at = Math.max(bytes.indexOf("SQLite format 3"), bytes.indexOf("PGDMP"));
  expect(at).toBeGreaterThan(0);
  bytes[at + 2] ^= 0xff;
  writeFileSync(checked, bytes);
  await page.getByRole("button", { name: "Replace this instance's data now" }).click();
  // The session is still good on the data as it was: the page says why, once the instance is back.
  await page.getByRole("alert").filter({ hasText: `The restore of ${name}` }).filter({ hasText: "as it was" }).waitFor();
  expect(s.proc.exitCode).toBeNull();
  expect((await call(s.url, "notes/get", { title: "after" }, token)).body.result.text).toBe("the restore");
  expect(readdirSync(work).filter((n) => n.startsWith("staged.tar.failed-"))).toHaveLength(1);
  await context.close();
});
