import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** Each followed feed and what its last poll learned, so the next one can ask "only if changed". */
export const feeds = sqliteTable("news_feeds", {
  url: text("url").primaryKey(),
  topic: text("topic").notNull(),
  name: text("name").notNull(),
  etag: text("etag"),
  lastModified: text("last_modified"),
  /** When it was last asked (ms, instance clock). */
  polled: integer("polled"),
  /** When it last sent something new (ms). */
  changed: integer("changed"),
  /** Why the last poll failed; null when it worked. */
  error: text("error"),
});

export const items = sqliteTable(
  "news_items",
  {
    /** Short stable id: a hash of the feed and the item's own id or link. */
    id: text("id").primaryKey(),
    feed: text("feed").notNull(),
    topic: text("topic").notNull(),
    source: text("source").notNull(),
    title: text("title").notNull(),
    url: text("url").notNull(),
    summary: text("summary").notNull(),
    /** As the feed dates it, else when first seen (ms). */
    published: integer("published").notNull(),
    seen: integer("seen").notNull(),
  },
  (t) => [index("news_items_topic_published").on(t.topic, t.published), index("news_items_published").on(t.published), index("news_items_url").on(t.url)],
);

/** Articles read in full, fetched once and kept. */
export const articles = sqliteTable("news_articles", {
  url: text("url").primaryKey(),
  title: text("title"),
  byline: text("byline"),
  site: text("site"),
  published: text("published"),
  text: text("text").notNull(),
  fetched: integer("fetched").notNull(),
});
