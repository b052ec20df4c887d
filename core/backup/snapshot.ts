// Backup and restore of a data folder and its blobs. The database is copied
// with SQLite's VACUUM INTO from a read-only connection, which gives a
// consistent snapshot while the server keeps writing (WAL readers never block
// the writer). Blobs are content-addressed and never change once written, so
// the blob store keeps each one for the backup (a hard link on disk, a
// download from a bucket): once before the snapshot (a blob deleted afterwards
// stays readable) and once after it (blobs written while the snapshot was
// taken), so every blob the snapshot names is in the archive unless it was
// both made and removed while the backup ran. Whichever store they came from,
// blobs are stored in the archive as blobs/ab/cdef…, so an archive restores
// into either kind; a restore with HEARTH_BLOBS=s3 puts them into the bucket.
//
// On PostgreSQL the database goes into the archive as hearth.pgdump, a
// pg_dump of Hearth's schema taken from one snapshot (./postgres.ts), between
// the same two passes over the blobs. The manifest says which database the
// archive holds; each restores only into an instance on the same kind.
import { Database } from "bun:sqlite";
import { copyFileSync, existsSync, linkSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rename, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { blobBackend, type BlobBackend } from "../blobs.ts";
import { conflict, HearthError, invalid } from "../errors.ts";
import { DIR_MODE } from "../private.ts";
import { dumpSchema, dumpToSql, inspect, loadSchema, pgTools } from "./postgres.ts";
import { BEFORE, beginSwap, finishSwap, pruneBefore, putBack, recoverSwap, swapMarker, WORK_DIR, workArea, type Swap } from "./swap.ts";
import { extractEntry, readTar, TarWriter, type TarEntry } from "./tar.ts";

const DB = "hearth.db";
/** The PostgreSQL database, as pg_dump's custom format. */
const DUMP = "hearth.pgdump";
const MANIFEST = "hearth-backup.json";
/** The live database and its journal are copied by snapshot, never as files; temp files are half-written by design. */
const SKIP = new Set([DB, `${DB}-wal`, `${DB}-shm`, `${DB}-journal`, DUMP]);
/**
 * The data folder's own hidden work area for restores (./swap.ts): backups
 * waiting to be restored, a restore's unpacking, and the data a restore
 * replaced. Inside the folder, because its parent may be out of reach (a
 * container's volume mounted at /data, with / read-only and owned by root);
 * never backed up, and never moved by a restore.
 */
export { WORK_DIR, workArea };

interface Manifest {
  format: 1;
  created: string;
  files: number;
  bytes: number;
  /** Which database the archive holds (hearth.db or hearth.pgdump); archives without it hold SQLite's. */
  database?: "sqlite" | "postgres";
  /** PostgreSQL: the schema dumped, and the dump's sha256, checked before it is loaded. */
  schema?: string;
  sha256?: string;
}

const sha256File = async (path: string) => new Bun.CryptoHasher("sha256").update(new Uint8Array(await Bun.file(path).arrayBuffer())).digest("hex");

function walk(root: string, skip: (rel: string) => boolean): string[] {
  const out: string[] = [];
  const visit = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, e.name);
      const rel = relative(root, full).split(sep).join("/");
      if (skip(rel) || e.name.startsWith(".tmp-") || e.name.startsWith(".backup-") || e.name.startsWith(".restoring-")) continue;
      if (e.isDirectory()) visit(full);
      else if (e.isFile()) out.push(rel);
    }
  };
  if (existsSync(root)) visit(root);
  return out.sort();
}

export interface BackupResult {
  file: string;
  files: number;
  bytes: number;
}

const blobName = (hash: string) => `blobs/${hash.slice(0, 2)}/${hash.slice(2)}`;

/**
 * Writes one archive of the data folder and the blobs of `blobs` (by default
 * the folder's own) to `file`, which must not exist yet. Safe while the
 * instance serves. With `database` (a postgres:// URL) the database is that
 * one rather than the folder's hearth.db.
 */
