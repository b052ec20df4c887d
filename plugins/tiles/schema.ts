import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { holdsBlobs } from "hearth";

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
  // The hash index is looked up whenever a blob is released.
  (t) => [primaryKey({ columns: [t.style, t.z, t.x, t.y] }), index("tiles_held_hash").on(t.hash)],
);
holdsBlobs(tilesHeld.hash);
