// one store: it runs on a PostgreSQL cluster of its own whichever the pass, so the PostgreSQL pass would only run it again the same
// The PostgreSQL store, driven directly with the plugins' own sqliteTable
// definitions and drizzle's SQLite builders, on a loopback cluster.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { and, asc, desc, eq, sql } from "drizzle-orm";
import { blob, integer, real, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { generateDrizzleJson, generateMigration } from "drizzle-kit/api";
import { SqliteStore } from "../../core/db/index.ts";
import { lastly, type Lastly } from "../../core/db/store.ts";
import { prepared } from "../../core/db/prepared.ts";
import type { Db } from "../../core/plugin.ts";
import { makeIndex, makePgIndex } from "../../core/db/fts.ts";
import { readMigrations } from "../../core/db/migrate.ts";
import { PgStore } from "../../core/db/pg.ts";
import { migratePg, pgOwners, type PgOwner } from "../../core/db/pgmigrate.ts";
import { pgTablesOf } from "../../core/db/pgschema.ts";
import { activity } from "../../core/db/schema.ts";
import { notes } from "../../plugins/notes/schema.ts";
import { tasks } from "../../plugins/tasks/schema.ts";
import { startPg, type Pg } from "../pg.ts";

const plugin = (name: string) => ({ name, file: join(import.meta.dir, "..", "..", "plugins", name, "index.ts"), hasMigrations: true, tables: [name] });
const owners: PgOwner[] = pgOwners([], [plugin("notes"), plugin("tasks")]);

let pg: Pg;
let store: PgStore;
beforeAll(async () => {
  pg = await startPg();
  store = new PgStore(await pg.database());
  await migratePg(store, owners);
  // initdb and the first start take seconds on a loaded machine.
});
afterAll(async () => {
  await store.close();
});

const note = (title: string, text = "t") => ({ owner: "alice", title, text, created: 1, updated: 1 });

test("insert, select, update and delete run through drizzle's SQLite builders, returning what SQLite would", async () => {
  const db = store.wdb;
  const made = await store.write(() => db.insert(notes).values([note("a", "one"), note("b", "two")]).returning());
  expect(made.map((r) => r.title)).toEqual(["a", "b"]);
  expect(made[0]).toEqual({ owner: "alice", title: "a", text: "one", created: 1, updated: 1 });
  const changed = await store.write(() => db.update(notes).set({ text: "uno", updated: 2 }).where(and(eq(notes.owner, "alice"), eq(notes.title, "a"))).run());
  expect(changed.changes).toBe(1);
  expect(await store.rdb.select().from(notes).where(eq(notes.title, "a")).get()).toEqual({ owner: "alice", title: "a", text: "uno", created: 1, updated: 2 });
  expect(await store.rdb.select({ n: sql<number>`count(*)` }).from(notes).get()).toEqual({ n: 2 });
  const gone = await store.write(() => db.delete(notes).where(eq(notes.title, "b")).returning({ title: notes.title }));
  expect(gone).toEqual([{ title: "b" }]);
  expect((await store.rdb.select().from(notes).all()).map((r) => r.title)).toEqual(["a"]);
  // A raw statement's rows are read by name, as bun:sqlite gives them.
  const raw = await store.rdb.all<{ title: string }>(sql`SELECT title FROM notes`);
  expect(raw[0].title).toBe("a");
  await store.write(() => db.delete(notes).run());
});

test("onConflictDoUpdate and onConflictDoNothing keep SQLite's meaning", async () => {
  const db = store.wdb;
  await store.write(() => db.insert(notes).values(note("c", "first")).run());
  await store.write(() =>
    db
      .insert(notes)
      .values(note("c", "second"))
      .onConflictDoUpdate({ target: [notes.owner, notes.title], set: { text: sql`excluded.text || '!'` } })
      .run(),
  );
  const skipped = await store.write(() => db.insert(notes).values(note("c", "third")).onConflictDoNothing().run());
  expect(skipped.changes).toBe(0);
  expect((await store.rdb.select().from(notes).where(eq(notes.title, "c")).get())?.text).toBe("second!");
  await store.write(() => db.delete(notes).run());
});

test("prepared statements with placeholders, kept per database as the plugins keep them, run on PostgreSQL", async () => {
  const upsert = (db: Db) =>
    db
      .insert(notes)
      .values({ owner: sql.placeholder("owner"), title: sql.placeholder("title"), text: sql.placeholder("text"), created: sql.placeholder("now"), updated: sql.placeholder("now") })
      .onConflictDoUpdate({ target: [notes.owner, notes.title], set: { text: sql`excluded.text`, updated: sql`excluded.updated` } })
      .returning()
      .prepare();
  const byTitle = (db: Db) => db.select().from(notes).where(and(eq(notes.owner, sql.placeholder("owner")), eq(notes.title, sql.placeholder("title")))).prepare();
  await store.write(() => prepared(store.wdb, upsert).all({ owner: "alice", title: "p", text: "one", now: 1 }));
  const [row] = await store.write(() => prepared(store.wdb, upsert).all({ owner: "alice", title: "p", text: "two", now: 2 }));
  expect(row).toEqual({ owner: "alice", title: "p", text: "two", created: 1, updated: 2 });
  expect(await prepared(store.rdb, byTitle).get({ owner: "alice", title: "p" })).toEqual(row);
  expect(await prepared(store.rdb, byTitle).get({ owner: "bob", title: "p" })).toBeUndefined();
  await store.write(() => store.wdb.delete(notes).run());
});

test("a write that throws leaves nothing, nested writes included", async () => {
  const db = store.wdb;
  const failed = store.write(async () => {
    await db.insert(notes).values(note("x")).run();
    await store.write(() => db.insert(notes).values(note("y")).run());
    expect(store.inWrite()).toBe(true);
    // Not yet committed: a read sees nothing of it.
    expect(await store.rdb.select().from(notes).all()).toEqual([]);
    throw new Error("undone");
  });
  expect(await failed.catch((e: Error) => e.message)).toBe("undone");
  expect(await store.rdb.select().from(notes).all()).toEqual([]);
  // A statement PostgreSQL refuses rolls the write back too, and says why.
  const bad = await store
    .write(async () => {
      await db.insert(notes).values(note("z")).run();
      await db.insert(notes).values(note("z")).run();
    })
    .catch((e: Error) => `${e.message} ${(e.cause as Error | undefined)?.message}`);
  expect(bad).toContain("duplicate key value violates unique constraint");
  expect(await store.rdb.select().from(notes).all()).toEqual([]);
});

test("drizzle's db.transaction() is refused with the reason rather than ending the call's transaction early", async () => {
  const db = store.wdb;
  const inside = await store
    .write(async () => {
      await db.insert(notes).values(note("kept?")).run();
      await db.transaction(async (tx) => void (await tx.insert(notes).values(note("nested")).run()));
      throw new Error("not reached");
    })
    .catch((e: Error) => `${e.message} ${(e.cause as Error | undefined)?.message}`);
  expect(inside).toContain("each write call is already one transaction");
  expect(await store.rdb.select().from(notes).all()).toEqual([]);
});

test("SQL fragments written for SQLite keep their meaning: two-argument max, LIKE ignoring case, a blob cast, sums, insert or ignore", async () => {
  const db = store.wdb;
  await store.write(() => db.insert(notes).values([note("Shopping", "héllo"), note("shop_2", "x"), note("other", "y")]).run());
  await store.write(() => db.update(notes).set({ updated: sql`max(${notes.updated}, ${5})`, created: sql`min(${notes.created}, ${0})` }).where(eq(notes.title, "other")).run());
  expect(await store.rdb.select({ u: notes.updated, c: notes.created }).from(notes).where(eq(notes.title, "other")).get()).toEqual({ u: 5, c: 0 });
  const like = await store.rdb.select({ t: notes.title }).from(notes).where(sql`${notes.title} LIKE ${"SHOP%"}`).orderBy(notes.title).all();
  expect(like.map((r) => r.t)).toEqual(["Shopping", "shop_2"]);
  const escaped = await store.rdb.select({ t: notes.title }).from(notes).where(sql`${notes.title} LIKE ${"shop\\_%"} ESCAPE '\\'`).all();
  expect(escaped.map((r) => r.t)).toEqual(["shop_2"]);
  expect(await store.rdb.select({ n: sql<number>`length(cast(${notes.text} as blob))` }).from(notes).where(eq(notes.title, "Shopping")).get()).toEqual({ n: 6 });
  expect(await store.rdb.select({ n: sql<number>`coalesce(sum(${notes.created}), 0)` }).from(notes).get()).toEqual({ n: 2 });
  expect(await store.rdb.select({ t: notes.title }).from(notes).where(sql`substr(${notes.title}, 1, ${4}) = ${"shop"}`).all()).toEqual([{ t: "shop_2" }]);
  const ignored = await store.write(() => db.run(sql`INSERT OR IGNORE INTO notes (owner, title, text, created, updated) VALUES (${"alice"}, ${"other"}, ${"z"}, 1, 1)`));
  expect(ignored.changes).toBe(0);
  await store.write(() => db.delete(notes).run());
});

test("work left for after a write runs once it commits, and never when it rolls back", async () => {
  const db = store.wdb;
  const seen: string[] = [];
  const first = store.write(async () => {
    await db.insert(notes).values(note("one")).run();
    await store.onCommit(async () => void seen.push(`after 1: ${(await store.rdb.select().from(notes).all()).length}`));
    seen.push("end of 1");
  });
  const second = store.write(() => void seen.push("write 2"));
  const failed = store.write(async () => {
    await db.insert(notes).values(note("three")).run();
    await store.onCommit(() => void seen.push("after 3"));
    throw new Error("undone");
  }).catch((e: Error) => e.message);
  await first;
  await second;
  expect(await failed).toBe("undone");
  // Writes run side by side: the second may end before the first, but what the first left runs only after it committed.
  expect(seen.filter((s) => s !== "write 2")).toEqual(["end of 1", "after 1: 1"]);
  expect(seen).toContain("write 2");
  await store.write(() => db.delete(notes).run());
});

/**
 * A store whose connection to the cluster goes through a proxy that keeps
 * what it says, beside one connected directly; `runs()` counts the
 * statements run since `reset()`: each an Execute ("E", a prepared one's,
 * BEGIN's and COMMIT's included: their text is not sent again) or a simple
 * Query ("Q").
 */
async function overProxy() {
  const { createServer, connect } = await import("node:net");
  const url = new URL(await pg.database());
  const cluster = Number(url.port);
  let said = "";
  const proxy = createServer((c) => {
    const up = connect(cluster, "127.0.0.1");
    c.on("data", (b) => {
      said += b.toString("latin1");
      up.write(b);
    });
    up.pipe(c);
    for (const [a, b] of [[c, up], [up, c]]) {
      a.on("error", () => {});
      a.on("close", () => b.destroy());
    }
  });
  await new Promise<void>((ok) => proxy.listen(0, "127.0.0.1", ok));
  const direct = new PgStore(url.toString(), { max: 2 });
  const database = url.pathname.slice(1);
  url.port = String((proxy.address() as { port: number }).port);
  // One connection, so a write finds its statements prepared by the one before.
  const through = new PgStore(url.toString(), { max: 1 });
  return {
    direct,
    through,
    reset: () => void (said = ""),
    runs() {
      const bytes = Buffer.from(said, "latin1");
      let n = 0;
      for (let at = 0; at + 5 <= bytes.length; at += 1 + bytes.readInt32BE(at + 1)) if (bytes[at] === 0x45 || bytes[at] === 0x51) n++;
      return n;
    },
    /** Resolves once a statement of this database waits for a lock. */
    async waiting() {
      const count = async () =>
        ((await direct.sql.unsafe("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'", [database])) as { n: number }[])[0].n;
      while ((await count()) === 0) await Bun.sleep(20);
      // Every chance to send what the write would send before the statement's answer.
      await Bun.sleep(100);
    },
    async close() {
      await through.close();
      await direct.close();
      proxy.close();
    },
  };
}

test("what a write sends with its COMMIT goes out with the COMMIT, not a round trip ahead of it: the COMMIT is on the wire while the statement before it still runs", async () => {
  const { direct, through, reset, runs, waiting, close } = await overProxy();
  const LOCK = 4242;
  const write = () =>
    through.write(async () => {
      await through.wdb.run(sql`insert into marks (n) values (${1})`);
      expect(through.sendWithCommit("SELECT pg_advisory_xact_lock($1)", [LOCK])).toBe(true);
    });
  const held = await direct.sql.reserve();
  try {
    await direct.sql.unsafe("CREATE TABLE marks (n INT NOT NULL)");
    await write();
    // The statement sent with the COMMIT waits for a lock this other connection holds: the COMMIT is on the wire already, or not yet.
    await held.unsafe("SELECT pg_advisory_lock($1)", [LOCK]);
    reset();
    const second = write();
    await waiting();
    const sent = runs();
    await held.unsafe("SELECT pg_advisory_unlock($1)", [LOCK]);
    await second;
    // BEGIN, the insert, the statement sent with the COMMIT, and the COMMIT.
    expect(sent).toBe(4);
    expect(((await direct.sql.unsafe("SELECT count(*)::int AS n FROM marks")) as { n: number }[])[0].n).toBe(2);
  } finally {
    await held.unsafe("SELECT pg_advisory_unlock_all()").catch(() => {});
    held.release();
    await close();
  }
});

/** A write of `before` (awaited, each its own statement), then a last statement left to its end, and an entry sent with its COMMIT; its answer once it has committed. */
function lastWrite(store: PgStore, table: string, n: number | null, before: number[] = []) {
  let last!: Lastly<unknown[], unknown[]>;
  return store
    .write(async () => {
      for (const b of before) await store.wdb.run(sql`insert into ${sql.raw(`marks_${table}`)} (n) values (${b})`);
      last = lastly(() => store.wdb.all(sql`insert into ${sql.raw(`rows_${table}`)} (k, n) values (1, ${n}) on conflict (k) do update set n = excluded.n returning n`), (rows) => rows);
      expect(store.settleAtCommit(last)).toBe(true);
      expect(store.sendWithCommit(`INSERT INTO marks_${table} (n) VALUES ($1)`, [n ?? -1])).toBe(true);
    })
    .then(() => last.settle());
}

const tableValues = async (s: PgStore, table: string) => ((await s.sql.unsafe(`SELECT n FROM ${table} ORDER BY n`)) as { n: number }[]).map((r) => r.n);

for (const [what, before, sent] of [
  ["its one statement goes with what is sent with its COMMIT as one statement, no BEGIN, no COMMIT and no connection reserved", [], 1],
  ["after others, it goes out with the COMMIT: BEGIN, the one before it, it, the entry and the COMMIT are on the wire while it waits", [7], 5],
] as const)
  test(`a write's last statement left to its end (Lastly): ${what}, its row locked only while it runs`, async () => {
    const { direct, through, reset, runs, waiting, close } = await overProxy();
    const table = before.length ? "after" : "alone";
    const held = await direct.sql.reserve();
    let reserved = 0;
    const reserve = through.sql.reserve.bind(through.sql);
    through.sql.reserve = (() => {
      reserved++;
      return reserve();
    }) as typeof reserve;
    try {
      await direct.sql.unsafe(`CREATE TABLE rows_${table} (k INT PRIMARY KEY, n INT NOT NULL)`);
      await direct.sql.unsafe(`CREATE TABLE marks_${table} (n INT NOT NULL)`);
      expect(await lastWrite(through, table, 1, [...before])).toEqual([[1]]);
      // The row the statement writes, locked by another transaction.
      await held.unsafe("BEGIN");
      await held.unsafe(`UPDATE rows_${table} SET n = 0 WHERE k = 1`);
      reset();
      const second = lastWrite(through, table, 2, [...before]);
      await waiting();
      const onTheWire = runs();
      await held.unsafe("COMMIT");
      expect(await second).toEqual([[2]]);
      expect(onTheWire).toBe(sent);
      // A connection of its own only for a write with more to send than the one statement.
      expect(reserved).toBe(before.length ? 2 : 0);
      expect(await tableValues(direct, `rows_${table}`)).toEqual([2]);
      expect(await tableValues(direct, `marks_${table}`)).toEqual([...before, 1, ...before, 2].sort((a, b) => a - b));
    } finally {
      await held.unsafe("ROLLBACK").catch(() => {});
      held.release();
      await close();
    }
  });

test("a last statement left to the write's end that fails fails the write with its own error, and nothing sent with the COMMIT stays, alone or after others", async () => {
  for (const table of ["fails_alone", "fails_after"]) {
    await store.sql.unsafe(`CREATE TABLE rows_${table} (k INT PRIMARY KEY, n INT NOT NULL)`);
    await store.sql.unsafe(`CREATE TABLE marks_${table} (n INT NOT NULL)`);
    const failed = await lastWrite(store, table, null, table.endsWith("after") ? [5] : []).then(
      () => "committed",
      (e: Error) => `${e.message} ${(e.cause as Error | undefined)?.message}`,
    );
    expect(failed).toContain("null value");
    expect(await tableValues(store, `marks_${table}`)).toEqual([]);
    expect(await tableValues(store, `rows_${table}`)).toEqual([]);
  }
  // Outside a write: nothing to leave to a COMMIT, and the caller runs it itself.
  expect(store.settleAtCommit(lastly(() => [], (rows) => rows))).toBe(false);
});

test("writes run side by side, and two that each read then write under one lock lose neither change", async () => {
  const db = store.wdb;
  await store.write(() => db.insert(notes).values(note("count", "")).run());
  // Side by side: the first waits for the second to write, which it could not if writes took turns.
  let wrote!: () => void;
  const written = new Promise<void>((r) => (wrote = r));
  const waiting = store.write(async () => {
    await written;
    await db.insert(notes).values(note("waited")).run();
  });
  await store.write(async () => {
    await db.insert(notes).values(note("went first")).run();
  });
  wrote();
  await waiting;
  expect((await store.rdb.select().from(notes).all()).length).toBe(3);
  const append = (s: string) =>
    store.write(async () => {
      await store.lock("count");
      const row = await db.select().from(notes).where(eq(notes.title, "count")).get();
      await Bun.sleep(1);
      await db.update(notes).set({ text: row!.text + s }).where(eq(notes.title, "count")).run();
    });
  await Promise.all([append("a"), append("b"), append("c")]);
  expect((await store.rdb.select().from(notes).where(eq(notes.title, "count")).get())?.text.split("").sort()).toEqual(["a", "b", "c"]);
  await store.write(() => db.delete(notes).run());
});

test("bigint values come back as the numbers SQLite gives, and NULLs order as in SQLite", async () => {
  const db = store.wdb;
  const big = Number.MAX_SAFE_INTEGER;
  const task = (id: string, due: number | null) => ({ id, owner: "alice", title: id, due, created: 1, updated: 1 });
  await store.write(() => db.insert(tasks).values([task("t1", big), task("t2", null), task("t3", 5)]).run());
  const rows = await store.rdb.select({ id: tasks.id, due: tasks.due, status: tasks.status }).from(tasks).orderBy(asc(tasks.due)).all();
  // SQLite puts NULL first ascending and last descending; the defaults come from the column definitions.
  expect(rows).toEqual([
    { id: "t2", due: null, status: "todo" },
    { id: "t3", due: 5, status: "todo" },
    { id: "t1", due: big, status: "todo" },
  ]);
  expect((await store.rdb.select({ id: tasks.id }).from(tasks).orderBy(desc(tasks.due)).all()).map((r) => r.id)).toEqual(["t1", "t3", "t2"]);
  expect(typeof rows[2].due).toBe("number");
  // An expression PostgreSQL answers with a boolean reads as SQLite's 0/1.
  expect(await store.rdb.select({ done: sql<number>`(${tasks.status} = 'todo')` }).from(tasks).where(eq(tasks.id, "t1")).get()).toEqual({ done: 1 });
  await store.write(() => db.delete(tasks).run());
});

// A table of every column kind, made from its sqliteTable by the same converter the migrations come from.
const kinds = sqliteTable("kinds", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  at: integer("at", { mode: "timestamp_ms" }).notNull(),
  secs: integer("secs", { mode: "timestamp" }),
  flag: integer("flag", { mode: "boolean" }).notNull().default(false),
  data: text("data", { mode: "json" }).$type<{ a: number[]; b: string }>(),
  bytes: blob("bytes"),
  ratio: real("ratio"),
});

