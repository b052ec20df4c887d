// Content-addressed blobs: the same bytes are one blob whoever stores them,
// as a file or as mail, on any account, named by their sha256. They live in
// one of two places, chosen by HEARTH_BLOBS: the data folder (blobs/ab/cdef…,
// written atomically by temp file + rename, so a crash never leaves a half
// file under a real name) or an S3-compatible bucket (where an object appears
// whole or not at all). Nothing outside this file knows which: callers read,
// stream, size and put through the Blobs port.
//
// A blob is removed only when no row names it any more: every column that
// holds blob hashes is declared with holdsBlobs, and release looks in all of
// them. A blob is put in the write that stores the row naming it, and removed
// after the write that dropped the last such row commits. Both hold the hash
// (store.lock) while they look: writes run side by side on PostgreSQL, and a
// put that found the bytes present must not see them deleted by a release
// that looked before the put's row committed. So a release that looks first
// deletes before the put looks (which then writes the bytes again), and one
// that looks after the put finds its row.
import { getTableName, sql, type Column } from "drizzle-orm";
import { copyFile, link, mkdir, open, readdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Store } from "./db/index.ts";
import { HearthError, notConfigured, notFound } from "./errors.ts";
import type { BlobRange, Blobs, Received } from "./plugin.ts";
import { DIR_MODE, FILE_MODE } from "./private.ts";

const holders = new Map<string, Column>();

/** Declares a column whose values are blob hashes: a blob one of its rows names is never removed. */
export function holdsBlobs(column: Column) {
  holders.set(`${getTableName(column.table)}.${column.name}`, column);
}

/** Whether any declared column in this database names the blob; a table not made here (a plugin not installed) names none. */
async function held(store: Store, hash: string): Promise<boolean> {
  for (const column of holders.values()) {
    try {
      if (await store.wdb.get(sql`SELECT 1 AS one FROM ${column.table} WHERE ${column} = ${hash} LIMIT 1`)) return true;
    } catch (e) {
      // The store's own message, under drizzle's "Failed query" where it wraps it (as it does on PostgreSQL).
      if (!/no such table|does not exist/.test(`${e} ${(e as Error)?.cause ?? ""}`)) throw e;
    }
  }
  return false;
}

function checkHash(hash: string) {
  if (!/^[0-9a-f]{64}$/.test(hash)) throw new Error(`not a blob hash: ${hash}`);
}

/**
 * Where blob bytes are kept, by hash, with no reference counting: the Blobs
 * port adds hashing and release on top, and backup copies through it.
 */
export interface BlobBackend {
  readonly kind: "disk" | "s3";
  write(hash: string, bytes: Uint8Array | Blob): Promise<void>;
  /** Stores the file at `path` (a temp file in the folder receive writes to) as the blob, taking it: it may be moved rather than copied. */
  adopt(hash: string, path: string): Promise<void>;
  read(hash: string): Promise<Uint8Array>;
  /** Size in bytes; null when the blob is missing. */
  size(hash: string): Promise<number | null>;
  body(hash: string, range?: BlobRange): Blob | ReadableStream<Uint8Array>;
  delete(hash: string): Promise<void>;
  /** Every stored hash. */
  list(): AsyncIterable<string>;
  /**
   * Puts a copy of the blob at `dest` that stays readable whatever happens to
   * the blob afterwards (a hard link on disk where it can, else a copy; a
   * download from a bucket), for a backup; false when the blob is gone.
   */
  keep(hash: string, dest: string): Promise<boolean>;
  presign?(hash: string, o: { expiresIn: number; type: string; disposition: string }): string;
}

