// `hearth backup` while the instance takes writes, then `hearth restore` into
// a fresh folder: everything acknowledged before the backup began is back,
// every record that came back is whole, and every file's bytes are there.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync, existsSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { startHearth, storeEnv, type Hearth } from "../harness.ts";

const MAIN = join(import.meta.dir, "..", "..", "core", "cli", "main.ts");
let h: Hearth;
let token: string;
let work: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "hearth-backup-test-"));
  h = await startHearth({ env: { HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0", HEARTH_METERING: "off" } });
  token = await h.token("alice");
});
afterAll(async () => {
  await h?.stop();
  rmSync(work, { recursive: true, force: true });
});

/** On PostgreSQL, every row of every table in the database of this data folder, sorted: equal when the database holds the same. */
async function contentsOf(dataDir: string): Promise<Record<string, string[]>> {
  const db = new SQL({ url: (await storeEnv(dataDir)).HEARTH_DATABASE_URL, max: 1 });
  try {
    const out: Record<string, string[]> = {};
    const tables = (await db.unsafe("SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename NOT LIKE 'hearth\\_shared\\_%' ORDER BY 1")) as { tablename: string }[];
    for (const { tablename } of tables) out[tablename] = ((await db.unsafe(`SELECT row_to_json(t)::text AS j FROM "${tablename}" t`)) as { j: string }[]).map((r) => r.j).sort();
    return out;
  } finally {
    await db.close();
  }
}

async function cli(args: string[], dataDir: string) {
  const p = Bun.spawn(["bun", MAIN, ...args], { env: { ...process.env, ...(await storeEnv(dataDir)), HEARTH_DATA: dataDir, HEARTH_LOG: "off" }, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { out, err, code };
}

interface Written {
  notes: Map<string, string>;
  files: Map<string, string>;
  /** Every file ever acknowledged, deleted or not: a restored file must have exactly these bytes. */
  everPut: Map<string, string>;
}

/** Writers that keep adding notes and files until told to stop; only acknowledged writes are recorded. */
function load(w: Written, stop: { now: boolean }, n = 4) {
  return Promise.all(
    Array.from({ length: n }, async (_, k) => {
      for (let i = 0; !stop.now; i++) {
        const title = `w${k}-${i}`;
        const text = `note ${k}/${i} `.repeat(1 + (i % 50));
        const r = await h.call("notes/add", { title, text }, { token });
        if (r.status === 200) w.notes.set(title, text);
        const content = `file ${k}/${i} ${crypto.randomUUID()} `.repeat(1 + (i % 200));
        const f = await h.call("files/put", { name: `f${k}-${i}.txt`, content }, { token });
        if (f.status === 200) {
          w.files.set(f.body.result.id, content);
          w.everPut.set(f.body.result.id, content);
        }
        // Deletes as well, so blobs disappear while the backup runs.
        if (i % 5 === 4) {
          const victim = [...w.files.keys()][0];
          if (victim && (await h.call("files/delete", { id: victim }, { token })).status === 200) w.files.delete(victim);
        }
      }
    }),
  );
}

test("a backup taken under load restores every write acknowledged before it, each one whole", async () => {
  const w: Written = { notes: new Map(), files: new Map(), everPut: new Map() };
  const stop = { now: false };
  const writers = load(w, stop);
  // Let some writes land, then snapshot what was acknowledged by the time the backup starts.
  while (w.notes.size < 40 || w.files.size < 40) await Bun.sleep(5);
  const before = { notes: new Map(w.notes), files: new Map(w.files) };
  const deletedBefore = new Set([...w.everPut.keys()].filter((id) => !w.files.has(id)));
  const archive = join(work, "snap.tar");
  const made = await cli(["backup", archive], h.dir);
  stop.now = true;
  await writers;
  expect(made.err).toBe("");
  expect(made.code).toBe(0);
  expect(JSON.parse(made.out).files).toBeGreaterThan(40);
  // Writes went on while the backup ran, so the test compared a moving target.
  expect(w.notes.size).toBeGreaterThan(before.notes.size);

  const restored = join(work, "restored");
  const back = await cli(["restore", archive], restored);
  expect(back.err).toBe("");
  expect(back.code).toBe(0);

  const r = await startHearth({ dataDir: restored, env: { HEARTH_RATE_READS: "0", HEARTH_METERING: "off" } });
  try {
    const t = await r.token("alice");
    for (const [title, text] of before.notes) {
      const got = await r.call("notes/get", { title }, { token: t });
      expect(got.status, title).toBe(200);
      expect(got.body.result.text).toBe(text);
    }
    for (const [id, content] of before.files) {
      // Deleted while the backup ran: it may or may not be in the snapshot, but not half there (checked below).
      if (!w.files.has(id)) continue;
      const got = await fetch(`${r.url}/files/${id}`, { headers: { authorization: `Bearer ${t}` } });
      expect(got.status, id).toBe(200);
      expect(await got.text()).toBe(content);
    }
    // Whatever else came back (writes during the backup) is whole too.
    const list = await r.call("notes/list", {}, { token: t });
    expect(list.status).toBe(200);
    const titles: string[] = JSON.stringify(list.body).match(/w\d+-\d+/g) ?? [];
    for (const title of new Set(titles)) {
      const got = await r.call("notes/get", { title }, { token: t });
      expect(got.body.result.text, title).toBe(w.notes.get(title));
    }
    const files = await r.call("files/list", {}, { token: t });
    for (const f of files.body.result.files ?? files.body.result) {
      const got = await fetch(`${r.url}/files/${f.id}`, { headers: { authorization: `Bearer ${t}` } });
      expect(got.status, f.id).toBe(200);
      expect(await got.text()).toBe(w.everPut.get(f.id)!);
      expect(deletedBefore.has(f.id), `${f.id} was deleted before the backup began`).toBe(false);
    }
  } finally {
    await r.stop();
  }
});

test("restore refuses to overwrite data without --force, keeps it aside with --force, and refuses a damaged archive without touching anything", async () => {
  const archive = join(work, "second.tar");
  expect((await cli(["backup", archive], h.dir)).code).toBe(0);
  // A second backup to the same name is refused rather than overwriting the first.
  const again = await cli(["backup", archive], h.dir);
  expect(again.code).toBe(1);
  expect(again.err).toContain("exists");

  const target = join(work, "occupied");
  expect((await cli(["restore", archive], target)).code).toBe(0);
  const refused = await cli(["restore", archive], target);
  expect(refused.code).toBe(1);
  expect(refused.err).toContain("--force");
  const forced = await cli(["restore", archive, "--force"], target);
  expect(forced.code).toBe(0);
  const previous = JSON.parse(forced.out).previous;
  // What was there is kept aside: SQLite's database file, or on PostgreSQL a dump of what the database held.
  const pg = process.env.HEARTH_TEST_DB === "pg";
  expect(existsSync(join(previous, pg ? "hearth.pgdump" : "hearth.db"))).toBe(true);

  // A truncated archive and one with a flipped byte in a blob are refused; the target is as it was.
  const state = async () => (pg ? JSON.stringify(await contentsOf(target)) : readFileSync(join(target, "hearth.db")).toString("base64"));
  const dbBefore = await state();
  const cut = join(work, "cut.tar");
  writeFileSync(cut, readFileSync(archive));
  truncateSync(cut, Math.floor(statSync(cut).size / 2));
  const bad = await cli(["restore", cut, "--force"], target);
  expect(bad.code).toBe(1);
  expect(bad.err).toMatch(/truncated|damaged|ends/);
  const flipped = join(work, "flipped.tar");
  const bytes = readFileSync(archive);
  const at = bytes.lastIndexOf(Buffer.from("file 0/")) + 3;
  bytes[at] ^= 0x20;
  writeFileSync(flipped, bytes);
  const bad2 = await cli(["restore", flipped, "--force"], target);
  expect(bad2.code).toBe(1);
  expect(bad2.err).toContain("hash");
  expect(await state()).toBe(dbBefore);
});