test("timestamp, boolean, json, blob and real columns round-trip, and an integer primary key is given as SQLite gives a rowid", async () => {
  const ddl = await generateMigration(generateDrizzleJson({}), generateDrizzleJson(pgTablesOf({ kinds })));
  for (const s of ddl) await store.sql.unsafe(s);
  const at = new Date("2026-03-01T12:00:00.123Z");
  const bytes = new Uint8Array([0, 1, 2, 255]);
  const row = { at, secs: new Date("2026-03-01T12:00:00Z"), data: { a: [1, 2], b: "ü" }, bytes, ratio: 0.25 };
  const [{ id }] = await store.write(() => store.wdb.insert(kinds).values(row).returning({ id: kinds.id }));
  const [{ id: id2 }] = await store.write(() => store.wdb.insert(kinds).values({ at, flag: true }).returning({ id: kinds.id }));
  expect(id2).toBe(id + 1);
  const back = await store.rdb.select().from(kinds).where(eq(kinds.id, id)).get();
  expect(back!.at).toEqual(at);
  expect(back!.secs).toEqual(row.secs);
  expect(back!.flag).toBe(false);
  expect(back!.data).toEqual(row.data);
  expect(new Uint8Array(back!.bytes as Uint8Array)).toEqual(bytes);
  expect(back!.ratio).toBe(0.25);
  expect((await store.rdb.select({ flag: kinds.flag }).from(kinds).where(eq(kinds.id, id2)).get())?.flag).toBe(true);
  // Defaults written into the table itself (not only by drizzle) are SQLite's stored values.
  await store.sql.unsafe(`INSERT INTO kinds (at) VALUES (1)`);
  expect((await store.rdb.select({ flag: kinds.flag }).from(kinds).where(eq(kinds.at, new Date(1))).get())?.flag).toBe(false);
});

