// The credits ledger: entries are only ever added, and a balance is their sum.
// Charges run inside the call's write transaction, which the store serialises,
// so a balance read there cannot be spent twice by concurrent calls.
import { desc, eq, sql } from "drizzle-orm";
import { mapAnswer } from "../answer.ts";
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
