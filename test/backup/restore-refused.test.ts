// A restore whose data this build cannot open is undone: `hearth restore
// --force` of a backup a newer Hearth made (a migration this build does not
// know) exits 1 saying why, and every record written before, and after the
// backup, is still there, on the store the suite runs on. A data folder left
// in the middle of a restore's swap (a power cut at any point of it) is put
// back as it was before the restore when the instance next opens, never
// opened half-moved. A restore that succeeds keeps HEARTH_RESTORE_KEEP
// before-restore folders and removes older ones.
import { expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { dumpSchema, dumpToSql, inspect, loadSchema } from "../../core/backup/postgres.ts";
import { restoreKeep, type Swap } from "../../core/backup/swap.ts";
import { startHearth } from "../harness.ts";
import { cli } from "../hardening/process.ts";
import { temporaryFolders } from "./temp.ts";

const temp = temporaryFolders();

const BASE = { HEARTH_METERING: "off", HEARTH_RATE_WRITES: "0", HEARTH_RATE_READS: "0" };
const TITLES = ["first", "second", "third"];
const NEWER = "9999_from_a_newer_hearth";

/** What the work area holds besides backups waiting: nothing half-done is left there. */
const leftovers = (data: string) => (existsSync(join(data, ".restore")) ? readdirSync(join(data, ".restore")) : []).filter((n) => !n.startsWith("before-restore-")).sort();

/**
 * An instance with three notes, an archive of it, and a fourth note written
 * after the archive was made; stopped. With `newer` the archive's database
 * records a migration this build does not have. With `archive` that one is
 * the archive, one made the same way of another instance.
 */
async function instanceWithArchive(o: { newer?: boolean; archive?: string } = {}) {
  const home = temp("refused");
  const data = join(home, "data");
  const archive = o.archive ?? join(home, "backup.tar");
  const h = await startHearth({ env: BASE, dataDir: data });
  const token = await h.token("alice");
  for (const title of TITLES) expect((await h.call("notes/add", { title, text: `the ${title} note` }, { token })).status).toBe(200);
  // A file of the folder's own (on PostgreSQL with blobs in a bucket it holds nothing else), changed after the backup.
  writeFileSync(join(data, "kept.txt"), "as in the backup");
  if (o.newer) await h.exec("INSERT INTO hearth_migrations (owner, tag, hash, applied) VALUES (?, ?, ?, ?)", "core", NEWER, "0", 0);
  const env: Record<string, string> = { ...BASE, ...h.env };
  if (!o.archive) expect((await cli(["backup", archive], env)).code).toBe(0);
  if (o.newer) await h.exec("DELETE FROM hearth_migrations WHERE tag = ?", NEWER);
  expect((await h.call("notes/add", { title: "after", text: "written after the backup" }, { token })).status).toBe(200);
  writeFileSync(join(data, "kept.txt"), "as before the restore");
  await h.stop();
  return { home, data, archive, env };
}

/** Every note, by title, as an instance opened on the folder serves them. */
async function notesOn(data: string, env: Record<string, string>): Promise<string[]> {
  const h = await startHearth({ env, dataDir: data });
  try {
    const token = await h.token("alice");
    const r = await h.call("notes/list", {}, { token });
    expect(r.status).toBe(200);
    return (r.body.result.items ?? r.body.result).map((n: { title: string }) => n.title).sort();
  } finally {
    await h.stop();
  }
}

test("hearth restore --force of a backup this build cannot open exits 1, and the data before is back whole", async () => {
  const { data, archive, env } = await instanceWithArchive({ newer: true });
  const r = await cli(["restore", archive, "--force"], env);
  expect(r.code).toBe(1);
  expect(r.err).toContain("newer Hearth");
  expect(r.err).toContain("the data as it was is back");
  expect(leftovers(data)).toEqual([]);
  expect(readdirSync(join(data, ".restore")).filter((n) => n.startsWith("before-restore-"))).toEqual([]);
  // Every note, the one written after the backup too: nothing of the backup stayed.
  expect(await notesOn(data, env)).toEqual([...TITLES, "after"].sort());
  expect(readFileSync(join(data, "kept.txt"), "utf8")).toBe("as before the restore");
});

test("a restore that succeeds keeps HEARTH_RESTORE_KEEP before-restore folders and removes older ones", async () => {
  const { data, archive, env } = await instanceWithArchive();
  const kept = () => readdirSync(join(data, ".restore")).filter((n) => n.startsWith("before-restore-")).sort();
  const first = await cli(["restore", archive, "--force"], { ...env, HEARTH_RESTORE_KEEP: "1" });
  expect(first.code).toBe(0);
  const one = kept();
  expect(one).toHaveLength(1);
  const second = await cli(["restore", archive, "--force"], { ...env, HEARTH_RESTORE_KEEP: "1" });
  expect(second.code).toBe(0);
  expect(JSON.parse(second.out).pruned).toEqual([one[0]]);
  expect(kept()).toHaveLength(1);
  expect(kept()[0] > one[0]).toBe(true);
  expect(await notesOn(data, env)).toEqual(TITLES);
  expect(readFileSync(join(data, "kept.txt"), "utf8")).toBe("as in the backup");
  // A value that is no number of folders is refused before anything changes.
  const bad = await cli(["restore", archive, "--force"], { ...env, HEARTH_RESTORE_KEEP: "0" });
  expect(bad.code).toBe(1);
  expect(bad.err).toContain("HEARTH_RESTORE_KEEP");
  expect(kept()).toHaveLength(1);
  expect(restoreKeep({})).toBe(2);
});

/** The points a cut may stop a swap at, in order (./core/backup/swap.ts). */
const STAGES = ["marked", "schema replaced", "half moved out", "moved out", "half moved in", "moved in"] as const;

/**
 * The archive the swaps were restoring, made once: a cut swap must put back the folder's own data whichever backup it
 * was restoring (the one it is cut in holds a note written after, which no archive has), and each archive made is a
 * `hearth backup` process.
 */
let swapArchive: string | undefined;

for (const stage of STAGES)
  test(`a data folder left ${stage} in a restore's swap is put back as it was before the restore at the next start`, async () => {
    const { data, archive, env } = await instanceWithArchive({ archive: swapArchive });
    swapArchive ??= archive;
    const pg = env.HEARTH_DATABASE_URL || null;
    const work = join(data, ".restore");
    mkdirSync(work, { recursive: true });
    // What the restore had unpacked and checked, as it leaves it before the swap.
    const staging = join(work, "restoring-cut");
    const side = `${staging}-db`;
    mkdirSync(staging);
    if (pg) mkdirSync(side);
    expect(Bun.spawnSync(["tar", "-xf", archive, "-C", staging]).exitCode).toBe(0);
    rmSync(join(staging, "hearth-backup.json"));
    let swap: Swap["pg"] = null;
    if (pg) {
      renameSync(join(staging, "hearth.pgdump"), join(side, "hearth.pgdump"));
      const { schema } = await inspect(pg);
      swap = { url: pg, schema, dump: join(side, "previous.pgdump") };
      await dumpSchema(pg, schema, swap.dump);
    }
    const old = readdirSync(data).filter((n) => n !== ".restore");
    expect(old.length).toBeGreaterThan(0);
    const previous = join(work, "before-restore-cut");
    const s: Swap = { data, previous, old, staging, pg: swap };
    writeFileSync(join(work, "swapping.json"), JSON.stringify(s));
    const at = STAGES.indexOf(stage);
    if (pg && at >= 1) {
      await dumpToSql(join(side, "hearth.pgdump"), join(side, "load.sql"));
      await loadSchema(pg, swap!.schema, join(side, "load.sql"));
    }
    if (at >= 2) mkdirSync(previous);
    const restored = readdirSync(staging);
    const move = (names: string[], from: string, to: string) => names.forEach((n) => renameSync(join(from, n), join(to, n)));
    if (at === 2) move(old.slice(0, Math.ceil(old.length / 2)), data, previous);
    if (at >= 3) move(old, data, previous);
    if (at === 4) move(restored.slice(0, Math.ceil(restored.length / 2)), staging, data);
    if (at === 5) move(restored, staging, data);

    // Opened as `hearth serve` and every command open it: put back first, every note there, the one after the backup too.
    expect(await notesOn(data, env)).toEqual([...TITLES, "after"].sort());
    expect(readFileSync(join(data, "kept.txt"), "utf8")).toBe("as before the restore");
    expect(leftovers(data)).toEqual([]);
    expect(existsSync(previous)).toBe(false);
  });
