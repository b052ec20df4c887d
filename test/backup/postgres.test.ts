// one store: it runs on a PostgreSQL cluster of its own whichever the pass, so the PostgreSQL pass would only run it again the same, with its own S3 server too
// `hearth backup` and `hearth restore` on an instance that keeps its data in
// PostgreSQL (a loopback cluster), with its blobs on disk and in a bucket (a
// loopback S3 server), through the real command line: the archive holds a
// pg_dump pg_restore reads; a restore into a fresh database gives back every
// row of every table (notes, files, events among them) and every blob; a
// database with data is replaced only with --force, and then whole; a
// damaged archive or one from the other kind of database is refused with the
// database as it was.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { pgBin } from "../../core/backup/postgres.ts";
import { readTar } from "../../core/backup/tar.ts";
import { blobBackend } from "../../core/blobs.ts";
import { coreSettings, resolveConfig } from "../../core/config.ts";
import { createRuntime } from "../../core/instance.ts";
import { events } from "../../plugins/events/schema.ts";
import { files } from "../../plugins/files/schema.ts";
import { notes } from "../../plugins/notes/schema.ts";
import { startHearth } from "../harness.ts";
import { startPg, type Pg } from "../pg.ts";
import { startS3 } from "../s3.ts";

const MAIN = join(import.meta.dir, "..", "..", "core", "cli", "main.ts");
const BASE = { HEARTH_METERING: "off", HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0" };

let pg: Pg;
let s3: Awaited<ReturnType<typeof startS3>>;
let work: string;
beforeAll(async () => {
  pg = await startPg();
  s3 = await startS3(["source", "restored"]);
  work = mkdtempSync(join(tmpdir(), "hearth-backup-pg-"));
});
afterAll(async () => {
  await s3.stop();
  rmSync(work, { recursive: true, force: true });
});

async function cli(args: string[], env: Record<string, string>) {
  const p = Bun.spawn(["bun", MAIN, ...args], { env: { ...process.env, HEARTH_LOG: "off", ...env }, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { out, err, code };
}

/** One entry of an archive, read with the system's tar: the archive is an ordinary one. */
function tarEntry(archive: string, name: string): Buffer {
  const p = Bun.spawnSync(["tar", "-xOf", archive, name]);
  expect(p.exitCode).toBe(0);
  return p.stdout;
}

/** Every row of every table in the database, each table's rows as sorted JSON: two databases hold the same data when these are equal. */
async function contents(url: string): Promise<Record<string, string[]>> {
  const sql = new SQL({ url, max: 1 });
  try {
    const out: Record<string, string[]> = {};
    const tables = (await sql.unsafe("SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename NOT LIKE 'hearth\\_shared\\_%' ORDER BY 1")) as { tablename: string }[];
    for (const { tablename } of tables) out[tablename] = ((await sql.unsafe(`SELECT row_to_json(t)::text AS j FROM "${tablename}" t`)) as { j: string }[]).map((r) => r.j).sort();
    return out;
  } finally {
    await sql.close();
  }
}

const sha = (b: Uint8Array) => new Bun.CryptoHasher("sha256").update(b).digest("hex");
const blobsOf = (env: Record<string, string>) => blobBackend(resolveConfig(coreSettings, env), env.HEARTH_DATA);

for (const kind of ["disk", "s3"] as const) {
  describe(`on PostgreSQL with blobs on ${kind}`, () => {
    const blobs = (bucket: string) => (kind === "s3" ? s3.env(bucket) : { HEARTH_BLOBS: "disk" });
    /** A place to restore into: a data folder, an empty database and, with S3, the second bucket. */
    const fresh = async (name: string) => ({ HEARTH_DATA: join(work, `${kind}-${name}`), HEARTH_DATABASE_URL: await pg.database(), ...blobs("restored") });
    let source: Record<string, string>;
    let archive: string;
    let saved: Record<string, string[]>;
    const bytes = new TextEncoder().encode(`kept through a backup on PostgreSQL, blobs on ${kind} ${crypto.randomUUID()}`);

    /** The restored database holds exactly what the source did, and the file's blob is in the target's store. */
    async function expectRestored(env: Record<string, string>) {
      const got = await contents(env.HEARTH_DATABASE_URL);
      expect(got).toEqual(saved);
      expect(got.notes).toHaveLength(2);
      expect(got.events_events).toHaveLength(1);
      expect(got.files_files).toHaveLength(1);
      expect(await blobsOf(env).read(sha(bytes))).toEqual(bytes);
    }

    beforeAll(async () => {
      source = { HEARTH_DATA: join(work, `${kind}-source`), HEARTH_DATABASE_URL: await pg.database(), ...blobs("source") };
      archive = join(work, `${kind}.tar`);
      // The instance's database, migrated, holding notes, an event and a file; it stays open while the backup runs.
      const rt = await createRuntime({ env: { ...BASE, HEARTH_LOG: "off", HEARTH_COLLECTORS: "off", ...source } });
      try {
        const db = rt.store.wdb;
        await db.insert(notes).values([
          { owner: "a1", title: "groceries", text: "milk, eggs, bread", created: 1, updated: 2 },
          { owner: "a1", title: "trip plan", text: "Lisbon in May: trams, tiles and pastéis", created: 3, updated: 3 },
        ]);
        await db.insert(events).values({ id: "e1", owner: "a1", title: "Dentist", note: "bring card", start: Date.parse("2031-03-05T19:30:00Z"), offset: -300, minutes: 45, created: 4 });
        await blobsOf(source).write(sha(bytes), bytes);
        await db.insert(files).values({ id: "f1", owner: "a1", name: "letter.txt", type: "text/plain", size: bytes.length, hash: sha(bytes), encoding: "text", created: 5 });
        // Scratch state the instances share (a payment claimed, say) is not the instance's data: its rows stay out of the backup.
        expect(await rt.shared.claim("payment-kept-out", 600_000)).toBe(true);
        saved = await contents(source.HEARTH_DATABASE_URL);
        const made = await cli(["backup", archive], source);
        expect(made.err).toBe("");
        expect(made.code).toBe(0);
      } finally {
        await rt.stop();
      }
    });

    test("the archive holds a pg_dump that pg_restore reads, and the manifest says so", async () => {
      const manifest = JSON.parse(tarEntry(archive, "hearth-backup.json").toString());
      expect(manifest).toMatchObject({ database: "postgres", schema: "public" });
      const dump = join(work, `${kind}-hearth.pgdump`);
      writeFileSync(dump, tarEntry(archive, "hearth.pgdump"));
      const listed = Bun.spawnSync([pgBin("pg_restore")!, "--list", dump]);
      expect(listed.exitCode).toBe(0);
      expect(listed.stdout.toString()).toContain("TABLE public notes");
    });

    test("a restore into a fresh database brings back every table's rows and the blobs", async () => {
      const into = await fresh("fresh");
      const back = await cli(["restore", archive], into);
      expect(back.err).toBe("");
      expect(back.code).toBe(0);
      await expectRestored(into);
      const sql = new SQL({ url: into.HEARTH_DATABASE_URL, max: 1 });
      try {
        expect(await sql.unsafe("SELECT key FROM hearth_shared_claims")).toEqual([]);
        // contacts/find's trigram indexes come back too: their extension is not in the dump, and the restore adds it.
        const trigram = (await sql.unsafe("SELECT indexname FROM pg_indexes WHERE indexname LIKE 'contacts\\_find\\_%' ORDER BY 1")) as { indexname: string }[];
        expect(trigram.map((r) => r.indexname)).toEqual(["contacts_find_email", "contacts_find_name", "contacts_find_other_emails", "contacts_find_phone"]);
      } finally {
        await sql.close();
      }
    });

    test("a database with data is kept without --force and replaced whole with it; a damaged archive changes nothing", async () => {
      const into = await fresh("occupied");
      expect((await cli(["restore", archive], into)).code).toBe(0);
      // Changes after the restore mark the database as it stands, a table the backup lacks among them.
      const sql = new SQL({ url: into.HEARTH_DATABASE_URL, max: 1 });
      await sql.unsafe("INSERT INTO notes (owner, title, text, created, updated) VALUES ('a1', 'later', 'written after the restore', 9, 9)");
      await sql.unsafe("DELETE FROM notes WHERE title = 'groceries'");
      await sql.unsafe("CREATE TABLE leftover (x int)");
      await sql.close();
      const before = await contents(into.HEARTH_DATABASE_URL);
      expect(before.notes.join()).toContain("later");

      const refused = await cli(["restore", archive], into);
      expect(refused.code).toBe(1);
      expect(refused.err).toContain("--force");
      expect(await contents(into.HEARTH_DATABASE_URL)).toEqual(before);

      // A byte flipped inside the dump, and a truncated archive: refused, the database as it was.
      const dumpAt = (await readTar(archive)).find((e) => e.name === "hearth.pgdump")!;
      const flipped = join(work, `${kind}-flipped.tar`);
      const damaged = readFileSync(archive);
      damaged[dumpAt.offset + Math.floor(dumpAt.size / 2)] ^= 0x20;
      writeFileSync(flipped, damaged);
      const bad = await cli(["restore", flipped, "--force"], into);
      expect(bad.code).toBe(1);
      expect(bad.err).toContain("damaged");
      const cut = join(work, `${kind}-cut.tar`);
      writeFileSync(cut, readFileSync(archive));
      truncateSync(cut, Math.floor(statSync(cut).size / 2));
      const bad2 = await cli(["restore", cut, "--force"], into);
      expect(bad2.code).toBe(1);
      expect(bad2.err).toMatch(/truncated|damaged|ends/);
      expect(await contents(into.HEARTH_DATABASE_URL)).toEqual(before);

      const forced = await cli(["restore", archive, "--force"], into);
      expect(forced.err).toBe("");
      expect(forced.code).toBe(0);
      await expectRestored(into);
      // What was replaced is kept beside the data folder, as a dump pg_restore reads.
      const previous = JSON.parse(forced.out).previous;
      const listed = Bun.spawnSync([pgBin("pg_restore")!, "--list", join(previous, "hearth.pgdump")]);
      expect(listed.exitCode).toBe(0);
      expect(listed.stdout.toString()).toContain("TABLE public leftover");
    });

    test("a backup taken while writes go on holds every write acknowledged before it, and each write whole or not at all", async () => {
      const busy = { HEARTH_DATA: join(work, `${kind}-busy`), HEARTH_DATABASE_URL: await pg.database(), ...blobs("source") };
      const rt = await createRuntime({ env: { ...BASE, HEARTH_LOG: "off", HEARTH_COLLECTORS: "off", ...busy } });
      const acknowledged: number[] = [];
      const stop = { now: false };
      // Each write is a note and an event in one transaction.
      const writer = (async () => {
        for (let i = 0; !stop.now; i++) {
          await rt.store.write(async () => {
            await rt.store.wdb.insert(notes).values({ owner: "a1", title: `w${i}`, text: `note ${i}`, created: i, updated: i });
            await rt.store.wdb.insert(events).values({ id: `w${i}`, owner: "a1", title: `event ${i}`, start: i, offset: 0, minutes: 30, created: i });
          });
          acknowledged.push(i);
        }
      })();
      const busyArchive = join(work, `${kind}-busy.tar`);
      try {
        while (acknowledged.length < 20) await Bun.sleep(5);
        const before = acknowledged.length;
        const made = await cli(["backup", busyArchive], busy);
        expect(made.err).toBe("");
        expect(made.code).toBe(0);
        stop.now = true;
        await writer;
        expect(acknowledged.length).toBeGreaterThan(before);

        const into = await fresh("busy-restored");
        expect((await cli(["restore", busyArchive], into)).code).toBe(0);
        const got = await contents(into.HEARTH_DATABASE_URL);
        const noteTitles = new Set(got.notes.map((j) => JSON.parse(j).title));
        const eventIds = new Set(got.events_events.map((j) => JSON.parse(j).id));
        for (let i = 0; i < before; i++) expect(noteTitles.has(`w${i}`), `w${i}`).toBe(true);
        expect([...noteTitles].sort()).toEqual([...eventIds].sort());
      } finally {
        stop.now = true;
        await writer;
        await rt.stop();
      }
    });
  });
}

test("a SQLite archive is refused by an instance on PostgreSQL, and a PostgreSQL archive by one on SQLite", async () => {
  const lite = { HEARTH_DATA: join(work, "sqlite-source") };
  const h = await startHearth({ dataDir: lite.HEARTH_DATA, env: { ...BASE, HEARTH_DATABASE_URL: "" } });
  await h.stop();
  const liteArchive = join(work, "sqlite.tar");
  expect((await cli(["backup", liteArchive], lite)).code).toBe(0);
  expect(JSON.parse(tarEntry(liteArchive, "hearth-backup.json").toString()).database).toBe("sqlite");

  const url = await pg.database();
  const intoPg = await cli(["restore", liteArchive, "--force"], { HEARTH_DATA: join(work, "into-pg"), HEARTH_DATABASE_URL: url });
  expect(intoPg.code).toBe(1);
  expect(intoPg.err).toContain("SQLite");
  expect(existsSync(join(work, "into-pg"))).toBe(false);

  const pgArchive = join(work, "disk.tar");
  const intoLite = await cli(["restore", pgArchive, "--force"], { HEARTH_DATA: join(work, "into-sqlite") });
  expect(intoLite.code).toBe(1);
  expect(intoLite.err).toContain("PostgreSQL");
  expect(existsSync(join(work, "into-sqlite"))).toBe(false);
});

test("a dump that fails to load part-way leaves the database it was loaded into as it was", async () => {
  // The dump is whole, but a table in it uses a type from another schema, which the target lacks: its CREATE TABLE fails after the schema was dropped and other tables made.
  const source = { HEARTH_DATA: join(work, "partial-source"), HEARTH_DATABASE_URL: await pg.database() };
  const src = new SQL({ url: source.HEARTH_DATABASE_URL, max: 1 });
  await src.unsafe("CREATE TABLE a_first (x int); INSERT INTO a_first VALUES (1); CREATE SCHEMA other; CREATE TYPE other.mood AS ENUM ('ok'); CREATE TABLE z_last (m other.mood)");
  await src.close();
  const archive = join(work, "partial.tar");
  expect((await cli(["backup", archive], source)).code).toBe(0);

  const target = { HEARTH_DATA: join(work, "partial-target"), HEARTH_DATABASE_URL: await pg.database() };
  const dst = new SQL({ url: target.HEARTH_DATABASE_URL, max: 1 });
  await dst.unsafe("CREATE TABLE kept (x int); INSERT INTO kept VALUES (7)");
  await dst.close();
  const before = await contents(target.HEARTH_DATABASE_URL);
  const r = await cli(["restore", archive, "--force"], target);
  expect(r.code).toBe(1);
  expect(r.err).toContain("left as it was");
  expect(await contents(target.HEARTH_DATABASE_URL)).toEqual(before);
  expect(before).toEqual({ kept: ['{"x":7}'] });
});
