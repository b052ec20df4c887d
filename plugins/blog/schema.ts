import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const posts = sqliteTable(
  "blog_posts",
  {
    id: text("id").primaryKey(),
    author: text("author").notNull(),
    /** The author's username when written, for pages and feeds. */
    authorName: text("author_name").notNull(),
    title: text("title").notNull(),
    content: text("content").notNull(),
    /** Normalised: lowercase, comma-separated, no duplicates. */
    tags: text("tags").notNull().default(""),
    private: integer("private", { mode: "boolean" }).notNull().default(false),
    created: integer("created").notNull(),
    updated: integer("updated").notNull(),
  },
  (t) => [index("blog_created").on(t.created), index("blog_author").on(t.author)],
);
