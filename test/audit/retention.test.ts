// The retention sweep goes by id (the log keeps no index on the time) and
// never removes the newest entry, so ids only grow: a page's or an export's
// cursor never meets an id given twice, even after a sweep that found every
// entry old. Entries are never changed, and the newest never removed, whoever
// asks. And a log written before this shape (AUTOINCREMENT, a time index,
// each entry holding every value itself) is carried over with its ids and
// reads back the same.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { auditMigrations } from "../../core/audit/migrations.ts";
import { applyMigrations, readMigrations, type MigrationSet } from "../../core/db/migrate.ts";
import { pgMigrationsOf } from "../../core/db/owners.ts";
import { PgStore } from "../../core/db/pg.ts";
import { isPg } from "../../core/db/store.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { startPg } from "../pg.ts";

const DAY = 86_400_000;
const clock = new TestClock(new Date("2026-11-21T09:00:00Z").getTime());
let h: Hearth;
let alice: string;

beforeAll(async () => {
  h = await startHearth({ clock, env: { HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0", HEARTH_RATE_PRICED: "0" } });
  alice = await h.token("alice");
});
afterAll(async () => {
  await h?.stop();
});

interface Entry {
  id: number;
  args: string;
}
async function entries(): Promise<Entry[]> {
  await h.rt.audit!.flush();
  return (await h.rows<Entry>("SELECT id, args FROM audit_log ORDER BY id")).map((e) => ({ ...e, id: Number(e.id) }));
}
async function read(title: string) {
  expect((await h.call("notes/get", { title }, { token: alice })).status).toBe(404);
}
/** The error a statement met, as text (the PostgreSQL client's carries the database's message in its cause). */
async function refusal(text: string): Promise<string> {
  const e = await h.exec(text).then(
    () => null,
    (err: Error) => err,
  );
  return String(e) + String((e as { cause?: unknown } | null)?.cause);
}

test("entries older than HEARTH_AUDIT_DAYS go, oldest first by id; younger ones stay", async () => {
  for (let i = 0; i < 5; i++) await read(`old ${i}`);
  // A write's entry, kept in its own transaction, among them.
  expect((await h.call("notes/add", { title: "old write", text: "t" }, { token: alice })).status).toBe(200);
  await entries();
  clock.advance(60 * DAY);
  for (let i = 0; i < 3; i++) await read(`young ${i}`);
  await entries();
  clock.advance(31 * DAY);
  expect(await h.rt.audit!.prune()).toBe(6);
  expect((await entries()).map((e) => JSON.parse(e.args).title)).toEqual(["young 0", "young 1", "young 2"]);
  // Nothing more to remove the same day.
  expect(await h.rt.audit!.prune()).toBe(0);
});

test("a sweep that finds every entry old keeps the newest, and ids go on growing past every id given", async () => {
  const before = await entries();
  const high = Math.max(...before.map((e) => e.id));
  clock.advance(200 * DAY);
  expect(await h.rt.audit!.prune()).toBe(before.length - 1);
  const left = await entries();
  expect(left.map((e) => e.id)).toEqual([high]);
  // Swept again, later still: the newest stays.
  clock.advance(200 * DAY);
  expect(await h.rt.audit!.prune()).toBe(0);
  await read("after the sweep");
  const now = await entries();
  expect(now.length).toBe(2);
  expect(now[1].id).toBeGreaterThan(high);
  expect(JSON.parse(now[1].args).title).toBe("after the sweep");
});

test("no entry is changed, and the newest is never removed, whoever asks", async () => {
  await read("kept");
  const before = await entries();
  expect(await refusal("UPDATE audit_log SET args = '{}'")).toContain("append-only");
  expect(await refusal("DELETE FROM audit_log WHERE id = (SELECT max(id) FROM audit_log)")).toContain("append-only");
  // A delete taking the newest with the rest is refused whole.
  expect(await refusal("DELETE FROM audit_log")).toContain("append-only");
  expect(await entries()).toEqual(before);
});

/** The audit owner's migrations up to and including `tag`. */
const upTo = (set: MigrationSet, tag: string): MigrationSet => {
  const last = set.journal.entries.find((e) => e.tag === tag)!.idx;
  return { journal: { entries: set.journal.entries.filter((e) => e.idx <= last) }, sql: set.sql };
};
const COLUMNS = "at, call_id, account, via, credential, credential_name, surface, service, method, args, args_hash, credits, paid, outcome, status, approved";
/** An entry as the log kept it before kinds: `n` varies the caller, the method and the outcome, so the log holds several kinds, nulls among them. */
const VALUES = (at: number, title: string, n = 0) => [
  at,
  `call-${title}`,
  n % 3 === 2 ? null : "acct",
  n % 3 === 2 ? "none" : "token",
  n % 3 === 2 ? null : "tok",
  n % 3 === 2 ? null : "laptop",
  n % 2 ? "mcp" : "http",
  "notes",
  n % 2 ? "add" : "get",
  JSON.stringify({ title }),
  `h${n}`,
  n,
  n === 4 ? "1000" : null,
  n % 3 === 2 ? "unauthenticated" : "ok",
  n % 3 === 2 ? 401 : 200,
  n % 3 === 2 ? "nobody" : "policy",
];
const TITLES = ["a", "b", "c", "e", "f", "g"];
/** An entry as the log keeps it now, of the first kind there is. */
const NEW_ROW = "INSERT INTO audit_log (at, call_id, account, kind, args, args_hash, credits, paid) VALUES (2, 'call-d', 'acct', (SELECT min(id) FROM audit_kinds), '{\"title\":\"d\"}', NULL, 0, NULL)";
type Whole = Record<string, unknown>;
/** Numbers as numbers, whichever the store gives (PostgreSQL's bigint is text). */
const plain = (rows: Whole[]) => rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === "string" && ["id", "at", "credits", "status"].includes(k) ? Number(v) : v])));