export async function backup(dataDir: string, file: string, o: { now?: Date; blobs?: BlobBackend; database?: string } = {}): Promise<BackupResult> {
  const now = o.now ?? new Date();
  const data = resolve(dataDir);
  const blobs = o.blobs ?? blobBackend({}, data);
  const target = resolve(file);
  const pg = o.database || null;
  if (pg) pgTools();
  else if (!existsSync(join(data, DB))) throw new HearthError("not_found", `no database in ${data}: nothing to back up (is HEARTH_DATA right?)`);
  if (existsSync(target)) throw conflict(`${target} exists already; choose a new name so no backup is overwritten`);
  const work = await mkdtemp(join(tmpdir(), "hearth-backup-"));
  // Links must live on the data folder's own file system; a read-only folder gets copies in the temp folder instead.
  let held = join(data, `.backup-${crypto.randomUUID()}`);
  try {
    mkdirSync(held, { mode: DIR_MODE });
  } catch {
    held = join(work, "held");
  }
  const partial = join(dirname(target), `.${basename(target)}.partial-${crypto.randomUUID()}`);
  // Blobs come from the blob store, wherever it keeps them.
  const skip = (rel: string) => SKIP.has(rel) || rel === "blobs" || rel === WORK_DIR || join(data, rel) === target || join(data, rel) === partial;
  const hold = (rels: string[], have: Set<string>) => {
    for (const rel of rels) {
      if (have.has(rel)) continue;
      const dest = join(held, rel);
      mkdirSync(dirname(dest), { recursive: true, mode: DIR_MODE });
      try {
        linkSync(join(data, rel), dest);
      } catch (e) {
        const code = (e as { code?: string }).code;
        // Gone since the listing: a blob deleted now was not in any snapshot yet to be taken.
        if (code === "ENOENT") continue;
        copyFileSync(join(data, rel), dest);
      }
      have.add(rel);
    }
  };
  /** Keeps the blobs not held yet; one deleted since the listing was in no snapshot yet to be taken. */
  const holdBlobs = async (have: Set<string>) => {
    for await (const hash of blobs.list()) {
      const rel = blobName(hash);
      if (have.has(rel)) continue;
      const dest = join(held, rel);
      mkdirSync(dirname(dest), { recursive: true, mode: DIR_MODE });
      if (await blobs.keep(hash, dest)) have.add(rel);
    }
  };
  let tar: TarWriter | null = null;
  try {
    const have = new Set<string>();
    hold(walk(data, skip), have);
    await holdBlobs(have);
    const snap = join(work, pg ? DUMP : DB);
    let manifest: Manifest;
    if (pg) {
      const { schema } = await inspect(pg);
      await dumpSchema(pg, schema, snap);
      manifest = { format: 1, created: now.toISOString(), files: 0, bytes: 0, database: "postgres", schema, sha256: await sha256File(snap) };
    } else {
      const db = new Database(join(data, DB), { readonly: true });
      try {
        db.run("PRAGMA busy_timeout = 10000");
        db.run("VACUUM INTO ?", [snap]);
      } finally {
        db.close();
      }
      manifest = { format: 1, created: now.toISOString(), files: 0, bytes: 0, database: "sqlite" };
    }
    hold(walk(data, skip), have);
    await holdBlobs(have);
    const files = [...have].sort();
    const bytes = statSync(snap).size + files.reduce((n, f) => n + statSync(join(held, f)).size, 0);
    manifest = { ...manifest, files: files.length + 1, bytes };
    await Bun.write(join(work, MANIFEST), JSON.stringify(manifest));
    tar = await TarWriter.create(partial);
    await tar.addFile(MANIFEST, join(work, MANIFEST));
    await tar.addFile(basename(snap), snap);
    for (const f of files) await tar.addFile(f, join(held, f));
    await tar.close();
    tar = null;
    await rename(partial, target);
    return { file: target, files: files.length + 1, bytes };
  } catch (e) {
    await tar?.abort();
    await rm(partial, { force: true });
    throw e;
  } finally {
    await rm(work, { recursive: true, force: true });
    await rm(held, { recursive: true, force: true });
  }
}

export interface RestoreResult {
  dataDir: string;
  files: number;
  /** Where the data that was there before went, when --force replaced it. */
  previous: string | null;
  /** Older before-restore folders removed, beyond the `keep` newest. */
  pruned: string[];
}

