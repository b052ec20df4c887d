// Tables the core owns. Plugins own theirs in plugins/<service>/schema.ts.
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const accounts = sqliteTable("accounts", {
  id: text("id").primaryKey(),
  username: text("username").notNull().unique(),
  admin: integer("admin", { mode: "boolean" }).notNull().default(false),
  created: integer("created").notNull(),
});

export const tokens = sqliteTable(
  "tokens",
  {
    id: text("id").primaryKey(),
    account: text("account")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** sha256 hex of the token; the token itself is never stored. */
    hash: text("hash").notNull().unique(),
    name: text("name").notNull(),
    /** "*" or a comma-separated list of service names. */
    scopes: text("scopes").notNull(),
    created: integer("created").notNull(),
    lastUsed: integer("last_used"),
    expires: integer("expires"),
    revoked: integer("revoked"),
  },
  (t) => [index("tokens_account").on(t.account)],
);

/** Public instance activity, announced by services through ctx.emit and read by stream/list. */
export const activity = sqliteTable(
  "activity",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    at: integer("at").notNull(),
    service: text("service").notNull(),
    type: text("type").notNull(),
    text: text("text").notNull(),
    url: text("url"),
    data: text("data"),
  },
  (t) => [index("activity_at").on(t.at)],
);
