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
import { Database } from "bun:sqlite";
import { copyFileSync, existsSync, linkSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { mkdir, mkdtemp, rename, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { blobBackend, type BlobBackend } from "../blobs.ts";
import { conflict, HearthError, invalid } from "../errors.ts";
import { DIR_MODE } from "../private.ts";
import { extractEntry, readTar, TarWriter } from "./tar.ts";

const DB = "hearth.db";
const MANIFEST = "hearth-backup.json";
/** The live database and its journal are copied by snapshot, never as files; temp files are half-written by design. */
const SKIP = new Set([DB, `${DB}-wal`, `${DB}-shm`, `${DB}-journal`]);

interface Manifest {
  format: 1;
  created: string;
  files: number;
  bytes: number;
}

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
 * the folder's own) to `file`, which must not exist yet. Safe while the instance serves.
 */
export async function backup(dataDir: string, file: string, o: { now?: Date; blobs?: BlobBackend } = {}): Promise<BackupResult> {
  const now = o.now ?? new Date();
  const data = resolve(dataDir);
  const blobs = o.blobs ?? blobBackend({}, data);
  const target = resolve(file);
  if (!existsSync(join(data, DB))) throw new HearthError("not_found", `no database in ${data}: nothing to back up (is HEARTH_DATA right?)`);
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
  const skip = (rel: string) => SKIP.has(rel) || rel === "blobs" || join(data, rel) === target || join(data, rel) === partial;
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
    const snap = join(work, DB);
    const db = new Database(join(data, DB), { readonly: true });
    try {
      db.run("PRAGMA busy_timeout = 10000");
      db.run("VACUUM INTO ?", [snap]);
    } finally {
      db.close();
    }
    hold(walk(data, skip), have);
    await holdBlobs(have);
    const files = [...have].sort();
    const bytes = statSync(snap).size + files.reduce((n, f) => n + statSync(join(held, f)).size, 0);
    const manifest: Manifest = { format: 1, created: now.toISOString(), files: files.length + 1, bytes };
    await Bun.write(join(work, MANIFEST), JSON.stringify(manifest));
    tar = await TarWriter.create(partial);
    await tar.addFile(MANIFEST, join(work, MANIFEST));
    await tar.addFile(DB, snap);
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
}

/** Checks a blob's content against its name: blobs/ab/cdef… is the sha256 abcdef…. */
async function checkBlob(rel: string, path: string) {
  const m = /^blobs\/([0-9a-f]{2})\/([0-9a-f]{62})$/.exec(rel);
  if (!m) return;
  const hash = new Bun.CryptoHasher("sha256").update(new Uint8Array(await Bun.file(path).arrayBuffer())).digest("hex");
  if (hash !== m[1] + m[2]) throw invalid("file", `the archive's ${rel} does not match its hash: the backup is damaged`);
}

/**
 * Brings an archive back into `dataDir`. A folder that already holds a
 * database is replaced only with `force` (and is kept beside it, renamed),
 * since it may belong to a running instance. Everything is unpacked and
 * checked in a staging folder first, so a damaged archive changes nothing.
 */
export async function restore(file: string, dataDir: string, o: { force?: boolean; now?: Date; blobs?: BlobBackend } = {}): Promise<RestoreResult> {
  const bucket = o.blobs?.kind === "s3" ? o.blobs : null;
  const archive = resolve(file);
  const data = resolve(dataDir);
  if (!existsSync(archive)) throw new HearthError("not_found", `no backup at ${archive}`);
  if (existsSync(join(data, DB)) && !o.force)
    throw conflict(`${data} already holds an instance's data, which may be running: stop it and pass --force to replace it (the current data is kept beside it)`);
  let entries;
  try {
    entries = await readTar(archive);
  } catch (e) {
    throw invalid("file", `${archive} is not a readable backup: ${(e as Error).message}`);
  }
  const names = new Set(entries.map((e) => e.name));
  if (!names.has(MANIFEST) || !names.has(DB)) throw invalid("file", `${archive} is not a Hearth backup (it lacks ${MANIFEST} or ${DB})`);
  for (const e of entries)
    if (e.name.startsWith("/") || e.name.split("/").some((p) => p === ".." || p === "") || e.name.includes("\\") || SKIP.has(e.name) !== (e.name === DB))
      throw invalid("file", `the backup holds an entry that may not be restored: ${JSON.stringify(e.name)}`);

  await mkdir(dirname(data), { recursive: true });
  const staging = `${data}.restoring-${crypto.randomUUID()}`;
  await mkdir(staging, { mode: DIR_MODE });
  try {
    for (const e of entries) {
      if (e.name === MANIFEST) continue;
      const dest = join(staging, e.name);
      await mkdir(dirname(dest), { recursive: true, mode: DIR_MODE });
      await extractEntry(archive, e, dest);
      await checkBlob(e.name, dest);
    }
    const db = new Database(join(staging, DB), { readonly: true });
    try {
      const ok = db.query("PRAGMA integrity_check").get() as { integrity_check: string };
      if (ok.integrity_check !== "ok") throw invalid("file", `the backup's database fails its integrity check: ${ok.integrity_check}`);
    } finally {
      db.close();
    }
    if (bucket) {
      // Into the bucket before the data folder changes: a failed upload leaves the instance as it was.
      for (const e of entries) {
        const m = /^blobs\/([0-9a-f]{2})\/([0-9a-f]{62})$/.exec(e.name);
        if (m && (await bucket.size(m[1] + m[2])) === null) await bucket.write(m[1] + m[2], Bun.file(join(staging, e.name)));
      }
      await rm(join(staging, "blobs"), { recursive: true, force: true });
    }
    let previous: string | null = null;
    if (existsSync(data)) {
      previous = `${data}.before-restore-${(o.now ?? new Date()).toISOString().replace(/[:.]/g, "-")}`;
      await rename(data, previous);
    }
    await rename(staging, data);
    return { dataDir: data, files: entries.length - 1, previous };
  } catch (e) {
    await rm(staging, { recursive: true, force: true });
    throw e;
  }
}
