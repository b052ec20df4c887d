// Raw SQL from tests on whichever store an instance runs: SQLite's text with
// `?` parameters, sent through the store's drizzle handle, so on PostgreSQL it
// is translated exactly as the store translates what the query builders write.
import { type SQL, sql } from "drizzle-orm";
import type { Runtime } from "../core/runtime.ts";

function statement(text: string, params: unknown[]): SQL {
  const parts = text.split("?");
  if (parts.length - 1 !== params.length) throw new Error(`${parts.length - 1} placeholders for ${params.length} parameters: ${text}`);
  let q = sql.raw(parts[0]);
  for (let i = 1; i < parts.length; i++) q = sql`${q}${params[i - 1]}${sql.raw(parts[i])}`;
  return q;
}

/** A row by its column names: PostgreSQL's come back as arrays carrying the names beside the positions. */
function named(row: unknown): Record<string, unknown> {
  if (!Array.isArray(row)) return row as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of Object.getOwnPropertyNames(row)) if (k !== "length" && !/^\d+$/.test(k)) out[k] = (row as unknown as Record<string, unknown>)[k];
  return out;
}

/** Every row of a read of committed data. */
export async function sqlAll<T = Record<string, unknown>>(rt: Runtime, text: string, ...params: unknown[]): Promise<T[]> {
  return ((await rt.store.rdb.all(statement(text, params))) as unknown[]).map(named) as T[];
}

/** The first row, or undefined. */
export async function sqlGet<T = Record<string, unknown>>(rt: Runtime, text: string, ...params: unknown[]): Promise<T | undefined> {
  return (await sqlAll<T>(rt, text, ...params))[0];
}

/** A change made outside any method, as a test sets up a state. */
export async function sqlRun(rt: Runtime, text: string, ...params: unknown[]): Promise<void> {
  await rt.store.write(() => rt.store.wdb.run(statement(text, params)));
}
