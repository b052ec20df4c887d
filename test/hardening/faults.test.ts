// The instance under faults it does not control: a full disk, a data folder
// gone read-only, and every provider down, slow or talking garbage at once.
// Writes fail with a clear 5xx, reads keep working, nothing is corrupted,
// and everything that does not need the broken thing stays responsive.
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildRegistry } from "../../core/registry.ts";
import { allProviders } from "../../core/upstream/providers.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { minimalArgs } from "../mcp/args.ts";
import { errorShapeProblem, garbageUpstream, hostileEnv, refuseOutside } from "./instance.ts";

const root = process.getuid?.() === 0;
const sh = (cmd: string[]) => spawnSync(cmd[0], cmd.slice(1), { encoding: "utf8" });

/** Root in a container may still lack the right to mount: find out once, with a throwaway tmpfs. */
function mayMount(): boolean {
  if (!root) return false;
  const probe = mkdtempSync(join(tmpdir(), "hearth-mount-probe-"));
  const ok = sh(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", probe]).status === 0;
  if (ok) sh(["umount", probe]);
  rmSync(probe, { recursive: true, force: true });
  if (!ok) console.log("storage fault tests skipped: this process may not mount a tmpfs");
  return ok;
}
const canMount = mayMount();

/** A small tmpfs of our own, when this process may mount one (root in a container that allows it). */
function smallDisk(mb: number): string | null {
  if (!root) return null;
  const at = mkdtempSync(join(tmpdir(), "hearth-disk-"));
  if (sh(["mount", "-t", "tmpfs", "-o", `size=${mb}m`, "tmpfs", at]).status !== 0) {
    rmSync(at, { recursive: true, force: true });
    return null;
  }
  mounts.push(at);
  return at;
}
const mounts: string[] = [];
afterAll(() => {
  for (const m of mounts) {
    sh(["umount", "-l", m]);
    rmSync(m, { recursive: true, force: true });
  }
});

const QUIET = { HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0", HEARTH_METERING: "off" };

async function writeSome(h: Hearth, token: string, tag: string, n: number) {
  const acked = new Map<string, string>();
  for (let i = 0; i < n; i++) {
    const text = `${tag} ${i} `.repeat(20);
    const r = await h.call("notes/add", { title: `${tag}-${i}`, text }, { token });
    expect(r.status).toBe(200);
    acked.set(`${tag}-${i}`, text);
  }
  return acked;
}

async function readsStillWork(h: Hearth, token: string, acked: Map<string, string>) {
  for (const [title, text] of acked) {
    const r = await h.call("notes/get", { title }, { token });
    expect(r.status, title).toBe(200);
    expect(r.body.result.text).toBe(text);
  }
  expect((await h.call("notes/list", {}, { token })).status).toBe(200);
}

/** A refused write: a 5xx in the error shape whose message says what is wrong with storage, and no stack. */
function storageRefusal(r: { status: number; body: any }, why: RegExp) {
  expect(r.status, JSON.stringify(r.body)).toBeGreaterThanOrEqual(500);
  expect(errorShapeProblem(r.status, r.body)).toBeNull();
  expect(r.body.error.message).toMatch(why);
}

// On PostgreSQL the database is not in the data folder: a full or read-only folder does not hold the writes these tests make.
describe.skipIf(!canMount || process.env.HEARTH_TEST_DB === "pg")("storage faults (needs the right to mount a small tmpfs; SQLite's data folder only, skipped on PostgreSQL)", () => {
  test("a full disk: writes fail with a clear 5xx, reads keep working, nothing is corrupted, and writes resume once there is room", async () => {
    const disk = smallDisk(24);
    expect(disk).not.toBeNull();
    const h = await startHearth({ dataDir: join(disk!, "data"), env: QUIET });
    try {
      const token = await h.token("alice");
      const acked = await writeSome(h, token, "before", 20);
      // Fill what is left, so the next page SQLite or the blob store wants is not there.
      const filler = join(disk!, "filler");
      sh(["dd", "if=/dev/zero", `of=${filler}`, "bs=64k", "count=100000"]);
      // A write may still land in WAL space a checkpoint has freed; the ones after it need pages the disk no longer has.
      let note = await h.call("notes/add", { title: "too-much-0", text: "x".repeat(200_000) }, { token });
      for (let i = 1; note.status === 200 && i < 40; i++) {
        acked.set(`too-much-${i - 1}`, "x".repeat(200_000));
        note = await h.call("notes/add", { title: `too-much-${i}`, text: "x".repeat(200_000) }, { token });
      }
      storageRefusal(note, /full|space/i);
      const file = await h.call("files/put", { name: "big.txt", content: "y".repeat(300_000) }, { token });
      storageRefusal(file, /full|space/i);
      await readsStillWork(h, token, acked);
      // No half-written blob is left behind under the blob store.
      const stray = readdirSync(join(h.dir, "blobs"), { recursive: true }).filter((f) => String(f).includes(".tmp-"));
      expect(stray).toEqual([]);
      rmSync(filler);
      const more = await writeSome(h, token, "after", 5);
      await readsStillWork(h, token, new Map([...acked, ...more]));
      expect((h.rt.store.reader.query("PRAGMA integrity_check").get() as { integrity_check: string }).integrity_check).toBe("ok");
    } finally {
      await h.stop();
    }
  });

  test("a data folder that is read-only: writes fail with a clear 5xx, reads keep working, nothing is corrupted", async () => {
    // A folder with open files cannot be remounted read-only (busy), so the instance starts again on a read-only view of it.
    const dir = mkdtempSync(join(tmpdir(), "hearth-ro-"));
    const view = mkdtempSync(join(tmpdir(), "hearth-ro-view-"));
    const first = await startHearth({ dataDir: dir, env: QUIET });
    const token = await first.token("alice");
    const acked = await writeSome(first, token, "before", 20);
    const put = await first.call("files/put", { name: "kept.txt", content: "kept bytes" }, { token });
    await first.stop();
    expect(sh(["mount", "--bind", dir, view]).status).toBe(0);
    mounts.push(view);
    expect(sh(["mount", "-o", "remount,ro,bind", view]).status).toBe(0);
    const h = await startHearth({ dataDir: view, env: QUIET });
    try {
      storageRefusal(await h.call("notes/add", { title: "nope", text: "x" }, { token }), /read-only/i);
      storageRefusal(await h.call("files/put", { name: "nope.txt", content: "z" }, { token }), /read-only/i);
      await readsStillWork(h, token, acked);
      const file = await fetch(`${h.url}/files/${put.body.result.id}`, { headers: { authorization: `Bearer ${token}` } });
      expect(await file.text()).toBe("kept bytes");
    } finally {
      await h.stop();
    }
    const db = new Database(join(dir, "hearth.db"), { readonly: true });
    expect((db.query("PRAGMA integrity_check").get() as { integrity_check: string }).integrity_check).toBe("ok");
    expect((db.query("SELECT count(*) AS n FROM notes").get() as { n: number }).n).toBe(acked.size);
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
});

test.skipIf(root || process.env.HEARTH_TEST_DB === "pg")("a read-only data folder (by permissions, without root; SQLite only, skipped on PostgreSQL): writes fail with a clear 5xx, reads keep working", async () => {
  const dir = mkdtempSync(join(tmpdir(), "hearth-ro-"));
  const h = await startHearth({ dataDir: dir, env: QUIET });
  try {
    const token = await h.token("alice");
    const acked = await writeSome(h, token, "before", 10);
    for (const f of readdirSync(dir)) chmodSync(join(dir, f), 0o444);
    chmodSync(dir, 0o555);
    storageRefusal(await h.call("files/put", { name: "nope.txt", content: "z" }, { token }), /read-only|may not write/i);
    await readsStillWork(h, token, acked);
  } finally {
    chmodSync(dir, 0o755);
    await h.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("every provider down, slow or answering garbage at once: the rest of the instance stays responsive, and every outside call ends in a clear refusal", async () => {
  const down = garbageUpstream("down");
  const slow = garbageUpstream("slow");
  const garbage = garbageUpstream("garbage");
  const undo = refuseOutside();
  // Longer than the local calls below take on a busy machine: the slow provider's calls must still be waiting then.
  const env = await hostileEnv(garbage.url, { timeoutMs: 600_000 });
  // A third of the providers each way.
  allProviders().forEach((p, i) => (env[`${p.name}_URL`] = [down.url, slow.url, garbage.url][i % 3]));
  // Each provider lets only so many requests wait on it at once, so the slow one can be holding no more than this.
  const slowCap = allProviders()
    .filter((_, i) => i % 3 === 1)
    .reduce((n, p) => n + (p.concurrency ?? 4), 0);
  const h = await startHearth({ env: { ...env, HEARTH_METERING: "off" }, clock: new TestClock() });
  try {
    const token = await h.token("alice");
    const reg = await buildRegistry({ pluginsDir: join(import.meta.dir, "..", "..", "plugins") });
    const outside = reg.list().filter((e) => e.def.access === "public" && e.def.kind === "read" && e.def.openWorld);
    expect(outside.length).toBeGreaterThan(10);
    // Each outside method, several times over, all at once.
    const inFlight = outside.flatMap((e) => [0, 1, 2, 3, 4].map(() => h.call(e.path, minimalArgs(e.def.args), { method: "POST" }).then((r) => ({ e, r }))));
    let settled = 0;
    for (const p of inFlight) p.then(() => settled++);
    // While the slow provider still holds its answers, local work goes through, one call after another.
    for (let i = 0; i < 20; i++) {
      const add = await h.call("notes/add", { title: `local ${i}`, text: "still here" }, { token });
      expect(add.status).toBe(200);
      expect((await h.call("notes/get", { title: `local ${i}` }, { token })).status).toBe(200);
    }
    expect((await fetch(`${h.url}/health`)).status).toBe(200);
    expect(slow.hits()).toBeGreaterThan(0);
    expect(slow.hits()).toBeLessThanOrEqual(slowCap);
    expect(settled).toBeLessThan(inFlight.length);
    // Let the slow provider answer (badly); every outside call then ends in the error shape, none in a 500.
    slow.stop();
    const problems: string[] = [];
    for (const { e, r } of await Promise.all(inFlight)) {
      if (r.status === 500) problems.push(`${e.path}: 500 ${JSON.stringify(r.body)}`);
      else if (r.status !== 200) {
        const p = errorShapeProblem(r.status, r.body);
        if (p) problems.push(`${e.path}: ${p}`);
      }
    }
    expect(problems).toEqual([]);
  } finally {
    await h.stop();
    down.stop();
    garbage.stop();
    slow.stop();
    undo();
  }
});