test("a log written before the time index went, and before kinds, is carried over with its ids and every value, and goes on from the highest ever given", async () => {
  if (isPg(h.rt.store)) {
    const set = readMigrations(pgMigrationsOf("audit"))!;
    const store = new PgStore(await (await startPg()).database());
    try {
      await store.migrate([{ owner: "audit", set: upTo(set, "0000_schema") }]);
      const insert = `INSERT INTO audit_log (${COLUMNS}) VALUES (${VALUES(0, "").map((_, i) => `$${i + 1}`).join(", ")})`;
      for (const [n, t] of TITLES.entries()) await store.sql.unsafe(insert, VALUES(1, t, n));
      await store.sql.unsafe("DELETE FROM audit_log WHERE args LIKE '%\"a\"%'");
      await store.migrate([{ owner: "audit", set: upTo(set, "0001_schema") }]);
      const before = plain((await store.sql.unsafe(`SELECT id, ${COLUMNS} FROM audit_log ORDER BY id`)) as Whole[]);
      await store.migrate([{ owner: "audit", set }]);
      // Every entry reads back as it was; the five kept hold four kinds (the second and the fourth are alike).
      expect(plain((await store.sql.unsafe(`SELECT id, ${COLUMNS} FROM audit_entries ORDER BY id`)) as Whole[])).toEqual(before);
      expect(Number(((await store.sql.unsafe("SELECT count(*) AS n FROM audit_kinds")) as { n: string }[])[0].n)).toBe(4);
      await store.sql.unsafe(NEW_ROW);
      const rows = (await store.sql.unsafe("SELECT id::int AS id, args FROM audit_log ORDER BY id")) as Entry[];
      expect(rows.map((r) => [r.id, JSON.parse(r.args).title])).toEqual([
        [2, "b"],
        [3, "c"],
        [4, "e"],
        [5, "f"],
        [6, "g"],
        [7, "d"],
      ]);
      expect(((await store.sql.unsafe("SELECT indexname FROM pg_indexes WHERE tablename = 'audit_log' ORDER BY 1")) as { indexname: string }[]).map((r) => r.indexname)).toEqual([
        "audit_log_account",
        "audit_log_pkey",
      ]);
      expect(String(await store.sql.unsafe("DELETE FROM audit_log").catch((e: Error) => e))).toContain("append-only");
      expect(String(await store.sql.unsafe("UPDATE audit_log SET at = 0").catch((e: Error) => e))).toContain("append-only");
      expect(String(await store.sql.unsafe("UPDATE audit_kinds SET outcome = 'ok'").catch((e: Error) => e))).toContain("append-only");
      expect(String(await store.sql.unsafe("DELETE FROM audit_kinds").catch((e: Error) => e))).toContain("append-only");
    } finally {
      await store.close();
    }
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), "hearth-audit-migrate-"));
  const db = new Database(join(dir, "hearth.db"));
  try {
    applyMigrations(db, "audit", upTo(auditMigrations, "0000_audit_log"));
    const insert = db.prepare(`INSERT INTO audit_log (${COLUMNS}) VALUES (${VALUES(0, "").map(() => "?").join(", ")})`);
    for (const [n, t] of TITLES.entries()) insert.run(...(VALUES(1, t, n) as [number]));
    // The oldest swept by the retention of then.
    db.run("DELETE FROM audit_log WHERE args LIKE '%\"a\"%'");
    applyMigrations(db, "audit", upTo(auditMigrations, "0001_no_time_index"));
    const before = db.query<Whole, []>(`SELECT id, ${COLUMNS} FROM audit_log ORDER BY id`).all();
    applyMigrations(db, "audit", auditMigrations);
    // Every entry reads back as it was; the five kept hold four kinds (the second and the fourth are alike).
    expect(db.query<Whole, []>(`SELECT id, ${COLUMNS} FROM audit_entries ORDER BY id`).all()).toEqual(before);
    expect(db.query<{ n: number }, []>("SELECT count(*) AS n FROM audit_kinds").get()!.n).toBe(4);
    db.run(NEW_ROW);
    const rows = db.query<Entry, []>("SELECT id, args FROM audit_log ORDER BY id").all();
    // Ids kept, and the next counts on from the newest.
    expect(rows.map((r) => [r.id, JSON.parse(r.args).title])).toEqual([
      [2, "b"],
      [3, "c"],
      [4, "e"],
      [5, "f"],
      [6, "g"],
      [7, "d"],
    ]);
    expect(db.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE tbl_name = 'audit_log' AND type IN ('index', 'trigger') ORDER BY name").all().map((r) => r.name)).toEqual([
      "audit_log_account",
      "audit_log_keep_newest",
      "audit_log_no_update",
    ]);
    expect(db.query("SELECT name FROM sqlite_master WHERE name = 'sqlite_sequence'").get() === null || db.query("SELECT * FROM sqlite_sequence WHERE name = 'audit_log'").get() === null).toBe(true);
    expect(() => db.run("DELETE FROM audit_log")).toThrow("append-only");
    expect(() => db.run("UPDATE audit_log SET at = 0")).toThrow("append-only");
    expect(() => db.run("UPDATE audit_kinds SET outcome = 'ok'")).toThrow("append-only");
    expect(() => db.run("DELETE FROM audit_kinds")).toThrow("append-only");
    expect(db.query<{ n: number }, []>("SELECT count(*) AS n FROM audit_log").get()!.n).toBe(6);
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
