// Building a drizzle query costs ~30µs; running a prepared one ~2µs. Hot
// paths prepare once per connection (reader and writer differ) and reuse it.
// On PostgreSQL the same, through the store's sqlite-proxy callback.
//
// Running one still goes through drizzle's generic steps on every call:
// placeholders looked up through `is()` checks, the row mapped by a reduce
// over its fields with more of them. For the common shape (columns of one
// table, no joins, no custom mapping, no query logger) those steps are worked
// out once here and the prepared query's get and all do only what is left:
// fill the parameters in order, run the statement, decode each column.
import { Column, is, NoopLogger, Param, Placeholder } from "drizzle-orm";
import type { Database } from "bun:sqlite";
import type { Db } from "../plugin.ts";
import type { WithRows } from "./pg.ts";

const byDb = new WeakMap<Db, Map<unknown, unknown>>();

/** Returns the statement `build` makes for this connection, preparing it on first use. */
export function prepared<T>(db: Db, build: (db: Db) => T): T {
  let cache = byDb.get(db);
  if (!cache) {
    cache = new Map();
    byDb.set(db, cache);
  }
  let stmt = cache.get(build) as T | undefined;
  if (stmt === undefined) {
    stmt = build(db);
    quicken(stmt);
    cache.set(build, stmt);
  }
  return stmt;
}

/** What a drizzle bun:sqlite prepared query holds (its fields are not part of drizzle's public types); `client` is the sqlite-proxy driver's, on PostgreSQL (core/db/pg.ts). */
interface BunPrepared {
  stmt?: { values(...params: unknown[]): unknown[][] };
  client?: (sql: string, params: unknown[], method: string) => Promise<{ rows: unknown[][] }>;
  query?: { sql: string; params: unknown[] };
  fields?: { path: string[]; field: unknown }[];
  customResultMapper?: unknown;
  logger?: unknown;
  get?: unknown;
  all?: unknown;
}

type Slot = { name: string; encode?: (v: unknown) => unknown } | { value: unknown };

/** Gives a prepared query of the common shape a get and all that skip drizzle's per-call generic work; any other is left as it is. */
function quicken(q: unknown) {
  const p = q as BunPrepared;
  if (!p || !p.query || !p.fields || p.customResultMapper) return;
  // PostgreSQL's store runs drizzle's sqlite-proxy driver: its prepared queries hold the callback that runs them.
  const proxy = typeof p.stmt?.values !== "function" ? p.client : undefined;
  if (typeof p.stmt?.values !== "function" && typeof proxy !== "function") return;
  if (!is(p.logger, NoopLogger)) return;
  // Fields each a column at the top level: drizzle's join bookkeeping (joinsNotNullableMap) then never applies.
  if (!p.fields.every((f) => f.path.length === 1 && is(f.field, Column))) return;
  const stmt = p.stmt!;
  const keys = p.fields.map((f) => f.path[0]);
  // A literal's "__proto__" sets the prototype rather than a field: such a select keeps drizzle's own way.
  if (keys.includes("__proto__")) return;
  const columns = p.fields.map((f) => f.field as Column);
  const slots: Slot[] = p.query.params.map((x) => {
    if (is(x, Placeholder)) return { name: x.name };
    if (is(x, Param) && is(x.value, Placeholder)) {
      const encoder = x.encoder;
      return { name: x.value.name, encode: (v: unknown) => encoder.mapToDriverValue(v) };
    }
    return { value: x };
  });
  const fill = (values: Record<string, unknown> = {}) => {
    const out = new Array<unknown>(slots.length);
    for (let i = 0; i < slots.length; i++) {
      const s = slots[i];
      if ("value" in s) out[i] = s.value;
      else {
        if (!(s.name in values)) throw new Error(`No value for placeholder "${s.name}" was provided`);
        out[i] = s.encode ? s.encode(values[s.name]) : values[s.name];
      }
    }
    return out;
  };
  const map = rowMaker(keys, columns);
  if (proxy) {
    // Rows by position only ("rows", core/db/pg.ts): the row maker reads them so, and naming each one's columns too cost as much as the rest of its decoding.
    // The store's callback makes a runner for the statement once (its PostgreSQL text, which columns to decode); a callback without one is asked each call.
    const text = p.query.sql;
    const run = (proxy as Partial<WithRows>).rows?.(text) ?? (async (params: unknown[]) => (await proxy(text, params, "rows")).rows);
    p.get = async (values?: Record<string, unknown>) => {
      const row = (await run(fill(values)))[0];
      return row ? map(row) : undefined;
    };
    p.all = async (values?: Record<string, unknown>) => (await run(fill(values))).map(map);
    return;
  }
  p.get = (values?: Record<string, unknown>) => {
    const row = stmt.values(...fill(values))[0];
    return row ? map(row) : undefined;
  };
  p.all = (values?: Record<string, unknown>) => stmt.values(...fill(values)).map(map);
}

/**
 * Builds a row's object in one literal, its fields always the same and in the
 * same order (the engine then lays every row out alike and reads them fast),
 * decoding only the columns whose type changes the driver's value. Field
 * names are written into the function as JSON strings, never as code.
 */
function rowMaker(keys: string[], columns: Column[]): (row: unknown[]) => Record<string, unknown> {
  const asStored = Column.prototype.mapFromDriverValue;
  const fields = keys.map((k, i) => `${JSON.stringify(k)}: ${columns[i].mapFromDriverValue === asStored ? `r[${i}]` : `r[${i}] === null ? null : c[${i}].mapFromDriverValue(r[${i}])`}`);
  return new Function("c", `return (r) => ({ ${fields.join(", ")} });`)(columns);
}

/** The bun:sqlite connection under a drizzle handle, for reads whose rows are used as SQLite returns them. */
export const sqliteOf = (db: Db): Database => (db as unknown as { $client: Database }).$client;
