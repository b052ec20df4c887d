import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const documents = sqliteTable(
  "docs_documents",
  {
    id: text("id").primaryKey(),
    owner: text("owner").notNull(),
    title: text("title").notNull(),
    content: text("content").notNull(),
    public: integer("public", { mode: "boolean" }).notNull().default(false),
    created: integer("created").notNull(),
    updated: integer("updated").notNull(),
  },
  (t) => [index("docs_owner_updated").on(t.owner, t.updated), index("docs_owner_title").on(t.owner, t.title)],
);
