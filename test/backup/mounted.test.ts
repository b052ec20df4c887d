// `hearth restore --force` where the data folder is a volume's mount point
// under a read-only parent, as in the container (/data under a read-only /):
// the folder cannot be renamed and nothing can be written beside it, so the
// restore works inside it (.restore/), moves what it holds rather than the
// folder, and keeps what was there in .restore/before-restore-…; a backup
// made afterwards leaves that work area out.
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { backupsOf } from "../../core/backup/schedule.ts";
import { readTar } from "../../core/backup/tar.ts";
import { startHearth, storeEnv } from "../harness.ts";
import { cli, QUIET } from "../hardening/process.ts";
import { asMounted, mountsPossible } from "./mounted.ts";

const MAIN = join(import.meta.dir, "..", "..", "core", "cli", "main.ts");
const home = mkdtempSync(join(tmpdir(), "hearth-mounted-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));

async function run(cmd: string[], env: Record<string, string>) {
  const p = Bun.spawn(cmd, { env: { ...process.env, ...QUIET, ...env }, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { out: out.trim(), err, code };
}

test.skipIf(!mountsPossible)("a data folder that is a mount point under a read-only parent is restored into, its contents moved and what was there kept inside it", async () => {
  const data = join(home, "data");
  const dest = join(home, "backups");
  mkdirSync(data, { recursive: true });
  const env: Record<string, string> = { ...(await storeEnv(data)), HEARTH_DATA: data, HEARTH_METERING: "off", HEARTH_BACKUP: "on", HEARTH_BACKUP_TO: dest, HEARTH_BACKUP_PASSPHRASE: "the owner's passphrase" };
  let h = await startHearth({ env, dataDir: data });
  let name: string;
  try {
    const token = await h.token("alice");
    expect((await h.call("notes/add", { title: "kept", text: "in the backup" }, { token })).status).toBe(200);
    const b = await backupsOf(h.rt).runNow();
    name = (b as { name: string }).name;
    expect((await h.call("notes/add", { title: "later", text: "after the backup" }, { token })).status).toBe(200);
  } finally {
    await h.stop();
  }

  // The simulation is faithful: there, the data folder cannot be renamed, and nothing can be made beside it.
  expect((await run([...asMounted(data, home), "mv", data, `${data}.moved`], {})).code).not.toBe(0);
  expect((await run([...asMounted(data, home), "mkdir", join(home, "beside")], {})).code).not.toBe(0);
  expect(existsSync(join(home, "beside"))).toBe(false);

  // The encrypted backup is decrypted in the work area and restored over the data there.
  const r = await run([...asMounted(data, home), "bun", MAIN, "restore", join(dest, name), "--force"], env);
  expect(r.err).toBe("");
  expect(r.code).toBe(0);
  const result = JSON.parse(r.out);
  expect(result.previous).toStartWith(join(data, ".restore", "before-restore-"));
  expect(readdirSync(result.previous)).toContain(env.HEARTH_DATABASE_URL ? "hearth.pgdump" : "hearth.db");
  // Nothing half-done is left: no unpacking, no decrypted copy.
  expect(readdirSync(join(data, ".restore")).filter((n) => !n.startsWith("before-restore-"))).toEqual([]);

  h = await startHearth({ env, dataDir: data });
  try {
    const token = await h.token("alice");
    expect((await h.call("notes/get", { title: "kept" }, { token })).body.result.text).toBe("in the backup");
    expect((await h.call("notes/get", { title: "later" }, { token })).status).toBe(404);
  } finally {
    await h.stop();
  }
  // A backup made now leaves the work area, and the data kept in it, out.
  const again = join(home, "again.tar");
  const b = await cli(["backup", again], env);
  expect(b.code).toBe(0);
  const names = (await readTar(again)).map((e) => e.name);
  expect(names.some((n) => n.startsWith(".restore"))).toBe(false);
});
