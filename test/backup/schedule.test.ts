// Backups that run themselves (HEARTH_BACKUP=on), on whichever store the
// suite runs (SQLite, or PostgreSQL with blobs in a bucket): with the clock
// moved, not waited for, a backup runs at its scheduled time and not before,
// is encrypted to the owner's age key, is read back and checked, the oldest
// beyond HEARTH_BACKUP_KEEP are removed, and /status says when the last one
// worked and why the last one failed. The drill: a backup, the data wiped,
// `hearth restore` decrypting it with the passphrase, and every record back.
// A bucket as the destination works the same way, under its prefix.
import { expect, test } from "bun:test";
import { Decrypter, generateX25519Identity, identityToRecipient } from "age-encryption";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SQL } from "bun";
import { backupState, backupsOf } from "../../core/backup/schedule.ts";
import { checkArchive } from "../../core/backup/snapshot.ts";
import { blobBackend } from "../../core/blobs.ts";
import { coreSettings, resolveConfig } from "../../core/config.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { startS3 } from "../s3.ts";
import { temporaryFolders } from "./temp.ts";

const MAIN = join(import.meta.dir, "..", "..", "core", "cli", "main.ts");
const BASE = { HEARTH_METERING: "off", HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0", HEARTH_TZ: "UTC" };

const temp = temporaryFolders();

async function cli(args: string[], env: Record<string, string>) {
  const p = Bun.spawn(["bun", MAIN, ...args], { env: { ...process.env, HEARTH_LOG: "off", HEARTH_CONFIG: "/dev/null", ...env }, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { out, err, code };
}

const statusOf = async (h: Hearth) => (await (await fetch(`${h.url}/status`, { headers: { accept: "application/json" } })).json()).result;

test("a scheduled backup runs at its time, encrypted to the owner's key, checked, pruned to HEARTH_BACKUP_KEEP, and /status says when", async () => {
  const owner = await generateX25519Identity();
  const dest = temp("backups");
  const clock = new TestClock(Date.parse("2026-03-01T02:00:00Z"));
  const env = { ...BASE, HEARTH_BACKUP: "on", HEARTH_BACKUP_TO: dest, HEARTH_BACKUP_RECIPIENTS: await identityToRecipient(owner), HEARTH_BACKUP_KEEP: "2" };
  const h = await startHearth({ clock, env });
  try {
    const token = await h.token("alice");
    expect((await h.call("notes/add", { title: "door", text: "the side door code is 4512-7781" }, { token })).status).toBe(200);
    const b = backupsOf(h.rt);
    // Not before its time: the first is due at 03:00, the default daily time.
    expect(await b.runDue()).toBeNull();
    expect((await backupState(h.rt)).next).toBe("2026-03-01T03:00:00.000Z");
    expect(readdirSync(dest)).toEqual([]);

    clock.set("2026-03-01T03:00:10Z");
    const first = await b.runDue();
    expect(first).toMatchObject({ at: "2026-03-01T03:00:10.000Z", name: "hearth-20260301T030010Z.tar.age", verified: true });
    expect(readdirSync(dest)).toEqual(["hearth-20260301T030010Z.tar.age"]);
    // Encrypted: an age file, with nothing of the note readable in it.
    const sealed = readFileSync(join(dest, "hearth-20260301T030010Z.tar.age"));
    expect(sealed.subarray(0, 22).toString()).toBe("age-encryption.org/v1\n");
    expect(sealed.includes("4512-7781")).toBe(false);
    // The owner's key opens it, and what it holds is a whole backup.
    const d = new Decrypter();
    d.addIdentity(owner);
    const plain = join(temp("plain"), "b.tar");
    writeFileSync(plain, await d.decrypt(new Uint8Array(sealed)));
    expect(await checkArchive(plain)).toMatchObject({ database: process.env.HEARTH_TEST_DB === "pg" ? "postgres" : "sqlite", created: "2026-03-01T03:00:10.000Z" });
    // Once per scheduled time.
    expect(await b.runDue()).toBeNull();

    for (const day of ["2026-03-02T03:00:00Z", "2026-03-03T03:00:00Z"]) {
      clock.set(day);
      expect(await b.runDue()).toMatchObject({ verified: true });
    }
    // Two kept, the oldest removed; a file of someone else's in the folder is left alone.
    expect(readdirSync(dest).sort()).toEqual(["hearth-20260302T030000Z.tar.age", "hearth-20260303T030000Z.tar.age"]);

    const s = await statusOf(h);
    expect(s.backups).toMatchObject({ enabled: true, schedule: "0 3 * * *", keep: 2, encryption: "recipients", next: "2026-03-04T03:00:00.000Z", last_success: { at: "2026-03-03T03:00:00.000Z", verified: true }, last_failure: null });
    // Where they go is for admins: a stranger is not told.
    expect(s.backups.destination).toBeUndefined();
    const page = await (await fetch(`${h.url}/status`, { headers: { accept: "text/html" } })).text();
    expect(page).toContain("Backups");
    expect(page).toContain("2026-03-03 03:00:00 UTC");
    expect((await backupState(h.rt)).destination).toBe(dest);

    // `hearth backup --now` beside the serving instance: one more, checked, and the instance's /status knows of it.
    const now = await cli(["backup", "--now"], { ...h.env, ...env });
    expect(now.err).toBe("");
    expect(now.code).toBe(0);
    const made = JSON.parse(now.out);
    expect(made).toMatchObject({ verified: true });
    expect(readdirSync(dest)).toContain(made.name);
    expect((await statusOf(h)).backups.last_success.at).toBe(made.at);
  } finally {
    await h.stop();
  }
});

test("a backup that cannot be written is a failure with its reason; one missed while stopped runs on start; wrong settings are named", async () => {
  const clock = new TestClock(Date.parse("2026-03-01T02:59:00Z"));
  const blocker = join(temp("blocked"), "a-file");
  writeFileSync(blocker, "not a folder");
  const dataDir = temp("data");
  const env = { ...BASE, HEARTH_BACKUP: "on", HEARTH_BACKUP_TO: join(blocker, "backups"), HEARTH_BACKUP_RECIPIENTS: await identityToRecipient(await generateX25519Identity()) };
  let h = await startHearth({ clock, env, dataDir });
  try {
    clock.set("2026-03-01T03:00:00Z");
    const f = await backupsOf(h.rt).runDue();
    expect(f).toMatchObject({ at: "2026-03-01T03:00:00.000Z", reason: expect.stringContaining("cannot write the backup to") });
    const s = await statusOf(h);
    expect(s.backups).toMatchObject({ enabled: true, last_success: null, last_failure: { at: "2026-03-01T03:00:00.000Z" } });
    // The reason may name a path: for admins (and the settings page) only.
    expect(s.backups.last_failure.reason).toBeUndefined();
    expect((await backupState(h.rt)).lastFailure).toMatchObject({ reason: expect.stringContaining(blocker) });
  } finally {
    await h.stop();
  }
  // Stopped across the next 03:00 and started at 09:00 with a folder that works: the missed one runs at once.
  const dest = temp("backups");
  clock.set("2026-03-02T09:00:00Z");
  h = await startHearth({ clock, env: { ...env, HEARTH_BACKUP_TO: dest }, dataDir });
  try {
    // Due at once: the live timer may take it first, so the test waits for whichever ran it.
    await backupsOf(h.rt).runDue();
    await backupsOf(h.rt).settle();
    expect((await backupState(h.rt)).lastSuccess).toMatchObject({ at: "2026-03-02T09:00:00.000Z", verified: true });
    const s = await statusOf(h);
    expect(s.backups).toMatchObject({ last_success: { at: "2026-03-02T09:00:00.000Z" }, last_failure: { at: "2026-03-01T03:00:00.000Z" }, next: "2026-03-03T03:00:00.000Z" });
  } finally {
    await h.stop();
  }
  // On without a key: never written in the clear; the problem is named and nothing is scheduled.
  h = await startHearth({ clock, env: { ...BASE, HEARTH_BACKUP: "on", HEARTH_BACKUP_TO: dest } });
  try {
    const st = await backupState(h.rt);
    expect(st).toMatchObject({ enabled: true, next: null, problem: expect.stringContaining("HEARTH_BACKUP_PASSPHRASE") });
    clock.advance(86_400_000);
    expect(await backupsOf(h.rt).runDue()).toBeNull();
    const page = await (await fetch(`${h.url}/status`, { headers: { accept: "text/html" } })).text();
    expect(page).toContain("Backups");
  } finally {
    await h.stop();
  }
});

test("the last backup's result is kept in the database: a second instance on the same database shows it, whatever its data folder", async () => {
  const clock = new TestClock(Date.parse("2026-03-01T02:59:00Z"));
  const env = { ...BASE, HEARTH_BACKUP: "on", HEARTH_BACKUP_TO: temp("backups"), HEARTH_BACKUP_PASSPHRASE: "a passphrase the owner keeps" };
  const a = await startHearth({ clock, env });
  let b: Hearth | null = null;
  try {
    clock.set("2026-03-01T03:00:00Z");
    const ok = await backupsOf(a.rt).runDue();
    expect(ok).toMatchObject({ verified: true });
    // Nothing of it in the data folder: a row in the database.
    expect(readdirSync(a.dir).filter((f) => f.includes("backup"))).toEqual([]);
    const row = await a.row<{ last_success: string; last_attempt: string }>("SELECT last_attempt, last_success FROM backup_runs WHERE id = 'last'");
    expect(row!.last_attempt).toBe("2026-03-01T03:00:00.000Z");
    expect(JSON.parse(row!.last_success)).toMatchObject({ name: (ok as { name: string }).name, verified: true });
    if (!a.env.HEARTH_DATABASE_URL) return;
    // Another instance of the deployment: its own data folder, the same database.
    const { HEARTH_DATA: _, ...shared } = a.env;
    b = await startHearth({ clock, env: { ...env, ...shared }, dataDir: temp("second") });
    expect((await statusOf(b)).backups).toMatchObject({ last_success: { at: "2026-03-01T03:00:00.000Z", verified: true }, last_failure: null, next: "2026-03-02T03:00:00.000Z" });
    // A failure on the second is what the first shows too.
    clock.set("2026-03-01T04:00:00Z");
    const broken = await startHearth({ clock, env: { ...env, ...shared, HEARTH_BACKUP_KEEP: "none" }, dataDir: temp("third") });
    try {
      expect(await backupsOf(broken.rt).runNow()).toMatchObject({ reason: expect.stringContaining("HEARTH_BACKUP_KEEP") });
    } finally {
      await broken.stop();
    }
    expect((await statusOf(a)).backups.last_failure).toEqual({ at: "2026-03-01T04:00:00.000Z" });
    expect((await backupState(a.rt)).lastFailure!.reason).toContain("HEARTH_BACKUP_KEEP");
  } finally {
    await b?.stop();
    await a.stop();
  }
});

/** Empties the instance's store the way losing the machine would: the data folder, and the database and bucket beside it. */
async function wipe(h: Hearth) {
  const env = h.env;
  if (env.HEARTH_BLOBS === "s3") {
    const blobs = blobBackend(resolveConfig(coreSettings, env), h.dir);
    for await (const hash of blobs.list()) await blobs.delete(hash);
  }
  if (env.HEARTH_DATABASE_URL) {
    const sql = new SQL({ url: env.HEARTH_DATABASE_URL, max: 1 });
    try {
      await sql.unsafe("DROP SCHEMA public CASCADE; CREATE SCHEMA public");
    } finally {
      await sql.close();
    }
  }
  rmSync(h.dir, { recursive: true, force: true });
}

test("the drill: a scheduled backup, the data wiped, `hearth restore` with the passphrase, and every record back", async () => {
  const dest = temp("backups");
  const dataDir = temp("data");
  const env = { ...BASE, HEARTH_BACKUP: "on", HEARTH_BACKUP_TO: dest, HEARTH_BACKUP_PASSPHRASE: "wren-lantern-quarry-velvet" };
  // The backup restored is the one the schedule made at its time, on a clock moved rather than waited for.
  const clock = new TestClock(Date.parse("2026-03-01T02:00:00Z"));
  let h = await startHearth({ env, dataDir, clock });
  const token = await h.token("alice");
  const bytes = crypto.getRandomValues(new Uint8Array(4096));
  const reads = ["notes/list", "docs/list", "files/list", "events/list", "contacts/list", "tasks/list"];
  /** What each list says, with the instance's own address (a new port each start) left out. */
  const lists = async (at: Hearth) =>
    JSON.parse(JSON.stringify(Object.fromEntries(await Promise.all(reads.map(async (p) => [p, (await at.call(p, {}, { token })).body.result] as const)))).replaceAll(at.url, "{base}"));
  let before: Record<string, unknown>;
  let fileId: string;
  let name: string;
  try {
    const calls: [string, Record<string, unknown>][] = [
      ["notes/add", { title: "groceries", text: "milk, eggs, bread" }],
      ["notes/add", { title: "trip plan", text: "Lisbon in May: trams, tiles and pastéis" }],
      ["docs/write", { title: "Boiler manual", content: "# Boiler\n\nBleed the radiators each autumn." }],
      ["events/create", { title: "Dentist", when: "2031-03-05T19:30:00Z", minutes: 45, note: "bring card" }],
      ["contacts/add", { name: "Ada Lovelace", email: "ada@example.org", phone: "+44 20 7946 0000" }],
      ["tasks/create", { title: "Renew passport", detail: "before June" }],
      ["files/put", { name: "scan.bin", content: Buffer.from(bytes).toString("base64"), encoding: "base64", type: "application/octet-stream" }],
    ];
    for (const [path, args] of calls) {
      const r = await h.call(path, args, { token });
      expect({ path, status: r.status, body: r.status === 200 ? null : r.body }).toEqual({ path, status: 200, body: null });
      if (path === "files/put") fileId = r.body.result.id;
    }
    before = await lists(h);
    const b = backupsOf(h.rt);
    expect(await b.runDue()).toBeNull();
    clock.set("2026-03-01T03:00:00Z");
    const r = await b.runDue();
    expect(r).toMatchObject({ at: "2026-03-01T03:00:00.000Z", verified: true });
    name = (r as { name: string }).name;
  } finally {
    await h.stop();
  }
  await wipe(h);

  const file = join(dest, name);
  // Without the passphrase it cannot be read, and nothing is restored.
  const refused = await cli(["restore", file], h.env);
  expect(refused.code).not.toBe(0);
  expect(refused.err).toContain("HEARTH_BACKUP_PASSPHRASE");
  const wrong = await cli(["restore", file], { ...h.env, HEARTH_BACKUP_PASSPHRASE: "not it" });
  expect(wrong.code).not.toBe(0);
  expect(wrong.err).toContain("cannot be decrypted");

  const restored = await cli(["restore", file], { ...h.env, HEARTH_BACKUP_PASSPHRASE: env.HEARTH_BACKUP_PASSPHRASE });
  expect(restored.err).toBe("");
  expect(restored.code).toBe(0);

  h = await startHearth({ env, dataDir, clock });
  try {
    // The same token works: accounts and tokens came back with the rest.
    const after = await lists(h);
    expect(after).toEqual(before!);
    expect(JSON.stringify(after["notes/list"])).toContain("trip plan");
    expect(JSON.stringify(after["contacts/list"])).toContain("Ada Lovelace");
    expect(JSON.stringify(after["events/list"])).toContain("Dentist");
    expect(JSON.stringify(after["tasks/list"])).toContain("Renew passport");
    expect(JSON.stringify(after["docs/list"])).toContain("Boiler manual");
    const got = await h.call("files/get", { id: fileId! }, { token });
    expect(got.status).toBe(200);
    expect(new Uint8Array(Buffer.from(got.body.result.content, "base64"))).toEqual(bytes);
  } finally {
    await h.stop();
  }
});

test("to an S3 bucket: written under its prefix, read back and checked from there, pruned, and other keys left alone", async () => {
  const s3 = await startS3(["blobs", "backups"]);
  const clock = new TestClock(Date.parse("2026-03-01T02:00:00Z"));
  const env = { ...BASE, ...s3.env("blobs"), HEARTH_BACKUP: "on", HEARTH_BACKUP_TO: "s3://backups/nightly", HEARTH_BACKUP_KEEP: "1", HEARTH_BACKUP_RECIPIENTS: await identityToRecipient(await generateX25519Identity()) };
  const h = await startHearth({ clock, env });
  try {
    await s3.client("backups").write("nightly/README.txt", "the owner's own note");
    const token = await h.token("alice");
    expect((await h.call("files/put", { name: "a.txt", content: "kept in the blobs bucket" }, { token })).status).toBe(200);
    expect((await backupState(h.rt)).destination).toBe("s3://backups/nightly/");
    for (const day of ["2026-03-01T03:00:00Z", "2026-03-02T03:00:00Z"]) {
      clock.set(day);
      expect(await backupsOf(h.rt).runDue()).toMatchObject({ verified: true });
    }
    expect(await s3.keys("backups")).toEqual(["nightly/README.txt", "nightly/hearth-20260302T030000Z.tar.age"]);
  } finally {
    await h.stop();
    await s3.stop();
  }
});
