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

test("work left for after a write runs once it commits, still before the next write, and never when it rolls back", async () => {
  const s = new Store(join(mkdtempSync(join(tmpdir(), "tx-")), "db"));
  s.writer.run("CREATE TABLE t (v INTEGER)");
  const seen: string[] = [];
  const first = s.write(async () => {
    s.writer.run("INSERT INTO t VALUES (1)");
    await s.onCommit(() => void seen.push(`after 1: ${JSON.stringify(s.reader.query("SELECT count(*) AS n FROM t").get())}`));
    seen.push("end of 1");
  });
  const second = s.write(() => void seen.push("write 2"));
  const failed = s.write(async () => {
    s.writer.run("INSERT INTO t VALUES (3)");
    await s.onCommit(() => void seen.push("after 3"));
    throw new Error("undone");
  });
  await first;
  await second;
  expect(await failed.catch((e: Error) => e.message)).toBe("undone");
  expect(seen).toEqual(["end of 1", 'after 1: {"n":1}', "write 2"]);
});
