import { expect, test } from "bun:test";
import { Store } from "../../core/db/index.ts";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
test("a timer set inside a write takes the lock when it runs later", async () => {
  const s = new Store(join(mkdtempSync(join(tmpdir(), "tx-")), "db"));
  s.writer.run("CREATE TABLE t (v INTEGER)");
  let later: Promise<unknown> | null = null;
  await s.write(() => {
    s.writer.run("INSERT INTO t VALUES (1)");
    setTimeout(() => { later = (async () => { expect(s.inWrite()).toBe(false); await s.write(() => s.writer.run("INSERT INTO t VALUES (2)")); })(); }, 5);
  });
  await Bun.sleep(20);
  await later;
  expect(s.reader.query("SELECT count(*) AS n FROM t").get()).toEqual({ n: 2 });
});