export interface RestoreOptions {
  force?: boolean;
  now?: Date;
  blobs?: BlobBackend;
  database?: string;
  /**
   * Opens the restored data as the instance would (its migrations, this
   * build's schema) and closes it again, or keeps it open for the caller.
   * When it throws, the restore is undone: the data before comes back.
   */
  opens?: () => Promise<void>;
  /** How many before-restore folders to keep, the new one among them; by default all. */
  keep?: number;
}

/** Checks a blob's content against its name: blobs/ab/cdef… is the sha256 abcdef…. */
async function checkBlob(rel: string, path: string) {
  const m = /^blobs\/([0-9a-f]{2})\/([0-9a-f]{62})$/.exec(rel);
  if (!m) return;
  const hash = new Bun.CryptoHasher("sha256").update(new Uint8Array(await Bun.file(path).arrayBuffer())).digest("hex");
  if (hash !== m[1] + m[2]) throw invalid("file", `the archive's ${rel} does not match its hash: the backup is damaged`);
}

/** A small entry's content, as text. */
const entryText = (archive: string, e: TarEntry) => Bun.file(archive).slice(e.offset, e.offset + e.size).text();

/**
 * Brings an archive back into `dataDir`, and with `database` (a postgres://
 * URL) its dump into that database. Existing data (a folder holding a
 * database, or tables in the database) is replaced only with `force`, since
 * it may belong to a running instance; what the folder held is kept in its
 * work area (.restore/before-restore-…), and the PostgreSQL database is
 * dumped there first.
 * Everything is unpacked and checked in a staging folder first, so a damaged
 * archive changes nothing; the swap itself is marked so that a cut in the
 * middle of it is undone at the next start (./swap.ts), and with `opens`
 * restored data that cannot be opened is undone at once.
 */