function diskBackend(dataDir: string): BlobBackend {
  const root = join(dataDir, "blobs");
  const path = (hash: string) => {
    checkHash(hash);
    return join(root, hash.slice(0, 2), hash.slice(2));
  };
  return {
    kind: "disk",
    async write(hash, bytes) {
      await mkdir(join(root, hash.slice(0, 2)), { recursive: true, mode: DIR_MODE });
      const tmp = join(root, `.tmp-${hash}-${crypto.randomUUID()}`);
      try {
        await writeFile(tmp, bytes instanceof Blob ? new Uint8Array(await bytes.arrayBuffer()) : bytes, { mode: FILE_MODE });
        await rename(tmp, path(hash));
      } catch (e) {
        // A full disk leaves a partial temp file: remove it, so the space comes back with the failure.
        await rm(tmp, { force: true }).catch(() => {});
        throw e;
      }
    },
    async adopt(hash, tmp) {
      // The temp file is beside the blobs, on the same file system: a rename, no copy.
      await mkdir(join(root, hash.slice(0, 2)), { recursive: true, mode: DIR_MODE });
      await rename(tmp, path(hash));
    },
    async read(hash) {
      return new Uint8Array(await Bun.file(path(hash)).arrayBuffer());
    },
    async size(hash) {
      try {
        return (await stat(path(hash))).size;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
        throw e;
      }
    },
    body(hash, range) {
      const f = Bun.file(path(hash));
      // A file slice is sent with sendfile, never read into memory.
      return range ? f.slice(range.start, range.end + 1) : f;
    },
    async delete(hash) {
      await rm(path(hash), { force: true });
    },
    async keep(hash, dest) {
      try {
        await link(path(hash), dest);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === "ENOENT") return false;
        // Another file system, or one that takes no links: a copy.
        try {
          await copyFile(path(hash), dest);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === "ENOENT") return false;
          throw e;
        }
      }
      return true;
    },
    async *list() {
      let dirs: string[];
      try {
        dirs = await readdir(root);
      } catch {
        return;
      }
      for (const d of dirs.sort()) {
        if (!/^[0-9a-f]{2}$/.test(d)) continue;
        for (const n of (await readdir(join(root, d))).sort()) if (/^[0-9a-f]{62}$/.test(n)) yield d + n;
      }
    },
  };
}

/** The S3 settings, in the order a person fills them in. */
export const S3_SETTINGS = ["HEARTH_S3_BUCKET", "HEARTH_S3_ENDPOINT", "HEARTH_S3_ACCESS_KEY_ID", "HEARTH_S3_SECRET_ACCESS_KEY"] as const;

/** A failure of the bucket itself (unreachable, refused credentials) is the store's trouble, told as such. */
function s3Fault(e: unknown, endpoint: string): HearthError {
  const code = (e as { code?: string })?.code;
  return new HearthError("storage_unavailable", `the blob store at ${endpoint} failed${code ? ` (${code})` : ""}: ${(e as Error)?.message ?? e}`, { retry: true });
}

