// Tables the core owns. Plugins own theirs in plugins/<service>/schema.ts.
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const accounts = sqliteTable("accounts", {
  id: text("id").primaryKey(),
  username: text("username").notNull().unique(),
  admin: integer("admin", { mode: "boolean" }).notNull().default(false),
  created: integer("created").notNull(),
  /** argon2id hash (Bun.password); null for accounts made by the CLI that have never set one. */
  password: text("password"),
});

/** Browser sessions. The cookie carries a secret; only its sha256 is stored. */
export const sessions = sqliteTable(
  "sessions",
  {
    hash: text("hash").primaryKey(),
    account: text("account")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** Per-session token that POSTs resting on the cookie must echo in X-CSRF-Token. */
    csrf: text("csrf").notNull(),
    created: integer("created").notNull(),
    expires: integer("expires").notNull(),
    lastSeen: integer("last_seen").notNull(),
    /** The browser and system the session was started from ("Firefox on Linux"), shown on /account. */
    browser: text("browser"),
  },
  (t) => [index("sessions_account").on(t.account)],
);

/** Invitations to sign up when sign-up is invite-only. The code is stored as its sha256. */
export const invites = sqliteTable("invites", {
  hash: text("hash").primaryKey(),
  createdBy: text("created_by")
    .notNull()
    .references(() => accounts.id, { onDelete: "cascade" }),
  created: integer("created").notNull(),
  expires: integer("expires").notNull(),
  usedBy: text("used_by"),
  used: integer("used"),
});

/**
 * One-use links to set an account's password (for an account made at the
 * command line, or a reset by the admin at the shell). The code is stored as
 * its sha256; a newer link for the account ends the older ones.
 */
export const passwordLinks = sqliteTable(
  "password_links",
  {
    hash: text("hash").primaryKey(),
    account: text("account")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    created: integer("created").notNull(),
    expires: integer("expires").notNull(),
    used: integer("used"),
  },
  (t) => [index("password_links_account").on(t.account)],
);

/**
 * An account's TOTP secret (RFC 6238). Kept readable, as the codes are
 * computed from it; unconfirmed until the person has entered a code from
 * their app, and only then asked for at sign-in. The last time step used is
 * kept so one code cannot be used twice.
 */
export const totpSecrets = sqliteTable("totp_secrets", {
  account: text("account")
    .primaryKey()
    .references(() => accounts.id, { onDelete: "cascade" }),
  secret: text("secret").notNull(),
  created: integer("created").notNull(),
  confirmed: integer("confirmed"),
  lastStep: integer("last_step"),
});

/** One-use codes for signing in without the authenticator app; stored as their sha256. */
export const recoveryCodes = sqliteTable(
  "recovery_codes",
  {
    hash: text("hash").primaryKey(),
    account: text("account")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    created: integer("created").notNull(),
    used: integer("used"),
  },
  (t) => [index("recovery_codes_account").on(t.account)],
);

/** WebAuthn credentials (passkeys): the credential id and public key, base64url. */
export const passkeys = sqliteTable(
  "passkeys",
  {
    id: text("id").primaryKey(),
    account: text("account")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    publicKey: text("public_key").notNull(),
    counter: integer("counter").notNull().default(0),
    /** Comma-separated transports the authenticator named (usb, internal, hybrid…), handed back when asking for it. */
    transports: text("transports"),
    created: integer("created").notNull(),
    lastUsed: integer("last_used"),
  },
  (t) => [index("passkeys_account").on(t.account)],
);

/**
 * Short-lived steps of a sign-in or a passkey ceremony: a password accepted
 * that waits for its second factor, or a WebAuthn challenge waiting for its
 * answer. The handle the browser holds is stored as its sha256; each is used once.
 */
export const authChallenges = sqliteTable(
  "auth_challenges",
  {
    hash: text("hash").primaryKey(),
    /** "second-factor", "passkey-register" or "passkey-signin". */
    purpose: text("purpose").notNull(),
    account: text("account").references(() => accounts.id, { onDelete: "cascade" }),
    /** The WebAuthn challenge (base64url), for the passkey steps. */
    challenge: text("challenge"),
    created: integer("created").notNull(),
    expires: integer("expires").notNull(),
    used: integer("used"),
  },
  (t) => [index("auth_challenges_expires").on(t.expires)],
);

export const tokens = sqliteTable(
  "tokens",
  {
    id: text("id").primaryKey(),
    account: text("account")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** sha256 hex of the token; the token itself is never stored. */
    hash: text("hash").notNull().unique(),
    name: text("name").notNull(),
    /** "*" or a comma-separated list of service names. */
    scopes: text("scopes").notNull(),
    created: integer("created").notNull(),
    lastUsed: integer("last_used"),
    expires: integer("expires"),
    revoked: integer("revoked"),
  },
  (t) => [index("tokens_account").on(t.account)],
);

/** Public instance activity, announced by services through ctx.emit and read by stream/list. */
export const activity = sqliteTable(
  "activity",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    at: integer("at").notNull(),
    service: text("service").notNull(),
    type: text("type").notNull(),
    text: text("text").notNull(),
    url: text("url"),
    data: text("data"),
  },
  (t) => [index("activity_at").on(t.at)],
);
