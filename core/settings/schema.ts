// Accounts an admin has disabled: they cannot sign in, set a password by
// link, or hold a session or token, until enabled again. Kept beside the
// accounts table rather than in it, so the core's own tables are left as they are.
import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const disabledAccounts = sqliteTable("disabled_accounts", {
  /** accounts.id; the row goes with the account (people.ts removes it on delete). */
  account: text("account").primaryKey(),
  /** When it was disabled, milliseconds since the epoch. */
  at: integer("at").notNull(),
  /** accounts.id of the admin who did. */
  by: text("by").notNull(),
});