function s3Backend(config: Readonly<Record<string, string>>): BlobBackend {
  const missing = S3_SETTINGS.filter((k) => !config[k]);
  if (missing.length) {
    const fail = () => {
      throw notConfigured(`HEARTH_BLOBS=s3 keeps blobs in an S3-compatible bucket: set ${missing.join(", ")}`);
    };
    return { kind: "s3", write: fail, adopt: fail, read: fail, size: fail, body: fail, delete: fail, list: fail, keep: fail, presign: fail };
  }
  const endpoint = config.HEARTH_S3_ENDPOINT;
  const client = new Bun.S3Client({
    endpoint,
    bucket: config.HEARTH_S3_BUCKET,
    region: config.HEARTH_S3_REGION || undefined,
    accessKeyId: config.HEARTH_S3_ACCESS_KEY_ID,
    secretAccessKey: config.HEARTH_S3_SECRET_ACCESS_KEY,
  });
  const prefix = config.HEARTH_S3_PREFIX ?? "";
  const key = (hash: string) => {
    checkHash(hash);
    return `${prefix}${hash.slice(0, 2)}/${hash.slice(2)}`;
  };
  const guard = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (e) {
      throw s3Fault(e, endpoint);
    }
  };
  return {
    kind: "s3",
    write: (hash, bytes) => guard(async () => void (await client.write(key(hash), bytes))),
    // A file is sent as it is read, in parts (a multipart upload), never held whole; the object appears once all have arrived.
    adopt: (hash, tmp) =>
      guard(async () => {
        await client.write(key(hash), Bun.file(tmp));
        await rm(tmp, { force: true });
      }),
    read: (hash) => guard(async () => new Uint8Array(await client.file(key(hash)).arrayBuffer())),
    size: (hash) =>
      guard(async () => {
        try {
          return (await client.stat(key(hash))).size;
        } catch (e) {
          if ((e as { code?: string }).code === "NoSuchKey" || /not ?found|404/i.test(String((e as Error).message))) return null;
          throw e;
        }
      }),
    // A stream, not the S3File: a Response given an S3File answers with a redirect to it.
    body: (hash, range) => {
      const f = client.file(key(hash));
      return (range ? f.slice(range.start, range.end + 1) : f).stream();
    },
    delete: (hash) => guard(async () => void (await client.delete(key(hash)))),
    async *list() {
      let after: string | undefined;
      for (;;) {
        const page = await guard(() => client.list({ prefix, ...(after ? { startAfter: after } : {}), maxKeys: 1000 }));
        for (const o of page.contents ?? []) {
          const m = /^([0-9a-f]{2})\/([0-9a-f]{62})$/.exec(o.key.slice(prefix.length));
          if (m) yield m[1] + m[2];
        }
        if (!page.isTruncated || !page.contents?.length) return;
        after = page.contents[page.contents.length - 1].key;
      }
    },
    async keep(hash, dest) {
      try {
        await Bun.write(dest, new Response(client.file(key(hash)).stream()));
        return true;
      } catch (e) {
        await rm(dest, { force: true });
        if ((await this.size(hash)) === null) return false;
        throw s3Fault(e, endpoint);
      }
    },
    presign: (hash, o) => client.presign(key(hash), { expiresIn: o.expiresIn, type: o.type, contentDisposition: o.disposition }),
  };
}

/** The backend HEARTH_BLOBS chooses: disk (the data folder, the default) or s3. */
export function blobBackend(config: Readonly<Record<string, string>>, dataDir: string): BlobBackend {
  const kind = config.HEARTH_BLOBS || "disk";
  if (kind === "disk") return diskBackend(dataDir);
  if (kind === "s3") return s3Backend(config);
  const fail = () => {
    throw notConfigured(`HEARTH_BLOBS is ${JSON.stringify(kind)}: set it to disk or s3`);
  };
  return { kind: "disk", write: fail, adopt: fail, read: fail, size: fail, body: fail, delete: fail, list: fail, keep: fail };
}

/** What receive took in: the temp file it wrote, which put takes or drop removes. */
const spooled = new WeakMap<Received, string>();

/**
 * Gives a received chunk's memory back as soon as it is on disk. The chunks a
 * request body streams in are held outside the collector's heap, which does not
 * count them soon enough: twenty uploads of 24 MiB at once took the process 100
 * to 170 MB over its baseline, all of it freed only by a full collection, and a
 * full collection holds every request for its length (about 160 ms under that
 * load). Detaching the chunk's buffer (a transfer to none) frees it there and
 * then, so each upload holds no more than the chunk it is writing. A chunk that
 * is a view into a larger buffer is left to the collector: the rest of that
 * buffer may be someone else's.
 */
function giveBack(chunk: Uint8Array) {
  const b = chunk.buffer;
  if (b instanceof ArrayBuffer && !b.detached && chunk.byteOffset === 0 && chunk.byteLength === b.byteLength) b.transfer(0);
}

/**
 * Writes a body to a temp file under `dir` as it streams, hashing it (and, when
 * asked, checking it is UTF-8) on the way; the file is removed on any failure.
 */
