import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { holdsBlobs } from "../../core/blobs.ts";

export const files = sqliteTable(
  "files_files",
  {
    id: text("id").primaryKey(),
    owner: text("owner").notNull(),
    name: text("name").notNull(),
    type: text("type").notNull(),
    size: integer("size").notNull(),
    /** sha256 of the bytes: the blob's name in the content-addressed store. */
    hash: text("hash").notNull(),
    /** How the content was given, and so how `get` gives it back: "text" or "base64". */
    encoding: text("encoding").notNull(),
    /** Unguessable token of the public link, when the owner shared the file. */
    share: text("share").unique(),
    created: integer("created").notNull(),
  },
  (t) => [index("files_owner_created").on(t.owner, t.created), index("files_hash").on(t.hash)],
);
holdsBlobs(files.hash);
