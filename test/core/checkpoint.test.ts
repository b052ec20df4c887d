// The WAL is checkpointed beside the event loop: the writer never runs a
// checkpoint (and its fsync) inside a request, and what requests wrote still
// reaches the database file without anyone asking.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { statSync } from "node:fs";
import { join } from "node:path";
import { startHearth, type Hearth } from "../harness.ts";

// SQLite's WAL only: PostgreSQL keeps and checkpoints its own, outside the instance.
describe.skipIf(process.env.HEARTH_TEST_DB === "pg")("SQLite's WAL (skipped on PostgreSQL, which checkpoints its own WAL)", () => {
let h: Hearth;
let token: string;
beforeAll(async () => {
  // No rate limits: the flood below must reach the store.
  h = await startHearth({ env: { HEARTH_RATE_WRITES: "0", HEARTH_RATE_READS: "0" } });
  token = await h.token("alice");
});
afterAll(() => h.stop());

test("a new data folder's migrations are folded into the database file at start, so an idle instance starts no checkpoint worker", () => {
  // Its migrations alone wrote over a megabyte, past the size at which the worker (a second VM) starts.
  expect(statSync(join(h.dir, "hearth.db")).size).toBeGreaterThan(256 * 1024);
  expect(statSync(join(h.dir, "hearth.db-wal")).size).toBeLessThan(256 * 1024);
  expect((h.rt.store as unknown as { checkpointer: Worker | null }).checkpointer).toBeNull();
});

test("a commit never checkpoints on the writer connection", () => {
  expect(h.rt.store.writer.query("PRAGMA wal_autocheckpoint").get()).toEqual({ wal_autocheckpoint: 0 });
});

test("what a request wrote is copied from the WAL into the database file with no further request", async () => {
  const file = join(h.dir, "hearth.db");
  const before = statSync(file).size;
  // ~250 pages: far below the 1,000 at which SQLite would checkpoint on its own.
  const r = await h.call("notes/add", { title: "long", text: "a line of a long note\n".repeat(45_000) }, { token });
  expect(r.status).toBe(200);
  while (statSync(file).size < before + 900_000) await Bun.sleep(25);
  expect(statSync(file).size).toBeGreaterThanOrEqual(before + 900_000);
  expect((await h.call("notes/get", { title: "long" }, { token })).body.result.text.length).toBe(45_000 * 22);
});

test("under writes that never pause, the WAL starts again from the top instead of growing with everything written", async () => {
  const wal = join(h.dir, "hearth.db-wal");
  // A smaller limit than the default, so a flood of a few times it is quick to send.
  const limit = 8 << 20;
  h.rt.store.limitWal(limit);
  const text = "x".repeat(16 * 1024);
  const perClient = 64;
  const clients = 32;
  let largest = 0;
  let writing = true;
  const watch = (async () => {
    while (writing) {
      largest = Math.max(largest, statSync(wal, { throwIfNoEntry: false })?.size ?? 0);
      await Bun.sleep(20);
    }
  })();
  // Each client sends its next write as soon as the last is answered: with this many, the writer's queue is never empty.
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let i = 0; i < perClient; i++) {
        const r = await h.call("notes/add", { title: `flood ${c}`, text: `${i} ${text}` }, { token });
        expect(r.status).toBe(200);
        expect((await h.call("notes/get", { title: `flood ${c}` }, { token })).status).toBe(200);
      }
    }),
  );
  writing = false;
  await watch;
  const written = clients * perClient * text.length;
  // Had the WAL never started again it would hold every page written, four times the limit; it stays near the limit
  // (past it by the writes already queued when a commit found it full).
  expect(written).toBeGreaterThanOrEqual(4 * limit);
  expect(largest).toBeGreaterThan(0);
  expect(largest).toBeLessThan(limit + (4 << 20));
  expect((await h.call("notes/get", { title: "flood 31" }, { token })).body.result.text).toBe(`${perClient - 1} ${text}`);
});
});
