// The WAL is checkpointed beside the event loop: the writer never runs a
// checkpoint (and its fsync) inside a request, and what requests wrote still
// reaches the database file without anyone asking.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { statSync } from "node:fs";
import { join } from "node:path";
import { startHearth, type Hearth } from "../harness.ts";

let h: Hearth;
let token: string;
beforeAll(async () => {
  h = await startHearth();
  token = await h.token("alice");
});
afterAll(() => h.stop());

test("a commit never checkpoints on the writer connection", () => {
  expect(h.rt.store.writer.query("PRAGMA wal_autocheckpoint").get()).toEqual({ wal_autocheckpoint: 0 });
});

test("what a request wrote is copied from the WAL into the database file with no further request", async () => {
  const file = join(h.dir, "hearth.db");
  const before = statSync(file).size;
  // ~250 pages: far below the 1,000 at which SQLite would checkpoint on its own.
  const r = await h.call("notes/add", { title: "long", text: "a line of a long note\n".repeat(45_000) }, { token });
  expect(r.status).toBe(200);
  const deadline = Date.now() + 10_000;
  while (statSync(file).size < before + 900_000 && Date.now() < deadline) await Bun.sleep(25);
  expect(statSync(file).size).toBeGreaterThanOrEqual(before + 900_000);
  expect((await h.call("notes/get", { title: "long" }, { token })).body.result.text.length).toBe(45_000 * 22);
});
