// A restore chosen in the browser (core/settings/restore.ts) is checked there,
// decrypted, and left in the data folder's work area (.restore/, never backed
// up: beside the folder is out of reach in a container, whose volume is
// mounted at /data under a read-only /). `hearth serve` then brings it back at
// once, in the same process (core/backup/inplace.ts), or, when the instance
// is not `hearth serve`'s, as it next starts, before anything opens the
// store; either way with the same restore as `hearth restore --force` (all or
// nothing; what was there is kept in the work area).
import { existsSync, readFileSync } from "node:fs";
import { readdir, rename, rm, writeFile } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import { blobBackend } from "../blobs.ts";
import { dataFolder } from "../config.ts";
import { restore, workArea, type RestoreResult } from "./snapshot.ts";
import type { RestoreOutcome } from "../runtime.ts";
import { restoreKeep } from "./swap.ts";

export { workArea };
/** A backup checked and awaiting the admin's confirmation. */
export const checkedRestore = (dataDir: string) => join(workArea(dataDir), "checked.tar");
/** What was checked of it (JSON), for the page. */
export const checkedInfo = (dataDir: string) => join(workArea(dataDir), "checked.json");
/** A backup confirmed: restored at once, or at the next start. */
export const stagedRestore = (dataDir: string) => join(workArea(dataDir), "staged.tar");
/** How the last restore chosen on /settings/restore went (JSON), kept across restarts for that page and /status. */
const lastOutcome = (dataDir: string) => join(workArea(dataDir), "last.json");

/** Keeps how a restore went, so a restart does not forget it. Losing it costs a line on a page, never the restore: a failure to write is logged, not thrown. */
export async function keepOutcome(dataDir: string, outcome: RestoreOutcome, log: Log): Promise<void> {
  await writeFile(lastOutcome(dataDir), JSON.stringify(outcome)).catch((e) => log.error("how the restore went could not be kept for /status", { error: String(e) }));
}

/** How the last restore went, as kept; null when none ran or what was kept is unreadable. */
export function keptOutcome(dataDir: string): RestoreOutcome | null {
  try {
    const o = JSON.parse(readFileSync(lastOutcome(dataDir), "utf8")) as RestoreOutcome;
    return typeof o?.source === "string" && typeof o.at === "string" && typeof o.ok === "boolean" ? o : null;
  } catch {
    return null;
  }
}

/** Backups that failed to restore, kept aside for the admin to look at: only the newest `keep` stay, as with the data a restore replaced. */
async function pruneFailed(file: string, keep: number): Promise<string[]> {
  const dir = join(file, "..");
  const prefix = `${basename(file)}.failed-`;
  const old = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.startsWith(prefix)).sort().reverse().slice(keep);
  for (const n of old) await rm(join(dir, n), { force: true });
  return old;
}

type Log = { info(msg: string, data?: Record<string, unknown>): void; error(msg: string, data?: Record<string, unknown>): void };

export type StagedOutcome = { source: string } & ({ ok: RestoreResult } | { failed: string; kept: string });

/**
 * Restores the backup staged for this data folder, if one is, and says how
 * it went: null when none waits. `opens` opens the restored data as the
 * instance will; restored data it cannot open is undone as a damaged backup
 * is refused. A backup that fails to restore leaves the data as it was and
 * is kept aside, named, so the instance goes on with its current data rather
 * than not at all.
 */
export async function restoreStaged(config: Readonly<Record<string, string>>, log: Log, opens?: () => Promise<void>): Promise<StagedOutcome | null> {
  const dataDir = dataFolder(config);
  let file = stagedRestore(dataDir);
  // Confirmed by an earlier version, which left it beside the data folder.
  if (!existsSync(file) && existsSync(`${resolve(dataDir)}.restore.tar`)) file = `${resolve(dataDir)}.restore.tar`;
  if (!existsSync(file)) return null;
  // The name the admin knows it by, from when it was checked.
  const source = ((await Bun.file(checkedInfo(dataDir)).json().catch(() => null)) as { source?: string } | null)?.source ?? basename(file);
  try {
    const r = await restore(file, dataDir, { force: true, blobs: blobBackend(config, dataDir), database: config.HEARTH_DATABASE_URL || undefined, opens, keep: restoreKeep(config) });
    await rm(file, { force: true });
    await rm(checkedInfo(dataDir), { force: true });
    log.info("backup restored, as chosen on /settings/restore", { files: r.files, previous: r.previous, removed: r.pruned });
    return { source, ok: r };
  } catch (e) {
    const aside = `${file}.failed-${new Date().toISOString().replace(/[:.]/g, "-")}`;
    await rename(file, aside).catch(() => {});
    await rm(checkedInfo(dataDir), { force: true });
    let keep = 2;
    try {
      keep = restoreKeep(config);
    } catch {
      // A HEARTH_RESTORE_KEEP that is not a number is what failed the restore; its default still bounds what is kept.
    }
    const removed = await pruneFailed(file, keep);
    if (removed.length) log.info("older backups that failed to restore were removed", { removed });
    log.error("the backup chosen on /settings/restore was not restored; the instance goes on with its current data", { error: (e as Error).message, kept: aside });
    return { source, failed: (e as Error).message, kept: aside };
  }
}

/** The staged backup restored, or null (none, or it failed and was kept aside). */
export async function applyStagedRestore(config: Readonly<Record<string, string>>, log: Log, opens?: () => Promise<void>): Promise<RestoreResult | null> {
  const r = await restoreStaged(config, log, opens);
  return r && "ok" in r ? r.ok : null;
}
