// Nothing in the data folder or a backup is readable by other accounts on the
// machine: files 0600, folders 0700, whatever the umask, and a folder an
// earlier version left open is closed on start.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { startHearth, storeEnv } from "../harness.ts";

const MAIN = join(import.meta.dir, "..", "..", "core", "cli", "main.ts");
let work: string;
let saved: number;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "hearth-modes-"));
  // With no umask, anything made without an explicit mode is open to everyone.
  saved = process.umask(0);
});
afterAll(() => {
  process.umask(saved);
  rmSync(work, { recursive: true, force: true });
});

/** Every entry under root whose mode lets anyone but the owner in, with its mode. */
function open(root: string): string[] {
  const out: string[] = [];
  const visit = (p: string) => {
    const st = statSync(p);
    if ((st.mode & 0o077) !== 0) out.push(`${relative(root, p) || "."} ${(st.mode & 0o777).toString(8)}`);
    if (st.isDirectory()) for (const n of readdirSync(p)) visit(join(p, n));
  };
  visit(root);
  return out;
}

function everything(root: string): string[] {
  const out: string[] = [];
  const visit = (p: string) => {
    out.push(relative(root, p));
    if (statSync(p).isDirectory()) for (const n of readdirSync(p)) visit(join(p, n));
  };
  visit(root);
  return out;
}

/** These tests are about the files in the data folder: its blobs stay there even in a pass that puts blobs in a bucket. */
const ON_DISK = { HEARTH_BLOBS: "disk" };

async function cli(args: string[], dataDir: string) {
  const p = Bun.spawn(["bun", MAIN, ...args], { env: { ...process.env, ...(await storeEnv(dataDir)), ...ON_DISK, HEARTH_DATA: dataDir, HEARTH_LOG: "off" }, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { out, err, code };
}

test("a new data folder, its database, journal and blobs, a backup and a restore are the owner's alone", async () => {
  const data = join(work, "fresh", "data");
  const h = await startHearth({ dataDir: data, env: { HEARTH_METERING: "off", ...ON_DISK } });
  try {
    const token = await h.token("alice");
    expect((await h.call("files/put", { name: "secret.txt", content: "my secret" }, { token })).status).toBe(200);
    const names = everything(data);
    // The write-ahead log, its index and a blob are there to be checked (on PostgreSQL the database is not in the folder).
    expect(names).toEqual(expect.arrayContaining(h.rt.store.kind === "sqlite" ? ["hearth.db", "hearth.db-wal", "hearth.db-shm", "blobs"] : ["blobs"]));
    expect(names.some((n) => /^blobs\/[0-9a-f]{2}\/[0-9a-f]{62}$/.test(n))).toBe(true);
    expect(open(data)).toEqual([]);

    const archive = join(work, "fresh", "backup.tar");
    const made = await cli(["backup", archive], data);
    expect(made.code, made.err).toBe(0);
    expect((statSync(archive).mode & 0o777).toString(8)).toBe("600");
  } finally {
    await h.stop();
  }
  const again = join(work, "fresh", "restored");
  const back = await cli(["restore", join(work, "fresh", "backup.tar")], again);
  expect(back.code, back.err).toBe(0);
  expect(everything(again)).toContain(process.env.HEARTH_TEST_DB === "pg" ? "blobs" : "hearth.db");
  expect(open(again)).toEqual([]);
});

test("a data folder left open to others is closed on start, down to every blob", async () => {
  const data = join(work, "old");
  const first = await startHearth({ dataDir: data, env: { HEARTH_METERING: "off", ...ON_DISK } });
  const token = await first.token("alice");
  expect((await first.call("files/put", { name: "a.txt", content: "old file" }, { token })).status).toBe(200);
  await first.stop();
  // What an instance made before modes were set, under the usual umask, looked like.
  const loosen = (p: string) => {
    const st = statSync(p);
    chmodSync(p, st.isDirectory() ? 0o755 : 0o644);
    if (st.isDirectory()) for (const n of readdirSync(p)) loosen(join(p, n));
  };
  mkdirSync(join(data, "mail"), { recursive: true });
  loosen(data);
  expect(open(data).length).toBeGreaterThan(4);
  const h = await startHearth({ dataDir: data, env: { HEARTH_METERING: "off", ...ON_DISK } });
  try {
    expect(open(data)).toEqual([]);
    expect(existsSync(join(data, "hearth.db"))).toBe(h.rt.store.kind === "sqlite");
  } finally {
    await h.stop();
  }
});
