// Each app's key-value store, one per app and person: what the page saves
// with hearth.store, reached only through the host page's bridge.
import { and, asc, count, eq, like } from "drizzle-orm";
import { invalid, tooLarge, type Db, checkDepth } from "hearth";
import { appsStore } from "./schema.ts";

export const MAX_KEY = 200;
export const MAX_VALUE_BYTES = 64 * 1024;
export const MAX_KEYS = 1000;

export interface StoreRequest {
  op?: unknown;
  key?: unknown;
  value?: unknown;
  prefix?: unknown;
}

function keyOf(v: unknown): string {
  if (typeof v !== "string" || v.length === 0) throw invalid("key", "key must be a non-empty string");
  if (v.length > MAX_KEY) throw invalid("key", `key must be at most ${MAX_KEY} characters (got ${v.length})`);
  return v;
}

/**
 * One store operation for (app, account); call inside a write transaction for
 * "set" and "remove". `lock` holds a key until that transaction ends: a set
 * counts the keys kept before it adds one, and two sets counting at once
 * would both find room for the last.
 */
export async function storeOp(db: Db, lock: (key: string) => Promise<void>, app: string, account: string, r: StoreRequest, now: number): Promise<unknown> {
  const mine = and(eq(appsStore.app, app), eq(appsStore.account, account));
  switch (r.op) {
    case "get": {
      const row = await db.select({ value: appsStore.value }).from(appsStore).where(and(mine, eq(appsStore.key, keyOf(r.key)))).get();
      return row ? JSON.parse(row.value) : null;
    }
    case "set": {
      const key = keyOf(r.key);
      checkDepth(r.value, "value");
      const value = JSON.stringify(r.value === undefined ? null : r.value);
      const bytes = new TextEncoder().encode(value).byteLength;
      if (bytes > MAX_VALUE_BYTES) throw tooLarge(`a stored value may be at most ${MAX_VALUE_BYTES} bytes of JSON (got ${bytes})`, "value");
      await lock(`store:${app}:${account}`);
      const exists = await db.select({ key: appsStore.key }).from(appsStore).where(and(mine, eq(appsStore.key, key))).get();
      if (!exists) {
        const n = (await db.select({ n: count() }).from(appsStore).where(mine).get())?.n ?? 0;
        if (n >= MAX_KEYS) throw tooLarge(`this app already keeps ${MAX_KEYS} keys for you; remove some before adding more`, "key");
      }
      await db
        .insert(appsStore)
        .values({ app, account, key, value, updated: now })
        .onConflictDoUpdate({ target: [appsStore.app, appsStore.account, appsStore.key], set: { value, updated: now } })
        .run();
      return { key };
    }
    case "remove": {
      const key = keyOf(r.key);
      await db.delete(appsStore).where(and(mine, eq(appsStore.key, key))).run();
      return { key };
    }
    case "keys": {
      const prefix = r.prefix === undefined || r.prefix === null ? "" : r.prefix;
      if (typeof prefix !== "string") throw invalid("prefix", "prefix must be a string");
      // LIKE narrows (its wildcards may over-match a prefix holding % or _); startsWith decides.
      const where = prefix ? and(mine, like(appsStore.key, `${prefix}%`)) : mine;
      const rows = await db.select({ key: appsStore.key }).from(appsStore).where(where).orderBy(asc(appsStore.key)).all();
      return rows.map((r) => r.key).filter((k) => k.startsWith(prefix));
    }
    default:
      throw invalid("op", `op must be one of get, set, remove, keys (got ${JSON.stringify(r.op)})`);
  }
}