export async function restore(file: string, dataDir: string, o: RestoreOptions = {}): Promise<RestoreResult> {
  const bucket = o.blobs?.kind === "s3" ? o.blobs : null;
  const pg = o.database || null;
  const archive = resolve(file);
  const data = resolve(dataDir);
  if (!existsSync(archive)) throw new HearthError("not_found", `no backup at ${archive}`);
  // A restore cut off in the middle of its swap is undone before this one looks at what the folder holds.
  await recoverSwap(data);
  if (!pg && existsSync(join(data, DB)) && !o.force)
    throw conflict(`${data} already holds an instance's data, which may be running: stop it and pass --force to replace it (the current data is kept beside it)`);
  const { entries, manifest } = await openArchive(archive);
  restorable(archive, entries, manifest, !!pg);
  let target: { schema: string; relations: number } | null = null;
  if (pg) {
    pgTools();
    target = await inspect(pg);
    if (target.relations > 0 && !o.force)
      throw conflict(`the database HEARTH_DATABASE_URL names already holds an instance's data, which may be running: stop it and pass --force to replace it (the current data is dumped beside the data folder)`);
    if (manifest.schema !== target.schema)
      throw invalid("file", `the backup holds the schema ${JSON.stringify(manifest.schema)}, and the database's current schema is ${JSON.stringify(target.schema)}: set the role's search_path so they match`);
  }

  const work = workArea(data);
  await mkdir(work, { recursive: true, mode: DIR_MODE });
  const staging = join(work, `restoring-${crypto.randomUUID()}`);
  // The dump, its SQL and a replaced database's dump stay out of what becomes the data.
  const side = `${staging}-db`;
  await mkdir(staging, { mode: DIR_MODE });
  let swap: Swap | null = null;
  try {
    if (pg) await mkdir(side, { mode: DIR_MODE });
    for (const e of entries) {
      if (e.name === MANIFEST) continue;
      const dest = join(e.name === DUMP ? side : staging, e.name);
      await mkdir(dirname(dest), { recursive: true, mode: DIR_MODE });
      await extractEntry(archive, e, dest);
      await checkBlob(e.name, dest);
    }
    if (pg) {
      if (manifest.sha256 !== (await sha256File(join(side, DUMP)))) throw invalid("file", `the archive's ${DUMP} does not match its hash: the backup is damaged`);
      await dumpToSql(join(side, DUMP), join(side, "load.sql"));
    } else {
      const db = new Database(join(staging, DB), { readonly: true });
      try {
        const ok = db.query("PRAGMA integrity_check").get() as { integrity_check: string };
        if (ok.integrity_check !== "ok") throw invalid("file", `the backup's database fails its integrity check: ${ok.integrity_check}`);
      } finally {
        db.close();
      }
    }
    if (bucket) {
      // Into the bucket before the data folder changes: a failed upload leaves the instance as it was.
      for (const e of entries) {
        const m = /^blobs\/([0-9a-f]{2})\/([0-9a-f]{62})$/.exec(e.name);
        if (m && (await bucket.size(m[1] + m[2])) === null) await bucket.write(m[1] + m[2], Bun.file(join(staging, e.name)));
      }
      await rm(join(staging, "blobs"), { recursive: true, force: true });
    }
    const previous = join(work, `${BEFORE}${(o.now ?? new Date()).toISOString().replace(/[:.]/g, "-")}`);
    // The database as it was, even empty: what puts it back if the restored data cannot be opened.
    if (pg && target) await dumpSchema(pg, target.schema, join(side, "previous.pgdump"));
    const old = (await readdir(data)).filter((n) => n !== WORK_DIR);
    swap = { data, previous, old, staging, pg: pg && target ? { url: pg, schema: target.schema, dump: join(side, "previous.pgdump") } : null };
    await beginSwap(swap, pg && target ? () => loadSchema(pg, target.schema, join(side, "load.sql")) : null);
    if (o.opens) {
      try {
        await o.opens();
      } catch (e) {
        // The reason as it was given: a migration says which one and why, and the owner reads it on the restore page.
        const why = e instanceof Error ? e.message : String(e);
        try {
          await putBack(swap);
        } catch (back) {
          // Left marked: the next start puts it back.
          throw new HearthError("storage_unavailable", `the backup's data cannot be opened by this Hearth (${why}), and putting the data before back did not finish (${(back as Error).message}): it is finished when Hearth next starts`);
        }
        throw invalid("file", `the backup's data cannot be opened by this Hearth (${why}), so it was not restored: the data as it was is back`);
      }
    }
    await finishSwap(swap);
    // Everything after the swap stood is tidying: it never undoes the restore.
    await rm(staging, { recursive: true, force: true }).catch(() => {});
    const replaced = old.length > 0 || !!(pg && target && target.relations > 0);
    if (!replaced) await rm(previous, { recursive: true, force: true }).catch(() => {});
    const pruned = o.keep !== undefined ? await pruneBefore(data, o.keep).catch(() => []) : [];
    return { dataDir: data, files: entries.length - 1, previous: replaced ? previous : null, pruned };
  } catch (e) {
    await rm(staging, { recursive: true, force: true });
    throw e;
  } finally {
    // Kept while a swap is left marked: it holds the database's dump from before, which the next start loads back.
    if (!existsSync(swapMarker(data))) await rm(side, { recursive: true, force: true });
  }
}

/**
 * Whether an archive restores into an instance on this kind of database, and
 * holds only entries a restore may write: throws invalid_argument naming
 * what is wrong. What restore and a restore from the browser both check first.
 */
function restorable(archive: string, entries: TarEntry[], manifest: Manifest, pg: boolean) {
  const kind = manifest.database ?? "sqlite";
  if (kind === "postgres" && !pg)
    throw invalid("file", `${archive} holds a PostgreSQL database (a pg_dump): restore it into an instance on PostgreSQL (HEARTH_DATABASE_URL naming an empty database), or load its ${DUMP} with pg_restore`);
  if (kind !== "postgres" && pg)
    throw invalid("file", `${archive} holds a SQLite database, and this instance keeps its data in PostgreSQL (HEARTH_DATABASE_URL): restore it with HEARTH_DATABASE_URL unset; restore does not move data between SQLite and PostgreSQL`);
  const dbEntry = kind === "postgres" ? DUMP : DB;
  const names = new Set(entries.map((e) => e.name));
  if (!names.has(dbEntry)) throw invalid("file", `${archive} is not a Hearth backup (it lacks ${dbEntry})`);
  for (const e of entries)
    if (e.name.startsWith("/") || e.name.split("/").some((p) => p === ".." || p === "") || e.name.includes("\\") || SKIP.has(e.name) !== (e.name === dbEntry))
      throw invalid("file", `the backup holds an entry that may not be restored: ${JSON.stringify(e.name)}`);
}

