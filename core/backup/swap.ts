// The one step of a restore that changes the instance's data: what the data
// folder holds is moved aside and the restored entries moved in, and on
// PostgreSQL the schema replaced. Renames are each atomic, but a run of them
// is not, so a marker (DATA/.restore/swapping.json, written and synced before
// the first change) says what is being swapped until the restored data has
// been opened, and is removed only then. A data folder found with the marker
// (a power cut, a killed process) is put back as it was before the restore
// before anything opens it: never opened half-moved. So is one whose restored
// data cannot be opened (a migration fails, a schema newer than this build).
//
// Put back, never completed: the data before is whole in the marker's
// `previous`, where the restored entries were only checked, not yet opened; a
// restore confirmed on /settings/restore is still staged and is tried again.
import { closeSync, existsSync, fsyncSync, openSync, readdirSync } from "node:fs";
import { mkdir, readdir, rename, rm, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { invalid } from "../errors.ts";
import { DIR_MODE, FILE_MODE } from "../private.ts";
import { dumpToSql, loadSchema } from "./postgres.ts";

/** The folder inside the data folder a restore works in (kept here rather than in snapshot.ts so both can import it). */
export const WORK_DIR = ".restore";
export const workArea = (dataDir: string) => join(resolve(dataDir), WORK_DIR);
/** Where what a restore replaced is kept: one folder per restore, named for when it ran. */
export const BEFORE = "before-restore-";
const MARKER = "swapping.json";
export const swapMarker = (dataDir: string) => join(workArea(dataDir), MARKER);
const DUMP = "hearth.pgdump";

export interface Swap {
  /** The data folder, absolute. */
  data: string;
  /** Where the folder's entries go: work/before-restore-…. */
  previous: string;
  /** The folder's entries when the swap began (all but the work area): they are the data before. */
  old: string[];
  /** The checked, unpacked backup whose entries move into the folder. */
  staging: string;
  /** On PostgreSQL: the schema replaced and where its dump from before is (moved into `previous` at the end). */
  pg: { url: string; schema: string; dump: string } | null;
}

/** Data folders a restore in this process is swapping now: opening one is that restore's own check, not a folder left mid-swap. */
const underway = new Set<string>();

/** Writes a file and makes it (and its name in the folder) survive a power cut before going on. */
async function durable(path: string, text: string) {
  const tmp = `${path}.tmp`;
  await writeFile(tmp, text, { mode: FILE_MODE });
  syncPath(tmp);
  await rename(tmp, path);
  syncPath(join(path, ".."));
}

function syncPath(path: string) {
  let fd: number | null = null;
  try {
    fd = openSync(path, "r");
    fsyncSync(fd);
  } catch {
    // A file system that cannot sync a folder (some network mounts) still orders its renames well enough.
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

/**
 * Starts a swap: the marker written, then the schema replaced and the
 * entries moved. Returns with the restored data in place and the marker
 * still there; `finish` or `putBack` ends it. On a failure before that, what
 * was moved goes back and the error is thrown.
 */
export async function beginSwap(s: Swap, load: (() => Promise<void>) | null): Promise<void> {
  underway.add(s.data);
  try {
    await durable(swapMarker(s.data), JSON.stringify(s));
    if (load) await load();
    // What the folder holds is swapped, not the folder: a mount point (a container's volume) cannot be renamed.
    if (s.old.length) {
      await mkdir(s.previous, { recursive: true, mode: DIR_MODE });
      await moveEntries(s.data, s.previous, s.old);
    }
    await moveEntries(s.staging, s.data, await readdir(s.staging));
    syncPath(s.data);
  } catch (e) {
    await putBack(s).catch(() => {});
    throw e;
  }
}

/** The restored data opened: the swap stands. The marker goes last, so a cut before it puts the data back rather than keep half a finish. */
export async function finishSwap(s: Swap): Promise<void> {
  try {
    if (s.pg && existsSync(s.pg.dump)) {
      await mkdir(s.previous, { recursive: true, mode: DIR_MODE });
      await rename(s.pg.dump, join(s.previous, DUMP));
    }
    await rm(swapMarker(s.data), { force: true });
    syncPath(workArea(s.data));
  } finally {
    underway.delete(s.data);
  }
}

/**
 * Puts the data folder (and the database) back as they were before the swap,
 * from whatever point it stopped at; running it again after a cut in the
 * middle of it goes on where it stopped. The marker is removed last.
 */
export async function putBack(s: Swap): Promise<void> {
  underway.add(s.data);
  try {
    if (s.pg) {
      // Reloaded whether or not the schema had been replaced yet: loading the dump of the data before gives the data before either way.
      const dump = [s.pg.dump, join(s.previous, DUMP)].find((f) => existsSync(f));
      if (!dump) throw new Error(`the dump of the database from before the restore is missing (${s.pg.dump}): the database cannot be put back`);
      const sql = `${dump}.sql`;
      await dumpToSql(dump, sql);
      await loadSchema(s.pg.url, s.pg.schema, sql);
      await rm(sql, { force: true });
    }
    // The restored entries start moving in only once every entry of the data before has moved out; until then the folder holds only its own.
    const movedOut = (n: string) => existsSync(join(s.previous, n));
    const allOut = s.old.every(movedOut);
    if (allOut) {
      for (const n of readdirSync(s.data)) if (n !== WORK_DIR) await rm(join(s.data, n), { recursive: true, force: true });
    }
    for (const n of s.old) if (movedOut(n)) await rename(join(s.previous, n), join(s.data, n));
    syncPath(s.data);
    await rm(s.staging, { recursive: true, force: true });
    // The dumps beside the staging folder (./snapshot.ts), the one from before among them, are not needed once it is loaded back.
    await rm(`${s.staging}-db`, { recursive: true, force: true });
    if (s.pg) await rm(join(s.previous, DUMP), { force: true });
    await rm(s.previous, { recursive: true, force: true });
    await rm(swapMarker(s.data), { force: true });
    syncPath(workArea(s.data));
  } finally {
    underway.delete(s.data);
  }
}

/**
 * What every opening of the instance does first (core/instance.ts): a data
 * folder left in the middle of a restore's swap is put back as it was
 * before it. Says what it did, or null when there was nothing to do.
 */
export async function recoverSwap(dataDir: string): Promise<Swap | null> {
  const data = resolve(dataDir);
  if (underway.has(data)) return null;
  const marker = swapMarker(data);
  if (!existsSync(marker)) return null;
  let s: Swap;
  try {
    s = JSON.parse(await Bun.file(marker).text()) as Swap;
  } catch {
    // Written to a .tmp and renamed into place, so a marker is whole or absent; one that does not parse was edited by hand.
    throw new Error(`${marker} is not readable: a restore was interrupted and what it was doing cannot be read; see the README's section on backups`);
  }
  await putBack({ ...s, data });
  return s;
}

/** Keeps the newest `keep` of the work area's before-restore folders and removes the older ones. */
export async function pruneBefore(dataDir: string, keep: number): Promise<string[]> {
  const work = workArea(dataDir);
  const kept = (await readdir(work, { withFileTypes: true }).catch(() => []))
    .filter((e) => e.isDirectory() && e.name.startsWith(BEFORE))
    .map((e) => e.name)
    .sort();
  const gone = kept.slice(0, Math.max(0, kept.length - keep));
  for (const n of gone) await rm(join(work, n), { recursive: true, force: true });
  return gone;
}

/**
 * Moves the named entries of one folder into another (renames on one file
 * system); when one cannot be moved, those already moved go back, so either
 * all of them moved or none did.
 */
async function moveEntries(from: string, to: string, names: string[]) {
  const moved: string[] = [];
  try {
    for (const n of names) {
      await rename(join(from, n), join(to, n));
      moved.push(n);
    }
  } catch (e) {
    for (const n of moved.reverse()) await rename(join(to, n), join(from, n)).catch(() => {});
    throw e;
  }
}

/** HEARTH_RESTORE_KEEP: how many before-restore folders a restore that succeeds leaves. Read before anything changes. */
export function restoreKeep(config: Readonly<Record<string, string>>): number {
  const raw = config.HEARTH_RESTORE_KEEP || "2";
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1)
    throw invalid("HEARTH_RESTORE_KEEP", `HEARTH_RESTORE_KEEP must be a whole number of at least 1 (the copy of the data a restore replaced is all that is left of it), not ${JSON.stringify(raw)}`);
  return n;
}
