// Accounts an admin has disabled: they cannot sign in, set a password by
// link, or hold a session or token, until enabled again. Kept beside the
// accounts table rather than in it, so the core's own tables are left as they are.
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const disabledAccounts = sqliteTable("disabled_accounts", {
  /** accounts.id; the row goes with the account (people.ts removes it on delete). */
  account: text("account").primaryKey(),
  /** When it was disabled, milliseconds since the epoch. */
  at: integer("at").notNull(),
  /** accounts.id of the admin who did. */
  by: text("by").notNull(),
});

/**
 * What a person must be told the next time they sign in, because someone
 * else changed how they sign in (an admin turned their two-factor sign-in
 * off). Shown once on /account, then removed.
 */
export const accountNotices = sqliteTable(
  "account_notices",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    /** accounts.id of the person to tell; the rows go with the account. */
    account: text("account").notNull(),
    at: integer("at").notNull(),
    /** What to say, in full. */
    text: text("text").notNull(),
  },
  (t) => [index("account_notices_account").on(t.account, t.id)],
);

/**
 * What happened to the last scheduled or manual backup, kept in the database
 * so every instance sharing it shows the same. One row, id "last".
 */
export const backupRuns = sqliteTable("backup_runs", {
  id: text("id").primaryKey(),
  /** When the last backup was tried, ISO; the schedule's next due time counts from it. */
  lastAttempt: text("last_attempt"),
  /** The last success (JSON of BackupSuccess), null when none. */
  lastSuccess: text("last_success"),
  /** The last failure (JSON of BackupFailure), null when none. */
  lastFailure: text("last_failure"),
});
