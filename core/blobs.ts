// Content-addressed blobs under <data>/blobs/ab/cdef…, written atomically
// (temp file + rename) so a crash never leaves a half file under a real name.
// The same bytes are one blob whoever stores them, as a file or as mail, on
// any account, so a blob is removed only when no row names it any more: every
// column that holds blob hashes is declared with holdsBlobs, and release
// looks in all of them. A blob is put in the write that stores the row naming
// it, and removed after the write that dropped the last such row commits,
// both under the write lock, so a put never returns a hash whose file a
// removal is about to take.
import { getTableName, type Column } from "drizzle-orm";
import { mkdir, readdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Store } from "./db/index.ts";
import type { Blobs } from "./plugin.ts";
import { DIR_MODE, FILE_MODE } from "./private.ts";

const holders = new Map<string, { table: string; column: string }>();

/** Declares a column whose values are blob hashes: a blob one of its rows names is never removed. */
export function holdsBlobs(column: Column) {
  const table = getTableName(column.table);
  holders.set(`${table}.${column.name}`, { table, column: column.name });
}

/** Whether any declared column in this database names the blob. */
function held(store: Store, hash: string): boolean {
  const tables = new Set(store.writer.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table'").all().map((r) => r.name));
  for (const { table, column } of holders.values()) {
    if (!tables.has(table)) continue;
    if (store.writer.query(`SELECT 1 FROM "${table}" WHERE "${column}" = ? LIMIT 1`).get(hash)) return true;
  }
  return false;
}

export function makeBlobs(dataDir: string, store: Store): Blobs {
  const root = join(dataDir, "blobs");
  const path = (hash: string) => {
    if (!/^[0-9a-f]{64}$/.test(hash)) throw new Error(`not a blob hash: ${hash}`);
    return join(root, hash.slice(0, 2), hash.slice(2));
  };
  return {
    path,
    async put(bytes) {
      const hash = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
      const final = path(hash);
      if (await Bun.file(final).exists()) return hash;
      await mkdir(join(root, hash.slice(0, 2)), { recursive: true, mode: DIR_MODE });
      const tmp = join(root, `.tmp-${hash}-${crypto.randomUUID()}`);
      try {
        await writeFile(tmp, bytes, { mode: FILE_MODE });
        await rename(tmp, final);
      } catch (e) {
        // A full disk leaves a partial temp file: remove it, so the space comes back with the failure.
        await rm(tmp, { force: true }).catch(() => {});
        throw e;
      }
      return hash;
    },
    async read(hash) {
      return new Uint8Array(await Bun.file(path(hash)).arrayBuffer());
    },
    async exists(hash) {
      return Bun.file(path(hash)).exists();
    },
    async release(hash) {
      const file = path(hash);
      // After the commit: a delete that rolls back keeps the bytes its row names.
      await store.onCommit(async () => {
        if (!held(store, hash)) await rm(file, { force: true });
      });
    },
  };
}

export async function blobSize(blobs: Blobs, hash: string): Promise<number> {
  return (await stat(blobs.path(hash))).size;
}

/**
 * Removes temp files a killed process left half-written. Run at start, before
 * anything writes: a temp file then belongs to no live write.
 */
export async function sweepBlobTemps(dataDir: string): Promise<number> {
  const root = join(dataDir, "blobs");
  let names: string[];
  try {
    names = await readdir(root);
  } catch {
    return 0;
  }
  const stale = names.filter((n) => n.startsWith(".tmp-"));
  await Promise.all(stale.map((n) => rm(join(root, n), { force: true })));
  return stale.length;
}
