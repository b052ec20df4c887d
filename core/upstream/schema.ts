// The response cache the upstream layer keeps in the database, so answers
// survive a restart and a provider's outage can be bridged with the last copy.
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const upstreamCache = sqliteTable(
  "upstream_cache",
  {
    /** sha256 of provider, verb, URL path and query, and request body. */
    key: text("key").primaryKey(),
    provider: text("provider").notNull(),
    /** The request as sent, for operators reading the table. */
    url: text("url").notNull(),
    status: integer("status").notNull(),
    body: text("body").notNull(),
    /** When the copy was fetched (ms since epoch, instance clock). */
    fetched: integer("fetched").notNull(),
    /** Served without asking the provider until then; null: forever. */
    freshUntil: integer("fresh_until"),
    /** Served while a refresh runs in the background until then. */
    reviseUntil: integer("revise_until"),
    /** Kept to answer when the provider fails until then; null: forever. */
    keepUntil: integer("keep_until"),
  },
  (t) => [index("upstream_cache_keep").on(t.keepUntil)],
);
