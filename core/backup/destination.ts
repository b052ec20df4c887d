// Where scheduled backups go: a folder (another disk, a mounted share) or an
// S3-compatible bucket, reached with the same S3 account settings as the
// blob store. Only files named as Hearth names its backups are listed, and so
// only those are ever pruned: a folder shared with other things keeps them.
import { copyFile, mkdir, readdir, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { HearthError, invalid, notConfigured } from "../errors.ts";
import { homePath } from "../config.ts";
import { DIR_MODE } from "../private.ts";

/** hearth-20260301T030000Z.tar.age: sorts by time as text. */
export const BACKUP_NAME = /^hearth-\d{8}T\d{6}Z\.tar\.age$/;
export const backupName = (at: Date) => `hearth-${at.toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z")}.tar.age`;

export interface Destination {
  /** Where, for messages and the status page: a path or s3://bucket/prefix, never credentials. */
  where: string;
  put(name: string, file: string): Promise<void>;
  /** Copies a backup back to a local file, to check it. */
  get(name: string, file: string): Promise<void>;
  /** Backup names, oldest first. */
  list(): Promise<string[]>;
  remove(name: string): Promise<void>;
}

function folder(path: string): Destination {
  const dir = homePath(path);
  return {
    where: dir,
    async put(name, file) {
      // Copied under a dot name and renamed: a backup under its own name is always whole.
      const part = join(dir, `.${name}.partial`);
      try {
        await mkdir(dir, { recursive: true, mode: DIR_MODE });
        await copyFile(file, part);
        await rename(part, join(dir, name));
      } catch (e) {
        await rm(part, { force: true }).catch(() => {});
        throw new HearthError("storage_unavailable", `cannot write the backup to ${dir}: ${(e as Error).message}`);
      }
    },
    get: (name, file) => copyFile(join(dir, name), file),
    async list() {
      try {
        return (await readdir(dir)).filter((n) => BACKUP_NAME.test(n)).sort();
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === "ENOENT") return [];
        throw e;
      }
    },
    remove: (name) => rm(join(dir, name), { force: true }),
  };
}

function bucket(url: URL, config: Readonly<Record<string, string>>): Destination {
  const missing = ["HEARTH_S3_ENDPOINT", "HEARTH_S3_ACCESS_KEY_ID", "HEARTH_S3_SECRET_ACCESS_KEY"].filter((k) => !config[k]);
  if (missing.length) throw notConfigured(`HEARTH_BACKUP_TO names a bucket (${url.href}): set ${missing.join(", ")} for the S3 account that reaches it`);
  const client = new Bun.S3Client({
    endpoint: config.HEARTH_S3_ENDPOINT,
    bucket: url.hostname,
    region: config.HEARTH_S3_REGION || undefined,
    accessKeyId: config.HEARTH_S3_ACCESS_KEY_ID,
    secretAccessKey: config.HEARTH_S3_SECRET_ACCESS_KEY,
  });
  const prefix = url.pathname.replace(/^\/+/, "").replace(/([^/])$/, "$1/");
  const where = `s3://${url.hostname}/${prefix}`;
  const guard = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (e) {
      throw new HearthError("storage_unavailable", `cannot ${what} ${where} at ${config.HEARTH_S3_ENDPOINT}: ${(e as Error).message}`);
    }
  };
  return {
    where,
    put: (name, file) => guard("write the backup to", async () => void (await client.write(prefix + name, Bun.file(file)))),
    get: (name, file) => guard("read the backup back from", async () => void (await Bun.write(file, new Response(client.file(prefix + name).stream())))),
    list: () =>
      guard("list", async () => {
        const names: string[] = [];
        let after: string | undefined;
        for (;;) {
          const page = await client.list({ prefix, ...(after ? { startAfter: after } : {}), maxKeys: 1000 });
          for (const o of page.contents ?? []) {
            const n = o.key.slice(prefix.length);
            if (BACKUP_NAME.test(n)) names.push(n);
          }
          if (!page.isTruncated || !page.contents?.length) break;
          after = page.contents[page.contents.length - 1].key;
        }
        return names.sort();
      }),
    remove: (name) => guard("remove an old backup from", async () => void (await client.delete(prefix + name))),
  };
}

/** The destination HEARTH_BACKUP_TO names: a folder (relative ones from Hearth's folder) or s3://bucket/prefix. */
export function destinationOf(config: Readonly<Record<string, string>>): Destination {
  const to = (config.HEARTH_BACKUP_TO || "").trim();
  if (!to) throw notConfigured("set HEARTH_BACKUP_TO to a folder or an s3://bucket/prefix for the backups");
  if (/^s3:\/\//i.test(to)) {
    let url: URL;
    try {
      url = new URL(to);
    } catch {
      throw invalid("HEARTH_BACKUP_TO", `${JSON.stringify(to)} is not an s3://bucket/prefix address`);
    }
    if (!url.hostname) throw invalid("HEARTH_BACKUP_TO", `${JSON.stringify(to)} names no bucket: write s3://bucket/prefix`);
    return bucket(url, config);
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(to)) throw invalid("HEARTH_BACKUP_TO", `${JSON.stringify(to)}: a destination is a folder or an s3:// address`);
  return folder(to);
}
