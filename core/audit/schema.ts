// The record of every call the instance answered or refused: one row per
// call, on every surface, nested ones included. Rows are never changed; old
// ones are removed only by the retention sweep (HEARTH_AUDIT_DAYS), oldest
// first by id: ids are given in the order entries are written, so the log
// needs no index on the time (each one a cost on every entry written), and
// no AUTOINCREMENT (its counter row rewritten by every insert): the sweep
// never removes the newest entry, from which SQLite counts the next id, so
// an id is never given twice (see core/audit/log.ts).
//
// What repeats from call to call (who called how, where, which method, with
// what outcome) is kept once, as a kind, and each row names its kind by id:
// a row is then its time, its call, its account, its arguments and what it
// cost, a third of the columns and bytes it was, which is what writing one
// costs SQLite. The view audit_entries (migrations) shows the whole entry,
// as a row was before; core/audit/read.ts reads it the same way.
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const auditKinds = sqliteTable("audit_kinds", {
  id: integer("id").primaryKey(),
  /** How the caller proved who it is: token, session, payment, local or none. */
  via: text("via").notNull(),
  /** The credential: a token's id, an x402 payer's address; null for a session or nobody. */
  credential: text("credential"),
  /** Its name as the owner gave it (a token's name, an OAuth client's, an app password's). */
  credentialName: text("credential_name"),
  /** Where the call came in: http, mcp, dav, agent, app, event, nested, local. */
  surface: text("surface").notNull(),
  service: text("service").notNull(),
  method: text("method").notNull(),
  /** "ok", or the error kind of the refusal (forbidden, invalid_argument, ...). */
  outcome: text("outcome").notNull(),
  status: integer("status").notNull(),
  /** Who let the call through: "policy" (its scope allowed it), "nobody" (refused), "person:<name>" (they approved it). */
  approved: text("approved").notNull(),
});

export const auditLog = sqliteTable(
  "audit_log",
  {
    id: integer("id").primaryKey(),
    /** Milliseconds since the epoch, when the call ended. */
    at: integer("at").notNull(),
    /** The call's id (the request id a refusal carries); a nested call's extends its parent's. */
    callId: text("call_id").notNull(),
    /** accounts.id of the caller, null for a stranger; kept after the account is gone. */
    account: text("account"),
    /** audit_kinds.id: the caller's credential, the surface, the method and the outcome. */
    kind: integer("kind").notNull(),
    /** Redacted preview of the arguments (JSON): short strings, secrets masked, bytes as their size. */
    args: text("args").notNull(),
    /** SHA-256 (hex) of the canonical JSON of the arguments as sent; null where that JSON is `args` itself (plain arguments), whose hash a reader takes. */
    argsHash: text("args_hash"),
    /** Credits charged (0 when free or refused). */
    credits: integer("credits").notNull(),
    /** x402 amount settled, in the asset's atomic units, when a payment paid. */
    paid: text("paid"),
  },
  (t) => [index("audit_log_account").on(t.account, t.id)],
);
