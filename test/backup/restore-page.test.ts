// Restore from the browser (/settings/restore): a backup picked from the
// destination or uploaded is decrypted with the key given and read through
// with restore's own checks; a wrong key or a damaged file is refused with
// nothing changed; a checked one is confirmed, and `hearth serve`'s start
// (applyStagedRestore) brings it back whole, the data before kept aside.
import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { backupsOf } from "../../core/backup/schedule.ts";
import { applyStagedRestore } from "../../core/backup/staged.ts";
import { coreSettings, resolveConfig } from "../../core/config.ts";
import { startHearth, storeEnv } from "../harness.ts";
import { get, post, signUp, type Signed } from "../auth/people.ts";
import { temporaryFolders } from "./temp.ts";

const temp = temporaryFolders();

const quiet = { info() {}, error() {} };

test("a wrong key or a damaged backup is refused with nothing changed; a checked one, confirmed, comes back whole at the next start", async () => {
  const dest = temp("backups");
  const home = temp("home");
  const dataDir = join(home, "data");
  const env = { ...(await storeEnv(dataDir)), HEARTH_METERING: "off", HEARTH_RATE_SIGNIN: "0", HEARTH_SIGNUP: "open", HEARTH_BACKUP: "on", HEARTH_BACKUP_TO: dest, HEARTH_BACKUP_PASSPHRASE: "the owner's passphrase" };
  let h = await startHearth({ env, dataDir });
  const stopped = { h: false };
  try {
    const admin = await signUp(h, "alice");
    const as = (s: Signed) => ({ cookie: s.cookie, "x-csrf-token": s.csrf });
    const token = await h.token("alice");
    expect((await h.call("notes/add", { title: "kept", text: "in the backup" }, { token })).status).toBe(200);
    const b = await backupsOf(h.rt).runNow();
    expect(b).toMatchObject({ verified: true });
    const name = (b as { name: string }).name;
    // Beside the data folder, and in its work area, where a restore keeps what it works on.
    const work = join(dataDir, ".restore");
    const beside = () => [...readdirSync(home), ...(existsSync(work) ? readdirSync(work).map((n) => `.restore/${n}`) : [])].sort();
    const before = beside();

    // The page lists it; only an admin may open it.
    const listed = await get(h, "/settings/restore", { cookie: admin.cookie });
    expect(listed.body.result).toEqual({ stage: "none", backups: [name] });
    const bob = await signUp(h, "bob");
    expect((await get(h, "/settings/restore", { cookie: bob.cookie })).status).toBe(403);

    // A wrong passphrase: refused, nothing left behind.
    const wrong = await post(h, "/settings/restore", { action: "check", from: name, passphrase: "not the passphrase" }, as(admin));
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.message).toContain("cannot be decrypted with the key given");
    expect(beside()).toEqual(before);

    // Damaged: a byte changed in the middle of the encrypted file, uploaded.
    const good = readFileSync(join(dest, name));
    const bad = Buffer.from(good);
    bad[Math.floor(bad.length / 2)] ^= 0xff;
    const upload = async (bytes: Uint8Array, filename: string, extra: Record<string, string> = {}) => {
      const fd = new FormData();
      fd.set("csrf", admin.csrf);
      fd.set("action", "check");
      for (const [k, v] of Object.entries(extra)) fd.set(k, v);
      fd.set("file", new File([new Uint8Array(bytes)], filename));
      const res = await fetch(`${h.url}/settings/restore`, { method: "POST", headers: { cookie: admin.cookie }, body: fd });
      return { status: res.status, body: (await res.json()) as any };
    };
    const damaged = await upload(bad, "damaged.tar.age");
    expect(damaged.status).toBe(400);
    expect(beside()).toEqual(before);
    // Not a backup at all, unencrypted.
    const junk = await upload(new TextEncoder().encode("not a tar file at all".repeat(50)), "junk.tar");
    expect(junk.status).toBe(400);
    expect(junk.body.error.field).toBe("file");
    expect((await get(h, "/settings/restore", { cookie: admin.cookie })).body.result.stage).toBe("none");
    // Without the session's token: refused before anything is read.
    const fd = new FormData();
    fd.set("action", "check");
    fd.set("file", new File([new Uint8Array(good)], name));
    expect((await fetch(`${h.url}/settings/restore`, { method: "POST", headers: { cookie: admin.cookie }, body: fd })).status).toBe(403);

    // The good one, uploaded: checked, said what it holds, waiting for the confirmation.
    const ok = await upload(good, name);
    expect(ok.status).toBe(200);
    expect(ok.body.result).toMatchObject({ stage: "checked", source: name, encrypted: true, database: process.env.HEARTH_TEST_DB === "pg" ? "postgres" : "sqlite" });
    expect(ok.body.result.steps).toHaveLength(3);
    expect((await post(h, "/settings/restore", { action: "confirm" }, as(admin))).body.result.stage).toBe("staged");

    // Written after the backup: gone once it is restored.
    expect((await h.call("notes/add", { title: "later", text: "after the backup" }, { token })).status).toBe(200);
    await h.stop();
    stopped.h = true;
    const r = await applyStagedRestore(resolveConfig(coreSettings, { ...h.env }), quiet);
    expect(r).not.toBeNull();
    expect(existsSync(r!.previous!)).toBe(true);
    // Kept inside the data folder, which may be a volume's mount point with nothing writable beside it.
    expect(dirname(r!.previous!)).toBe(work);
    h = await startHearth({ env, dataDir });
    stopped.h = false;
    const t2 = await h.token("alice");
    expect((await h.call("notes/get", { title: "kept" }, { token: t2 })).body.result.text).toBe("in the backup");
    expect((await h.call("notes/get", { title: "later" }, { token: t2 })).status).toBe(404);
    // Nothing waits any more.
    expect(await applyStagedRestore(resolveConfig(coreSettings, { ...h.env }), quiet)).toBeNull();
  } finally {
    if (!stopped.h) await h.stop();
  }
});

test("cancel removes a checked backup; the passphrase left empty is the instance's own", async () => {
  const dest = temp("backups");
  const h = await startHearth({ env: { HEARTH_METERING: "off", HEARTH_BACKUP: "on", HEARTH_BACKUP_TO: dest, HEARTH_BACKUP_PASSPHRASE: "the owner's passphrase" } });
  try {
    const admin = await signUp(h, "alice");
    const as = { cookie: admin.cookie, "x-csrf-token": admin.csrf };
    const b = (await backupsOf(h.rt).runNow()) as { name: string };
    const checked = await post(h, "/settings/restore", { action: "check", from: b.name }, as);
    expect(checked.status).toBe(200);
    expect(checked.body.result.steps[1]).toBe("Decrypted with the instance's backup passphrase.");
    expect((await post(h, "/settings/restore", { action: "cancel" }, as)).body.result).toEqual({ stage: "none" });
    expect((await get(h, "/settings/restore", { cookie: admin.cookie })).body.result.stage).toBe("none");
    expect((await post(h, "/settings/restore", { action: "confirm" }, as)).status).toBe(400);
    // The page shows the form to a browser.
    const page = await get(h, "/settings/restore", { cookie: admin.cookie, accept: "text/html" });
    expect(page.text).toContain("Check the backup");
    expect(page.text).toContain(b.name);
  } finally {
    await h.stop();
  }
});
