// The harness's rows/row/exec for any running instance (one from
// test/events/instance.ts too): SQL with `?` placeholders through the store's
// drizzle handle, so it runs on either store.
import type { Runtime } from "../core/runtime.ts";
import { bound, plain } from "./harness.ts";

/** Every row of a read of committed data. */
export async function sqlAll<T = Record<string, unknown>>(rt: Runtime, text: string, ...params: unknown[]): Promise<T[]> {
  return ((await rt.store.rdb.all(bound(text, params))) as unknown[]).map(plain) as T[];
}

/** The first row, or undefined. */
export async function sqlGet<T = Record<string, unknown>>(rt: Runtime, text: string, ...params: unknown[]): Promise<T | undefined> {
  return (await sqlAll<T>(rt, text, ...params))[0];
}
