// The tables the DAV layer keeps (made by migrations/0000_dav.sql): what
// clients have been told about each collection, for its queries.
import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const davItems = sqliteTable(
  "dav_items",
  {
    account: text("account").notNull(),
    collection: text("collection").notNull(),
    name: text("name").notNull(),
    ref: text("ref"),
    uid: text("uid"),
    fingerprint: text("fingerprint"),
    raw: text("raw"),
    raw_fingerprint: text("raw_fingerprint"),
    revision: integer("revision").notNull(),
  },
  (t) => [primaryKey({ columns: [t.account, t.collection, t.name] })],
);

export const davCollections = sqliteTable(
  "dav_collections",
  {
    account: text("account").notNull(),
    collection: text("collection").notNull(),
    revision: integer("revision").notNull(),
  },
  (t) => [primaryKey({ columns: [t.account, t.collection] })],
);
