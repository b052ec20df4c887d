import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const videos = sqliteTable(
  "video_videos",
  {
    /** YouTube's own video id. */
    id: text("id").primaryKey(),
    channelId: text("channel_id").notNull(),
    channel: text("channel").notNull(),
    title: text("title").notNull(),
    description: text("description").notNull(),
    url: text("url").notNull(),
    thumbnail: text("thumbnail"),
    published: integer("published").notNull(),
    /** View count when last read from the feed; null when the feed gave none. */
    views: integer("views"),
    seen: integer("seen").notNull(),
  },
  (t) => [index("video_videos_published").on(t.published), index("video_videos_channel").on(t.channelId, t.published)],
);
