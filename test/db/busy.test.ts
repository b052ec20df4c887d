// Another process holding the SQLite file's write lock past busy_timeout (as
// several instances on one file can on a loaded machine) is the database's
// trouble, not a bug: the write answers 503 storage_unavailable, retry true,
// nothing of it written, and the same call answers once the lock is let go.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { startHearth, type Hearth } from "../harness.ts";

const ON_SQLITE = process.env.HEARTH_TEST_DB !== "pg";
let h: Hearth;
let token: string;

beforeAll(async () => {
  if (!ON_SQLITE) return;
  h = await startHearth();
  token = await h.token("alice");
});
afterAll(() => h?.stop());

test.skipIf(!ON_SQLITE)("a write that waited past the lock's timeout is a 503 to send again, and nothing of it is written", async () => {
  const other = new Database(join(h.dir, "hearth.db"));
  other.run("BEGIN IMMEDIATE");
  let r;
  try {
    r = await h.call("notes/add", { title: "held", text: "waits" }, { token });
  } finally {
    other.run("ROLLBACK");
    other.close();
  }
  expect(r.status).toBe(503);
  expect(r.body.error.kind).toBe("storage_unavailable");
  expect(r.body.error.retry).toBe(true);
  expect(await h.rows("SELECT title FROM notes WHERE title = ?", "held")).toEqual([]);
  const again = await h.call("notes/add", { title: "held", text: "waits" }, { token });
  expect(again.status).toBe(200);
});