test("a prepared query reads every column kind as the query builder does, and a failing one names its statement", async () => {
  const byId = (db: Db) =>
    db
      .select()
      .from(kinds)
      .where(eq(kinds.id, sql.placeholder("id")))
      .prepare();
  const all = (db: Db) => db.select().from(kinds).orderBy(asc(kinds.id)).prepare();
  const built = await store.rdb.select().from(kinds).orderBy(asc(kinds.id)).all();
  expect(built.length).toBeGreaterThan(1);
  for (const row of built) {
    const got = await prepared(store.rdb, byId).get({ id: row.id });
    expect(got).toEqual(row);
    expect(typeof got!.id).toBe("number");
  }
  expect(await prepared(store.rdb, all).all()).toEqual(built);
  // Inside a write, on the write's own connection: a row it inserted reads back before its COMMIT.
  const seen = await store.write(async () => {
    const [{ id }] = await store.wdb.insert(kinds).values({ at: new Date(2), flag: true, ratio: 1.5 }).returning({ id: kinds.id });
    return prepared(store.wdb, byId).get({ id });
  });
  expect(seen).toMatchObject({ at: new Date(2), flag: true, ratio: 1.5, secs: null, data: null });
  const gone = sqliteTable("kinds_never_made", { id: integer("id").primaryKey() });
  const missing = (db: Db) =>
    db
      .select()
      .from(gone)
      .where(eq(gone.id, sql.placeholder("id")))
      .prepare();
  const err = (await prepared(store.rdb, missing)
    .get({ id: 1 })
    .catch((e: unknown) => e)) as Error & { query?: string };
  expect(err).toBeInstanceOf(Error);
  expect(err.query).toContain('"kinds_never_made"');
});

