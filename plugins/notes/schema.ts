import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const notes = sqliteTable(
  "notes",
  {
    owner: text("owner").notNull(),
    title: text("title").notNull(),
    text: text("text").notNull(),
    created: integer("created").notNull(),
    updated: integer("updated").notNull(),
  },
  (t) => [primaryKey({ columns: [t.owner, t.title] })],
);
