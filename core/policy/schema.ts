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
    /** null while waiting; "approved", "declined", "expired" or "withdrawn" (by the client, an MCP task cancelled) once settled. */
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

/**
 * An MCP task (the protocol's `tasks` utility, and the 2026-07-28 Tasks
 * extension): a tool call that would wait for the owner's approval, answered
 * at once with a handle the client polls. Kept in the store, not in memory,
 * so a pending one outlives a restart and any instance can answer a poll; it
 * belongs to the credential that made it, and goes when its ttl is over.
 */
export const mcpTasks = sqliteTable(
  "mcp_tasks",
  {
    /** A random UUID: the handle the client polls with. */
    id: text("id").primaryKey(),
    account: text("account")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** The credential that made it (a token's id or a grant's): only it may see or cancel the task. */
    credential: text("credential").notNull(),
    /** The approval the call waits on; null for a call that ran at once. */
    approval: text("approval"),
    /** The tool called, and its whole arguments as JSON until the call has run (then null: kept no longer than needed). */
    tool: text("tool").notNull(),
    args: text("args"),
    /** "working" (waiting for the owner), "running" (approved, running once), "completed", "failed" or "cancelled". */
    status: text("status").notNull(),
    statusMessage: text("status_message"),
    /** The tool result as JSON, once there is one. */
    result: text("result"),
    created: integer("created").notNull(),
    updated: integer("updated").notNull(),
    /** Kept this long from creation, in milliseconds. */
    ttl: integer("ttl").notNull(),
    expires: integer("expires").notNull(),
  },
  (t) => [index("mcp_tasks_credential").on(t.credential, t.created)],
);
