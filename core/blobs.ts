// Content-addressed blobs under <data>/blobs/ab/cdef…, written atomically
// (temp file + rename) so a crash never leaves a half file under a real name.
import { mkdir, readdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Blobs } from "./plugin.ts";
import { DIR_MODE, FILE_MODE } from "./private.ts";

export function makeBlobs(dataDir: string): Blobs {
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
    async remove(hash) {
      await rm(path(hash), { force: true });
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
