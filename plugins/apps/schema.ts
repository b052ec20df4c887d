import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const apps = sqliteTable(
  "apps",
  {
    id: text("id").primaryKey(),
    slug: text("slug").notNull().unique(),
    /** Account id; null for the starter apps, which belong to the instance. */
    owner: text("owner"),
    ownerName: text("owner_name").notNull(),
    name: text("name").notNull(),
    description: text("description").notNull(),
    /** Comma-separated, lower case, in the order given. */
    tags: text("tags").notNull().default(""),
    /** Sanitised SVG, or "". */
    icon: text("icon").notNull().default(""),
    html: text("html").notNull(),
    price: integer("price").notNull().default(0),
    forkedFrom: text("forked_from"),
    starter: integer("starter", { mode: "boolean" }).notNull().default(false),
    created: integer("created").notNull(),
    updated: integer("updated").notNull(),
  },
  (t) => [index("apps_owner").on(t.owner)],
);

/** Each app's key-value store, kept apart per user. */
export const appsStore = sqliteTable(
  "apps_store",
  {
    app: text("app").notNull(),
    account: text("account").notNull(),
    key: text("key").notNull(),
    /** JSON text. */
    value: text("value").notNull(),
    updated: integer("updated").notNull(),
  },
  (t) => [primaryKey({ columns: [t.app, t.account, t.key] })],
);

/** Methods a user has let an app call on their behalf. */
export const appsGrants = sqliteTable(
  "apps_grants",
  {
    app: text("app").notNull(),
    account: text("account").notNull(),
    method: text("method").notNull(),
    at: integer("at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.app, t.account, t.method] })],
);

/** A paid opening of a priced app: the ticket its frame is served against. */
export const appsOpens = sqliteTable(
  "apps_opens",
  {
    ticket: text("ticket").primaryKey(),
    app: text("app").notNull(),
    account: text("account").notNull(),
    price: integer("price").notNull(),
    at: integer("at").notNull(),
    expires: integer("expires").notNull(),
  },
  (t) => [index("apps_opens_account").on(t.account, t.app)],
);

/** Snippets published with apps/run. */
export const appsSnippets = sqliteTable("apps_snippets", {
  id: text("id").primaryKey(),
  owner: text("owner").notNull(),
  code: text("code").notNull(),
  created: integer("created").notNull(),
});
