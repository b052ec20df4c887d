// A restore chosen in the browser (core/settings/restore.ts) cannot replace
// the database under the running instance: it is checked there, decrypted,
// and left beside the data folder, and `hearth serve` brings it back as it
// next starts, before anything opens the store, with the same restore as
// `hearth restore --force` (all or nothing; what was there is kept beside).
import { existsSync } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { resolve } from "node:path";
import { blobBackend } from "../blobs.ts";
import { dataFolder } from "../config.ts";
import { restore, type RestoreResult } from "./snapshot.ts";

/** A backup checked and awaiting the admin's confirmation. */
export const checkedRestore = (dataDir: string) => `${resolve(dataDir)}.restore-checked.tar`;
/** What was checked of it (JSON), for the page. */
export const checkedInfo = (dataDir: string) => `${resolve(dataDir)}.restore-checked.json`;
/** A backup confirmed: restored at the next start. */
export const stagedRestore = (dataDir: string) => `${resolve(dataDir)}.restore.tar`;

/**
 * Restores the backup staged for this data folder, if one is: what `hearth
 * serve` does before it opens the store. A backup that fails to restore
 * leaves the data as it was and is kept aside, named, so the instance starts
 * on its current data rather than not at all.
 */
export async function applyStagedRestore(
  config: Readonly<Record<string, string>>,
  log: { info(msg: string, data?: Record<string, unknown>): void; error(msg: string, data?: Record<string, unknown>): void },
): Promise<RestoreResult | null> {
  const dataDir = dataFolder(config);
  const file = stagedRestore(dataDir);
  if (!existsSync(file)) return null;
  try {
    const r = await restore(file, dataDir, { force: true, blobs: blobBackend(config, dataDir), database: config.HEARTH_DATABASE_URL || undefined });
    await rm(file, { force: true });
    log.info("backup restored, as chosen on /settings/restore", { files: r.files, previous: r.previous });
    return r;
  } catch (e) {
    const aside = `${file}.failed-${new Date().toISOString().replace(/[:.]/g, "-")}`;
    await rename(file, aside).catch(() => {});
    log.error("the backup chosen on /settings/restore was not restored; the instance starts on its current data", { error: (e as Error).message, kept: aside });
    return null;
  }
}
