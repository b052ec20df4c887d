import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { holdsBlobs } from "hearth";

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
    /** The folder it is in, as a path of names ("Photos/2026"); "" is the top. Folders are seen over WebDAV; the API lists every file. */
    folder: text("folder").notNull().default(""),
    /** Unguessable token of the public link, when the owner shared the file. */
    share: text("share").unique(),
    created: integer("created").notNull(),
  },
  (t) => [index("files_owner_created").on(t.owner, t.created, t.id), index("files_hash").on(t.hash), index("files_owner_folder").on(t.owner, t.folder, t.name)],
);
holdsBlobs(files.hash);

/** Folders made over WebDAV (MKCOL), so an empty one exists until it is removed. */
export const folders = sqliteTable(
  "files_folders",
  {
    owner: text("owner").notNull(),
    /** Path of names from the top, without slashes at either end: "Photos/2026". */
    path: text("path").notNull(),
    created: integer("created").notNull(),
  },
  (t) => [primaryKey({ columns: [t.owner, t.path] })],
);

/** WebDAV write locks, which file managers take before they write: exclusive, or shared with other shared ones. */
export const locks = sqliteTable(
  "files_locks",
  {
    token: text("token").primaryKey(),
    owner: text("owner").notNull(),
    /** The locked path ("" is the top; a folder's path locks what is in it when depth is infinity). */
    path: text("path").notNull(),
    depth: text("depth", { enum: ["0", "infinity"] }).notNull(),
    scope: text("scope", { enum: ["exclusive", "shared"] }).notNull().default("exclusive"),
    /** Who took it, as the client described itself (the DAV:owner XML), shown in lockdiscovery. */
    holder: text("holder").notNull().default(""),
    expires: integer("expires").notNull(),
  },
  (t) => [index("files_locks_owner_path").on(t.owner, t.path)],
);

/**
 * WebDAV dead properties: what a client set with PROPPATCH on a file or a
 * folder, kept by path so they follow it through MOVE and COPY and go with it.
 */
export const props = sqliteTable(
  "files_props",
  {
    owner: text("owner").notNull(),
    /** The file's or folder's path, as folders.path ("" is the top). */
    path: text("path").notNull(),
    /** The property's namespace ("" for none) and local name. */
    ns: text("ns").notNull(),
    name: text("name").notNull(),
    /** The whole property element as the client sent it, its namespaces declared on it, so it is given back as it was. */
    xml: text("xml").notNull(),
  },
  (t) => [primaryKey({ columns: [t.owner, t.path, t.ns, t.name] })],
);
