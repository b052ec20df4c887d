import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const rooms = sqliteTable("chat_rooms", {
  room: text("room").primaryKey(),
  creator: text("creator").notNull(),
  created: integer("created").notNull(),
});

export const messages = sqliteTable(
  "chat_messages",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    room: text("room")
      .notNull()
      .references(() => rooms.room, { onDelete: "cascade" }),
    author: text("author").notNull(),
    /** The author's username when sent, so a listing needs no join. */
    authorName: text("author_name").notNull(),
    content: text("content").notNull(),
    at: integer("at").notNull(),
  },
  (t) => [index("chat_room_at").on(t.room, t.at), index("chat_at").on(t.at)],
);