/**
 * Reads a backup through as a restore into this kind of database would,
 * without restoring it: the checks restore makes before it changes
 * anything, then every blob, the database's integrity or the dump's hash.
 */
export async function checkRestorable(file: string, o: { postgres: boolean }): Promise<ArchiveCheck> {
  const archive = resolve(file);
  const { entries, manifest } = await openArchive(archive);
  restorable(archive, entries, manifest, o.postgres);
  return checkArchive(archive);
}

/** An entry's sha256, read from the archive a megabyte at a time. */
async function entryHash(archive: string, e: TarEntry): Promise<string> {
  const h = new Bun.CryptoHasher("sha256");
  for await (const chunk of Bun.file(archive).slice(e.offset, e.offset + e.size).stream()) h.update(chunk);
  return h.digest("hex");
}

export interface ArchiveCheck {
  database: "sqlite" | "postgres";
  created: string;
  files: number;
  bytes: number;
}

/** An archive's entries and its manifest, or invalid_argument naming what makes it no Hearth backup. */
async function openArchive(archive: string): Promise<{ entries: TarEntry[]; manifest: Manifest }> {
  let entries: TarEntry[];
  try {
    entries = await readTar(archive);
  } catch (e) {
    throw invalid("file", `${archive} is not a readable backup: ${(e as Error).message}`);
  }
  const manifestEntry = entries.find((e) => e.name === MANIFEST);
  let manifest: Manifest | null = null;
  try {
    if (manifestEntry) manifest = JSON.parse(await entryText(archive, manifestEntry));
  } catch {}
  if (!manifest || typeof manifest !== "object") throw invalid("file", `${archive} is not a Hearth backup (it lacks a readable ${MANIFEST})`);
  return { entries, manifest };
}

/**
 * Reads a backup through without restoring it, as a restore would check it:
 * its manifest, every blob against its name, the SQLite database's own
 * integrity check, or the PostgreSQL dump against the hash the manifest
 * holds. Throws invalid_argument naming what is damaged.
 */
export async function checkArchive(file: string): Promise<ArchiveCheck> {
  const archive = resolve(file);
  const { entries, manifest } = await openArchive(archive);
  const kind = manifest.database ?? "sqlite";
  const dbEntry = entries.find((e) => e.name === (kind === "postgres" ? DUMP : DB));
  if (!dbEntry) throw invalid("file", `${archive} is not a Hearth backup (it lacks ${kind === "postgres" ? DUMP : DB})`);
  for (const e of entries) {
    const m = /^blobs\/([0-9a-f]{2})\/([0-9a-f]{62})$/.exec(e.name);
    if (m && (await entryHash(archive, e)) !== m[1] + m[2]) throw invalid("file", `the archive's ${e.name} does not match its hash: the backup is damaged`);
  }
  if (kind === "postgres") {
    if ((await entryHash(archive, dbEntry)) !== manifest.sha256) throw invalid("file", `the archive's ${DUMP} does not match its hash: the backup is damaged`);
  } else {
    const work = await mkdtemp(join(tmpdir(), "hearth-check-"));
    try {
      await extractEntry(archive, dbEntry, join(work, DB));
      const db = new Database(join(work, DB), { readonly: true });
      try {
        const ok = db.query("PRAGMA integrity_check").get() as { integrity_check: string };
        if (ok.integrity_check !== "ok") throw invalid("file", `the backup's database fails its integrity check: ${ok.integrity_check}`);
      } finally {
        db.close();
      }
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }
  return { database: kind, created: manifest.created, files: manifest.files, bytes: manifest.bytes };
}
