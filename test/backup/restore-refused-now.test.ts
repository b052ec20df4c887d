// A restore confirmed on /settings/restore whose data this build cannot open
// (the backup of a database a newer Hearth migrated) is undone by the serving
// process itself: a real `hearth serve`, its data folder a mount point as in
// the container, takes the backup through the API the page uses, restores
// it, fails to open it, puts the data before back (the PostgreSQL schema
// too), and serves on from it, never exiting; every record, the one written
// after the backup too, is there, nothing half-restored stays, and the
// restore page and /status tell the admin why.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { chromiumPresent, everyLook, launchChromium } from "../browser.ts";
import { storeEnv, type Hearth } from "../harness.ts";
import { call, cli, serve, type Served } from "../hardening/process.ts";
import { get, post, signUp } from "../auth/people.ts";
import { asMounted, mountsPossible } from "./mounted.ts";

const SHOTS = join(import.meta.dir, "..", "artifacts", "restore");
const home = mkdtempSync(join(tmpdir(), "hearth-refusednow-"));
const data = join(home, "data");
const archive = join(home, "from-a-newer-hearth.tar");
const NEWER = "9999_from_a_newer_hearth";
let env: Record<string, string>;
let s: Served;
let browser: Browser | null = null;

beforeAll(async () => {
  mkdirSync(data, { recursive: true });
  env = { ...(await storeEnv(data)), HEARTH_DATA: data, HEARTH_SIGNUP: "open", HEARTH_RATE_SIGNIN: "0", HEARTH_METERING: "off" };
  s = await serve(data, env, { prefix: mountsPossible ? asMounted(data, home) : [] });
  if (chromiumPresent) browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
  rmSync(home, { recursive: true, force: true });
});

/** One statement on the instance's database from outside it, as another program would: the migration record a newer Hearth leaves. */
async function onDatabase(text: string) {
  if (env.HEARTH_DATABASE_URL) {
    const sql = new SQL({ url: env.HEARTH_DATABASE_URL, max: 1 });
    try {
      await sql.unsafe(text);
    } finally {
      await sql.close();
    }
    return;
  }
  const db = new Database(join(data, "hearth.db"));
  try {
    db.run("PRAGMA busy_timeout = 10000");
    db.run(text);
  } finally {
    db.close();
  }
}

test("a backup this build cannot open, confirmed on /settings/restore, is undone in the same process: every record stays, and the page and /status say why", async () => {
  const h = { url: s.url } as Hearth;
  const admin = await signUp(h, "alice");
  const token = (await cli(["token", "create", "--user", "alice"], env)).out;
  const titles = ["first", "second", "third"];
  for (const title of titles) expect((await call(s.url, "notes/add", { title, text: `the ${title} note` }, token)).status).toBe(200);
  await onDatabase(`INSERT INTO hearth_migrations (owner, tag, hash, applied) VALUES ('core', '${NEWER}', '0', 0)`);
  expect((await cli(["backup", archive], env)).code).toBe(0);
  await onDatabase(`DELETE FROM hearth_migrations WHERE tag = '${NEWER}'`);
  expect((await call(s.url, "notes/add", { title: "after", text: "written after the backup" }, token)).status).toBe(200);

  // Uploaded and checked as the page does it: the archive itself is sound, so it passes.
  const fd = new FormData();
  fd.set("csrf", admin.csrf);
  fd.set("action", "check");
  fd.set("file", new File([readFileSync(archive)], "from-a-newer-hearth.tar"));
  const checked = await fetch(`${s.url}/settings/restore`, { method: "POST", headers: { cookie: admin.cookie }, body: fd });
  expect(checked.status).toBe(200);
  const confirmed = await post(h, "/settings/restore", { action: "confirm" }, { cookie: admin.cookie, "x-csrf-token": admin.csrf });
  expect(confirmed.body.result.stage).toBe("restoring");

  // Answered "restoring" (503) until the instance is back; then the page says how it went. The session is the data before's, so it holds.
  let last: any = null;
  for (;;) {
    const r = await get(h, "/settings/restore", { cookie: admin.cookie });
    if (r.status === 200 && r.body.result.last) {
      last = r.body.result.last;
      break;
    }
    expect([200, 503]).toContain(r.status);
    await Bun.sleep(200);
  }
  expect(last).toMatchObject({ ok: false, source: "from-a-newer-hearth.tar" });
  expect(last.reason).toContain("newer Hearth");
  expect(last.reason).toContain("the data as it was is back");

  // The same process, still serving, from the data as it was: every note, the one after the backup too.
  expect(s.proc.exitCode).toBeNull();
  for (const title of [...titles, "after"]) expect((await call(s.url, "notes/get", { title }, token)).status).toBe(200);
  // Nothing half-restored stays: no unpacking, no marker, no copy of the data before (it is back in place); the backup kept aside, named.
  const work = readdirSync(join(data, ".restore"));
  expect(work.filter((n) => n.startsWith("restoring-") || n.startsWith("before-restore-") || n === "swapping.json")).toEqual([]);
  expect(work.filter((n) => n.startsWith("staged.tar.failed-"))).toHaveLength(1);
  expect(existsSync(join(data, "hearth.db"))).toBe(!env.HEARTH_DATABASE_URL);

  const status = await get(h, "/status", { cookie: admin.cookie });
  expect(status.body.result.restore).toMatchObject({ ok: false, source: "from-a-newer-hearth.tar", reason: expect.stringContaining("newer Hearth") });
  // A stranger learns only that a restore was refused, not which backup or why.
  expect((await get(h, "/status")).body.result.restore).toEqual({ at: last.at, ok: false });

  if (!browser) return;
  mkdirSync(SHOTS, { recursive: true });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
  await context.addCookies([{ name: admin.cookie.split("=")[0], value: admin.cookie.split("=").slice(1).join("="), url: s.url }]);
  const page = await context.newPage();
  const found = await everyLook(
    page,
    s.url,
    [
      { name: "restore-refused", path: "/settings/restore", ready: (p) => p.getByRole("alert").filter({ hasText: "newer Hearth" }).waitFor() },
      { name: "status-restore-refused", path: "/status", ready: (p) => p.getByText("Last restore").waitFor() },
    ],
    { shots: SHOTS },
  );
  expect(found).toEqual({});
  await context.close();
});

test("how the last restore went is still on /status after a restart", async () => {
  const before = (await get({ url: s.url } as Hearth, "/status")).body.result.restore;
  expect(before).toMatchObject({ ok: false });
  await s.stop();
  s = await serve(data, env, { prefix: mountsPossible ? asMounted(data, home) : [] });
  expect((await get({ url: s.url } as Hearth, "/status")).body.result.restore).toEqual(before);
});
