import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** Public posts collected from the networks this instance reads. */
export const posts = sqliteTable(
  "social_posts",
  {
    /** The network's own id: an at:// URI on Bluesky, the status URI on Mastodon. */
    uri: text("uri").primaryKey(),
    network: text("network").notNull(),
    /** Where it was read from: a feed, an account or a server. */
    source: text("source").notNull(),
    handle: text("handle").notNull(),
    name: text("name"),
    text: text("text").notNull(),
    url: text("url").notNull(),
    created: integer("created").notNull(),
    likes: integer("likes"),
    reposts: integer("reposts"),
    replies: integer("replies"),
    seen: integer("seen").notNull(),
  },
  (t) => [index("social_posts_created").on(t.created)],
);
