// Admin grants: the one way credits enter an account besides a top-up.
import { eq } from "drizzle-orm";
import { accounts } from "../db/schema.ts";
import { invalid, notFound } from "../errors.ts";
import type { Db } from "../plugin.ts";
import { append, balanceOf, holdAccount, shapeEntry } from "./ledger.ts";

/** Grants (or, negative, takes back) credits; call inside a write transaction. */
export async function grantCredits(db: Db, input: { username: string; amount: number; note?: string; by: string; at: number; requestId?: string }) {
  if (!Number.isInteger(input.amount) || input.amount === 0) throw invalid("amount", `amount must be a whole number of credits other than 0 (got ${input.amount})`);
  if (Math.abs(input.amount) > 100_000_000) throw invalid("amount", "amount must be at most 100000000 credits at a time");
  const acct = await db.select({ id: accounts.id, username: accounts.username }).from(accounts).where(eq(accounts.username, input.username)).get();
  if (!acct) throw notFound(`no account named "${input.username}"`);
  await holdAccount(db, acct.id);
  const before = await balanceOf(db, acct.id);
  if (before + input.amount < 0) throw invalid("amount", `taking ${-input.amount} credits would leave ${acct.username} below zero (balance ${before})`);
  const entry = await append(db, {
    account: acct.id,
    delta: input.amount,
    reason: "grant",
    note: input.note ? `${input.note} (by ${input.by})` : `by ${input.by}`,
    requestId: input.requestId ?? null,
    at: input.at,
  });
  return { user: acct.username, balance: before + input.amount, entry: shapeEntry(entry) };
}
