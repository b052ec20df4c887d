import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** Tiles fetched from Ordnance Survey, kept for good; the bytes are a blob. */
export const tilesHeld = sqliteTable(
  "tiles_held",
  {
    style: text("style").notNull(),
    z: integer("z").notNull(),
    x: integer("x").notNull(),
    y: integer("y").notNull(),
    hash: text("hash").notNull(),
    size: integer("size").notNull(),
    fetched: integer("fetched").notNull(),
  },
  (t) => [primaryKey({ columns: [t.style, t.z, t.x, t.y] })],
);
