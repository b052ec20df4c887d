// The wallet's tables: one encrypted key per account, and every payment made.
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const walletKeys = sqliteTable("wallet_keys", {
  /** accounts.id: one wallet per account. */
  account: text("account").primaryKey(),
  address: text("address").notNull(),
  /** AES-256-GCM of the private key under a key derived from HEARTH_SECRET: base64 of iv | ciphertext | tag. */
  sealed: text("sealed").notNull(),
  created: integer("created").notNull(),
});

/** Payments the wallet made; append-only, and the sum per day is what the daily cap counts. */
export const walletPayments = sqliteTable(
  "wallet_payments",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    account: text("account").notNull(),
    server: text("server").notNull(),
    tool: text("tool").notNull(),
    /** Atomic units of the asset. */
    amount: text("amount").notNull(),
    payTo: text("pay_to").notNull(),
    network: text("network").notNull(),
    asset: text("asset").notNull(),
    transaction: text("transaction").notNull(),
    at: integer("at").notNull(),
  },
  (t) => [index("wallet_payments_account_at").on(t.account, t.at)],
);
