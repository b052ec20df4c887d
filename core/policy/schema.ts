// What the owner decided about each credential, and the calls waiting on
// them. A policy belongs to a token, an app password (a token too) or an
// OAuth grant (whose tokens rotate, so the policy is the grant's); a
// credential with none is as open as its scope. An approval is one call that
// its policy said to ask about: it waits until the owner answers or its time
// runs out, and stays as the record of who answered.
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts } from "../db/schema.ts";

export const credentialPolicies = sqliteTable("credential_policies", {
  /** A token's id, or an OAuth grant's. */
  credential: text("credential").primaryKey(),
  account: text("account")
    .notNull()
    .references(() => accounts.id, { onDelete: "cascade" }),
  /** The policy as JSON (core/policy/rules.ts). */
  policy: text("policy").notNull(),
  updated: integer("updated").notNull(),
});

export const approvals = sqliteTable(
  "approvals",
  {
    id: text("id").primaryKey(),
    account: text("account")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** The credential asking (a token's or a grant's id); null for a session. */
    credential: text("credential"),
    /** Who asks, in words: the token's name, the OAuth client's, "the agent (for …)". */
    client: text("client").notNull(),
    service: text("service").notNull(),
    method: text("method").notNull(),
    /** The arguments, shortened and with secrets hidden, as JSON. */
    args: text("args").notNull(),
    price: integer("price").notNull(),
    /** Why it asks: the rule that said so. */
    reason: text("reason").notNull(),
    created: integer("created").notNull(),
    expires: integer("expires").notNull(),
    /** null while waiting; "approved", "declined" or "expired" once settled. */
    decision: text("decision"),
    /** The person who answered. */
    decidedBy: text("decided_by"),
    decided: integer("decided"),
    /** SHA-256 of the call's whole arguments: a client calling again with the answer (MCP 2026-07-28) must send the same ones. */
    argsHash: text("args_hash"),
    /** When an approval answered in a later request was used by the call it approved; each is used once. */
    used: integer("used"),
  },
  (t) => [index("approvals_account").on(t.account, t.decision)],
);

/** Credits (and USDC) each credential with a daily limit has spent (or holds for a call running) on each UTC day. */
export const credentialSpend = sqliteTable(
  "credential_spend",
  {
    credential: text("credential").notNull(),
    /** YYYY-MM-DD, UTC. */
    day: text("day").notNull(),
    /** Credits spent, or held for a call running. */
    spent: integer("spent").notNull(),
    /** USDC paid by wallet/pay, in the token's smallest units (a millionth of a dollar). */
    usdc: integer("usdc").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.credential, t.day] })],
);

/** The owner's devices that asked to be told of approvals waiting (Web Push, RFC 8030): where to send, and the keys to encrypt for. */
export const pushSubscriptions = sqliteTable(
  "push_subscriptions",
  {
    /** The push service's URL for the device: unique, as the browser gives one per subscription. */
    endpoint: text("endpoint").primaryKey(),
    account: text("account")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** The device's P-256 public key and auth secret (RFC 8291), base64url as the browser gives them. */
    p256dh: text("p256dh").notNull(),
    auth: text("auth").notNull(),
    created: integer("created").notNull(),
  },
  (t) => [index("push_subscriptions_account").on(t.account)],
);

/** This instance's VAPID key pair (RFC 8292), made once: push services know the instance by it. */
export const pushKeys = sqliteTable("push_keys", {
  id: text("id").primaryKey(),
  publicKey: text("public_key").notNull(),
  privateKey: text("private_key").notNull(),
  created: integer("created").notNull(),
});
