// one store: a backup staged on /settings/restore that fails to restore is a file in the data folder's work area, whichever store holds the data; test/backup/restore-refused-now.test.ts restores one on both stores.
// Each backup that failed to restore is kept aside for the admin to look at, named for when it failed; only the newest
// HEARTH_RESTORE_KEEP of them stay, so a restore tried again and again cannot fill the disk with copies.
import { expect, test } from "bun:test";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { restoreStaged, stagedRestore } from "../../core/backup/staged.ts";
import { temporaryFolders } from "./temp.ts";

const temp = temporaryFolders();

const quiet = { info() {}, error() {} };

test("only the newest HEARTH_RESTORE_KEEP backups that failed to restore are kept", async () => {
  const data = join(temp("stagedfailed"), "data");
  mkdirSync(join(data, ".restore"), { recursive: true });
  const config = { HEARTH_DATA: data, HEARTH_RESTORE_KEEP: "2" };
  const failed = () => readdirSync(join(data, ".restore")).filter((n) => n.startsWith("staged.tar.failed-")).sort();
  const seen: string[] = [];
  for (let i = 0; i < 4; i++) {
    writeFileSync(stagedRestore(data), `not a backup ${i}`);
    const r = await restoreStaged(config, quiet);
    expect(r && "failed" in r).toBe(true);
    if (r && "kept" in r) seen.push(r.kept.split("/").pop()!);
    // Names are by time to the millisecond: two failures in one would share one.
    await Bun.sleep(2);
  }
  expect(failed()).toEqual(seen.slice(-2).sort());
});