async function receiveInto(dir: string, body: ReadableStream<Uint8Array> | null, o: { max: number; over: (n: number) => Error; utf8?: boolean }): Promise<Received> {
  await mkdir(dir, { recursive: true, mode: DIR_MODE });
  // Named as the disk store names its temp files, so a process killed mid-body leaves one the start sweeps.
  const tmp = join(dir, `.tmp-received-${crypto.randomUUID()}`);
  const hasher = new Bun.CryptoHasher("sha256");
  const text = o.utf8 ? new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }) : null;
  let utf8 = !!text;
  let size = 0;
  const file = await open(tmp, "wx", FILE_MODE);
  try {
    if (body)
      for await (const chunk of body) {
        size += chunk.byteLength;
        if (size > o.max) throw o.over(size);
        hasher.update(chunk);
        if (utf8)
          try {
            text!.decode(chunk, { stream: true });
          } catch {
            utf8 = false;
          }
        // Awaited: the next chunk is read only once this one is on disk, so a fast sender is held back rather than buffered.
        await file.write(chunk);
        giveBack(chunk);
      }
    if (utf8)
      try {
        text!.decode();
      } catch {
        utf8 = false;
      }
    await file.close();
  } catch (e) {
    await file.close().catch(() => {});
    await rm(tmp, { force: true }).catch(() => {});
    if (body) void body.cancel?.().catch(() => {});
    throw e;
  }
  const got: Received = { hash: hasher.digest("hex"), size, utf8, drop: () => rm(tmp, { force: true }).catch(() => {}) };
  spooled.set(got, tmp);
  return got;
}

export function makeBlobs(backend: BlobBackend, store: Store, config: Readonly<Record<string, string>> = {}, dataDir?: string): Blobs {
  const redirect = backend.presign && config.HEARTH_S3_REDIRECT === "on" ? backend.presign : undefined;
  // Received bodies wait beside the disk store's blobs (a rename away), and for a bucket in the same place on the way up.
  const receiving = join(dataDir ?? tmpdir(), "blobs");
  return {
    async put(bytes) {
      const received = bytes instanceof Uint8Array ? undefined : bytes;
      const hash = received ? received.hash : new Bun.CryptoHasher("sha256").update(bytes as Uint8Array).digest("hex");
      // Held until the write naming the hash commits (see release).
      if (store.inWrite()) await store.lock(blobKey(hash));
      if ((await backend.size(hash)) === null) {
        if (!received) await backend.write(hash, bytes as Uint8Array);
        else {
          const tmp = spooled.get(received);
          // A copy naming content that has since gone from the store.
          if (!tmp) throw notFound(`the content ${hash} is missing from the blob store`);
          await backend.adopt(hash, tmp);
        }
      }
      return hash;
    },
    receive: (body, o) => receiveInto(receiving, body, o),
    read: (hash) => backend.read(hash),
    async exists(hash) {
      return (await backend.size(hash)) !== null;
    },
    size: (hash) => backend.size(hash),
    body: (hash, range) => backend.body(hash, range),
    presign: redirect && ((hash, o) => redirect(hash, { expiresIn: PRESIGN_SECONDS, ...o })),
    async release(hash) {
      checkHash(hash);
      // After the commit: a delete that rolls back keeps the bytes its row names. The look and the
      // delete are a write of their own holding the hash, so no put of the same bytes comes between.
      const sweep = () =>
        store.write(async () => {
          await store.lock(blobKey(hash));
          if (!(await held(store, hash))) await backend.delete(hash);
        });
      if (store.inWrite()) await store.onCommit(sweep);
      else await sweep();
    },
  };
}

const blobKey = (hash: string) => `blob:${hash}`;

/** How long a signed link to a blob works: long enough to follow a redirect, too short to pass around. */
const PRESIGN_SECONDS = 60;

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