test("the core's tables: an identity primary key left out of an insert is filled in", async () => {
  const core = new PgStore(await pg.database());
  try {
    await migratePg(core, [{ owner: "core", dir: owners[0].dir }]);
    const ids = await core.write(() =>
      core.wdb
        .insert(activity)
        .values([
          { at: 1, service: "notes", type: "t", text: "one", data: JSON.stringify({ ref: "r1" }) },
          { at: 2, service: "notes", type: "t", text: "two", data: JSON.stringify({ ref: "r2" }) },
        ])
        .returning({ id: activity.id }),
    );
    expect(ids.map((r) => r.id)).toEqual([1, 2]);
    // json_extract, which SQL fragments written for SQLite call, answers on PostgreSQL too.
    const found = await core.rdb.select({ text: activity.text }).from(activity).where(sql`json_extract(${activity.data}, '$.ref') = ${"r2"}`).all();
    expect(found).toEqual([{ text: "two" }]);
  } finally {
    await core.close();
  }
});

test("full-text search ranks as FTS5's bm25 does on the same entries", async () => {
  const core = new PgStore(await pg.database());
  const dir = mkdtempSync(join(tmpdir(), "hearth-fts-"));
  const lite = new SqliteStore(join(dir, "db"));
  try {
    await migratePg(core, [{ owner: "core", dir: owners[0].dir }]);
    const { applyMigrations } = await import("../../core/db/migrate.ts");
    applyMigrations(lite.writer, "core", readMigrations(join(import.meta.dir, "..", "..", "core", "db", "migrations"))!);
    const entries = [
      { kind: "note", ref: "1", owner: "alice", title: "Garden plan", body: "Tomatoes by the fence, beans along the path." },
      { kind: "note", ref: "2", owner: "alice", title: "Shopping", body: "Milk, eggs, garden gloves and seeds for the garden." },
      { kind: "note", ref: "3", owner: "alice", title: "Gardening gardens", body: "Notes on gardening: the garden needs water." },
      { kind: "note", ref: "4", owner: "bob", title: "Garden", body: "Bob's." },
      { kind: "note", ref: "5", owner: "alice", title: "Travel", body: "Trains to the coast." },
    ];
    const pgIndex = makePgIndex("notes", () => core.wdb, () => core.rdb, (c) => core.write(c));
    await pgIndex.putMany(entries);
    await makeIndex("notes", () => lite.writer, () => lite.reader).putMany(entries);
    // Replacing an entry keeps one copy of it.
    await pgIndex.put({ ...entries[4], body: "Trains to the coast, and a garden on the way." });
    await makeIndex("notes", () => lite.writer, () => lite.reader).put({ ...entries[4], body: "Trains to the coast, and a garden on the way." });
    const q = { query: "garden", owner: "alice" };
    const onPg = await pgIndex.search(q);
    const onLite = await makeIndex("notes", () => lite.writer, () => lite.reader).search(q);
    expect(onLite.map((h) => h.ref)).toEqual(["3", "1", "2", "5"]);
    expect(onPg.map((h) => h.ref)).toEqual(onLite.map((h) => h.ref));
    expect(onPg[0]).toMatchObject({ service: "notes", kind: "note", ref: "3", owner: "alice", title: "Gardening gardens" });
    expect(onPg[0].snippet).toContain("garden");
    // Every word must match, each as a prefix.
    expect((await pgIndex.search({ query: "gard tomat" })).map((h) => h.ref)).toEqual(["1"]);
    expect((await pgIndex.search({ query: "the", owner: "alice", order: "recent" })).map((h) => h.ref)).toEqual(["5", "3", "2", "1"]);
    await pgIndex.remove("note", "3");
    expect((await pgIndex.search(q)).map((h) => h.ref)).toEqual(["1", "2", "5"]);
  } finally {
    await core.close();
    lite.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("two stores migrating one database at once migrate it once", async () => {
  const url = await pg.database();
  const a = new PgStore(url);
  const b = new PgStore(url);
  try {
    const all = pgOwners(["upstream", "scheduler"], [plugin("notes"), plugin("tasks")]);
    const [na, nb] = await Promise.all([migratePg(a, all), migratePg(b, all)]);
    const rows = (await a.sql.unsafe("SELECT owner, tag FROM hearth_migrations ORDER BY owner, tag")) as { owner: string; tag: string }[];
    expect(na + nb).toBe(rows.length);
    expect(Math.min(na, nb)).toBe(0);
    expect(rows.map((r) => r.owner)).toEqual(["core", "core", "core", "core", "core", "notes", "scheduler", "scheduler", "scheduler", "scheduler", "tasks", "tasks", "tasks", "upstream"]);
    // Each finds every owner applied afterwards.
    expect(await migratePg(b, all)).toBe(0);
  } finally {
    await a.close();
    await b.close();
  }
});

test("HEARTH_DATABASE_POOL bounds an instance's connections under concurrent calls, and a stopped instance holds none", async () => {
  const { startHearth } = await import("../harness.ts");
  const url = await pg.database();
  const name = new URL(url).pathname.slice(1);
  const dataDir = mkdtempSync(join(tmpdir(), "hearth-pgpool-"));
  const admin = new PgStore(url.replace(`/${name}`, "/postgres"), { max: 1 });
  const held = async () => ((await admin.sql.unsafe("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1", [name])) as { n: number }[])[0].n;
  try {
    await expect(startHearth({ dataDir, env: { HEARTH_DATABASE_URL: url, HEARTH_DATABASE_POOL: "1" } })).rejects.toThrow("HEARTH_DATABASE_POOL: must be a whole number of at least 2");
    const h = await startHearth({ dataDir, env: { HEARTH_DATABASE_URL: url, HEARTH_DATABASE_POOL: "2", HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0" } });
    const token = await h.token("alice");
    const calls = await Promise.all(Array.from({ length: 40 }, (_, i) => h.call(i % 2 ? "notes/list" : "notes/add", i % 2 ? {} : { title: `n${i}`, text: "x" }, { token })));
    expect(calls.map((c) => c.status)).toEqual(calls.map(() => 200));
    // The store's two, and shared state's own two (one for statements, one listening).
    expect(await held()).toBeLessThanOrEqual(2 + 2);
    await h.stop();
    // The server ends a closed connection's backend a moment after the client has gone: wait for that, as long as a busy machine takes.
    while ((await held()) > 0) await Bun.sleep(100);
    expect(await held()).toBe(0);
  } finally {
    await admin.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test("a database that sorts text by a language's rules is refused at open, naming how to create one that sorts as SQLite does, and nothing is migrated", async () => {
  const { createRuntime } = await import("../../core/instance.ts");
  const name = `folds${process.pid}`;
  await pg.admin(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C' LOCALE_PROVIDER icu ICU_LOCALE 'en-US'`);
  const url = `postgres://postgres@127.0.0.1:${pg.port}/${name}`;
  const dataDir = mkdtempSync(join(tmpdir(), "hearth-pgdata-"));
  try {
    await expect(createRuntime({ env: { HEARTH_DATA: dataDir, HEARTH_LOG: "off", HEARTH_COLLECTORS: "off", HEARTH_DATABASE_URL: url } })).rejects.toThrow(
      `the database "${name}" sorts text by a language's rules; Hearth needs byte order, as SQLite sorts: create it with CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'`,
    );
    const check = new PgStore(url, { max: 1 });
    try {
      expect(await check.sql.unsafe("SELECT to_regclass('hearth_migrations') AS t")).toEqual([{ t: null }]);
    } finally {
      await check.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  // The databases the store is given in tests sort as SQLite does.
  const lite = new PgStore(await pg.database(), { max: 1 });
  try {
    expect(await lite.sql.unsafe("SELECT string_agg(w, ' ' ORDER BY w) AS s FROM unnest(ARRAY['b', 'B', 'a', 'A', '_', 'é']) w")).toEqual([{ s: "A B _ a b é" }]);
  } finally {
    await lite.close();
  }
});

test("HEARTH_DATABASE_URL opens an instance on PostgreSQL; two opening one database at once migrate it once and both find it migrated", async () => {
  const { createRuntime } = await import("../../core/instance.ts");
  const url = await pg.database();
  const dataDir = mkdtempSync(join(tmpdir(), "hearth-pgdata-"));
  const open = () => createRuntime({ env: { HEARTH_DATA: dataDir, HEARTH_LOG: "off", HEARTH_COLLECTORS: "off", HEARTH_DATABASE_URL: url } });
  const [a, b] = await Promise.all([open(), open()]);
  try {
    expect(a.store.kind).toBe("postgres");
    // The runtime's own synchronous pass finds every owner migrated.
    a.migrate();
    b.migrate();
    const rows = (await (a.store as PgStore).sql.unsafe("SELECT owner, count(*)::int AS n FROM hearth_migrations GROUP BY owner")) as { owner: string; n: number }[];
    const owners = rows.map((r) => r.owner);
    for (const o of ["core", "scheduler", "upstream", "dav", "notes", "tasks", "blog"]) expect(owners).toContain(o);
    // Once each: the second instance applied nothing.
    const tags = (await (a.store as PgStore).sql.unsafe("SELECT count(*)::int AS n FROM hearth_migrations")) as { n: number }[];
    expect(tags[0].n).toBe(rows.reduce((s, r) => s + r.n, 0));
    // Nothing of SQLite was made in the data folder.
    expect(existsSync(join(dataDir, "hearth.db"))).toBe(false);
  } finally {
    await a.store.close();
    await b.store.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  await expect(createRuntime({ env: { HEARTH_DATA: dataDir, HEARTH_LOG: "off", HEARTH_DATABASE_URL: "mysql://x" } })).rejects.toThrow("HEARTH_DATABASE_URL: must be a postgres:// URL");
});
