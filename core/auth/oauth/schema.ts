// Tables of the instance's own OAuth authorization server: the clients it
// knows, the one-use codes of the authorization code grant, the grants a
// person gave, and the refresh tokens that renew them. Access tokens are rows
// of the core's tokens table, linked to their grant here, so everything that
// accepts a bearer token accepts them. Secrets are stored only as sha256.
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts, tokens } from "../../db/schema.ts";

/** Clients registered dynamically (RFC 7591) and clients known by a metadata document at their client_id URL. */
export const oauthClients = sqliteTable("oauth_clients", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  /** JSON list of exact redirect URIs. */
  redirectUris: text("redirect_uris").notNull(),
  /** "registered" (DCR) or "document" (a client ID metadata document, refreshed when fetched again). */
  kind: text("kind").notNull(),
  created: integer("created").notNull(),
});

export const oauthGrants = sqliteTable(
  "oauth_grants",
  {
    id: text("id").primaryKey(),
    account: text("account")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    client: text("client").notNull(),
    clientName: text("client_name").notNull(),
    /** "*" or a comma-separated list of service names, as tokens keep them. */
    scopes: text("scopes").notNull(),
    /** The origin of the instance the grant's tokens are for (RFC 8707 audience). */
    audience: text("audience").notNull(),
    created: integer("created").notNull(),
    revoked: integer("revoked"),
  },
  (t) => [index("oauth_grants_account").on(t.account)],
);

export const oauthCodes = sqliteTable("oauth_codes", {
  hash: text("hash").primaryKey(),
  account: text("account")
    .notNull()
    .references(() => accounts.id, { onDelete: "cascade" }),
  client: text("client").notNull(),
  redirectUri: text("redirect_uri").notNull(),
  /** PKCE S256 code challenge. */
  challenge: text("challenge").notNull(),
  scopes: text("scopes").notNull(),
  audience: text("audience").notNull(),
  expires: integer("expires").notNull(),
  /** The policy the person set at consent (core/policy/rules.ts, as JSON), given to the grant the code is exchanged for. */
  policy: text("policy"),
  /** The grant the code was exchanged for: a second exchange revokes it. */
  grant: text("grant"),
});

export const oauthRefresh = sqliteTable(
  "oauth_refresh",
  {
    hash: text("hash").primaryKey(),
    grant: text("grant")
      .notNull()
      .references(() => oauthGrants.id, { onDelete: "cascade" }),
    created: integer("created").notNull(),
    /** Set when exchanged: refresh tokens rotate, and a used one presented again revokes the grant. */
    used: integer("used"),
  },
  (t) => [index("oauth_refresh_grant").on(t.grant)],
);

/** Which access tokens a grant issued, so revoking the grant revokes them. */
export const oauthAccess = sqliteTable(
  "oauth_access",
  {
    token: text("token")
      .primaryKey()
      .references(() => tokens.id, { onDelete: "cascade" }),
    grant: text("grant")
      .notNull()
      .references(() => oauthGrants.id, { onDelete: "cascade" }),
  },
  (t) => [index("oauth_access_grant").on(t.grant)],
);
