// Money tables. Both are append-only: a balance is the sum of its entries and
// a payment, once recorded, is never changed.
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/** Credits in and out of an account; the balance is SUM(delta). A credit is $0.01. */
export const payLedger = sqliteTable(
  "pay_ledger",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    /** accounts.id; kept after an account is gone, since money records outlive it. */
    account: text("account").notNull(),
    /** Positive for grants and top-ups, negative for charges. */
    delta: integer("delta").notNull(),
    /** "grant", "charge", "topup", ... */
    reason: text("reason").notNull(),
    /** "<service>/<method>" for charges; null otherwise. */
    method: text("method"),
    requestId: text("request_id"),
    /** Free text: who granted, which transaction topped up. */
    note: text("note"),
    at: integer("at").notNull(),
  },
  (t) => [index("pay_ledger_account").on(t.account, t.id)],
);

/** x402 payments settled for calls by strangers; one row per authorization, so none is used twice. */
export const payX402 = sqliteTable(
  "pay_x402",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    network: text("network").notNull(),
    asset: text("asset").notNull(),
    payer: text("payer").notNull(),
    /** The EIP-3009 authorization nonce (bytes32 hex). */
    nonce: text("nonce").notNull(),
    /** Atomic units of the asset. */
    amount: text("amount").notNull(),
    credits: integer("credits").notNull(),
    method: text("method").notNull(),
    requestId: text("request_id").notNull(),
    transaction: text("transaction").notNull(),
    at: integer("at").notNull(),
  },
  (t) => [uniqueIndex("pay_x402_authorization").on(t.network, t.asset, t.payer, t.nonce)],
);

/**
 * An admin's choice for one account: whether its priced calls cost credits.
 * Accounts without a row follow HEARTH_METER_ACCOUNTS.
 */
export const payAccounts = sqliteTable("pay_accounts", {
  /** accounts.id */
  account: text("account").primaryKey(),
  metered: integer("metered", { mode: "boolean" }).notNull(),
  /** Who chose, and when. */
  by: text("by").notNull(),
  at: integer("at").notNull(),
});
