// Prepared queries run through core/db/prepared.ts answer exactly as drizzle's
// own prepared queries do, for every kind of column decoding and placeholder.
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { and, asc, eq, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { prepared } from "../../core/db/prepared.ts";
import type { Db } from "../../core/plugin.ts";

const things = sqliteTable("things", {
  id: text("id").primaryKey(),
  owner: text("owner").notNull(),
  done: integer("done", { mode: "boolean" }).notNull(),
  at: integer("at", { mode: "timestamp_ms" }),
  data: text("data", { mode: "json" }).$type<{ tags: string[] }>(),
  count: integer("count_of").notNull(),
});

function fresh(): Db {
  const client = new Database(":memory:", { strict: true });
  client.run("CREATE TABLE things (id text PRIMARY KEY, owner text NOT NULL, done integer NOT NULL, at integer, data text, count_of integer NOT NULL)");
  const db = drizzle({ client }) as unknown as Db;
  db.insert(things)
    .values([
      { id: "a", owner: "o", done: true, at: new Date("2026-01-02T03:04:05Z"), data: { tags: ["x", "y"] }, count: 3 },
      { id: "b", owner: "o", done: false, at: null, data: null, count: 0 },
      { id: "c", owner: "p", done: false, at: new Date(0), data: { tags: [] }, count: -1 },
    ])
    .run();
  return db;
}

const byOwner = (db: Db) => db.select().from(things).where(eq(things.owner, sql.placeholder("owner"))).orderBy(asc(things.id)).prepare();
const one = (db: Db) =>
  db
    .select({ id: things.id, done: things.done, at: things.at, data: things.data })
    .from(things)
    .where(and(eq(things.owner, sql.placeholder("owner")), eq(things.done, sql.placeholder("done")), eq(things.count, 3)))
    .prepare();
const upsert = (db: Db) =>
  db
    .insert(things)
    .values({ id: sql.placeholder("id"), owner: "o", done: sql.placeholder("done"), at: null, data: null, count: sql.placeholder("count") })
    .onConflictDoUpdate({ target: things.id, set: { count: sql`excluded.count_of` } })
    .returning()
    .prepare();

test("get and all give drizzle's rows: booleans, timestamps, JSON, nulls, renamed columns, encoded placeholders and constants", async () => {
  const ours = fresh();
  const theirs = fresh();
  for (const owner of ["o", "p", "nobody"]) {
    expect(await prepared(ours, byOwner).all({ owner })).toEqual(await byOwner(theirs).all({ owner }));
    expect(await prepared(ours, byOwner).get({ owner })).toEqual(await byOwner(theirs).get({ owner }));
  }
  expect(await prepared(ours, one).get({ owner: "o", done: true })).toEqual(await one(theirs).get({ owner: "o", done: true }));
  expect(await prepared(ours, one).get({ owner: "o", done: true })).toEqual({ id: "a", done: true, at: new Date("2026-01-02T03:04:05Z"), data: { tags: ["x", "y"] } });
  expect(await prepared(ours, one).get({ owner: "o", done: false })).toBeUndefined();
  expect(await prepared(ours, upsert).all({ id: "a", done: true, count: 9 })).toEqual(await upsert(theirs).all({ id: "a", done: true, count: 9 }));
  expect(await prepared(ours, upsert).all({ id: "d", done: false, count: 1 })).toEqual(await upsert(theirs).all({ id: "d", done: false, count: 1 }));
});

test("a missing placeholder value is refused as drizzle refuses it", () => {
  const db = fresh();
  expect(() => prepared(db, byOwner).all({})).toThrow('No value for placeholder "owner" was provided');
});
