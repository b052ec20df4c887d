// The credits ledger: entries are only ever added, and a balance is their sum.
// Whatever takes credits reads the balance, then writes what it decided; on
// PostgreSQL writes run side by side, so each such write first holds the
// account (holdAccount) until its transaction ends: two charges at once never
// both spend the same credits. Every path that takes credits (the core's
// charges, grants, the apps plugin's) holds the same key through the writer
// it was handed.
import { desc, eq, sql } from "drizzle-orm";
import { mapAnswer } from "../answer.ts";
import { storeOfWriter } from "../db/store.ts";
import type { Db } from "../plugin.ts";
import { payLedger } from "./schema.ts";

export type Entry = typeof payLedger.$inferSelect;

export function balanceOf(db: Db, account: string): Promise<number> {
  const r = db
    .select({ total: sql<number>`coalesce(sum(${payLedger.delta}), 0)` })
    .from(payLedger)
    .where(eq(payLedger.account, account))
    .get();
  return mapAnswer(r, (r) => Number(r?.total ?? 0));
}

/**
 * Inside a write, on the store's writer: waits until no other write holds
 * this account's balance and holds it until this one ends. Call before
 * reading a balance that decides what is taken from it.
 */
export async function holdAccount(db: Db, account: string): Promise<void> {
  const store = storeOfWriter(db);
  if (!store) throw new Error("the ledger's balances are held only on the store's writer, inside a write");
  await store.lock(`pay:ledger:${account}`);
}

/** Appends one entry; call inside a write transaction. */
export function append(db: Db, e: { account: string; delta: number; reason: string; method?: string | null; requestId?: string | null; note?: string | null; at: number }): Promise<Entry> {
  return db
    .insert(payLedger)
    .values({ account: e.account, delta: e.delta, reason: e.reason, method: e.method ?? null, requestId: e.requestId ?? null, note: e.note ?? null, at: e.at })
    .returning()
    .get();
}

export function recent(db: Db, account: string, limit: number): Promise<Entry[]> {
  return db.select().from(payLedger).where(eq(payLedger.account, account)).orderBy(desc(payLedger.id)).limit(limit).all();
}

export const shapeEntry = (e: Entry) => ({
  id: e.id,
  delta: e.delta,
  reason: e.reason,
  method: e.method,
  request_id: e.requestId,
  note: e.note,
  at: new Date(e.at).toISOString(),
});
