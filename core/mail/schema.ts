// Mail the instance holds: every message once per account and folder, and
// the outbox that carries outside mail until it is delivered or bounced.
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { holdsBlobs } from "../blobs.ts";

export const mailMessages = sqliteTable(
  "mail_messages",
  {
    id: text("id").primaryKey(),
    account: text("account").notNull(),
    /** "inbox" for what arrived, "sent" for what the account sent. */
    folder: text("folder").notNull(),
    /** The tag of handle+tag the message was addressed to; null for the plain handle. */
    tag: text("tag"),
    from: text("from_addr").notNull(),
    to: text("to_addr").notNull(),
    subject: text("subject").notNull(),
    body: text("body").notNull(),
    /** The RFC 5322 Message-ID, without angle brackets. */
    messageId: text("message_id").notNull(),
    inReplyTo: text("in_reply_to"),
    /** Space-separated Message-IDs of the thread, oldest first. */
    references: text("refs"),
    at: integer("at").notNull(),
    /** Outside mail only: the SPF/DKIM/DMARC verdict as JSON. */
    auth: text("auth"),
    /** Blob hash of the raw message as it arrived or left. */
    raw: text("raw"),
    /** Sent mail: local, queued, sent or bounced. */
    delivery: text("delivery"),
  },
  (t) => [
    uniqueIndex("mail_messages_once").on(t.account, t.folder, t.messageId),
    index("mail_messages_recent").on(t.account, t.folder, t.at),
    // Looked up whenever a blob is released.
    index("mail_messages_raw").on(t.raw),
  ],
);
holdsBlobs(mailMessages.raw);

export const mailOutbox = sqliteTable(
  "mail_outbox",
  {
    id: text("id").primaryKey(),
    /** The sender's copy in mail_messages. */
    message: text("message").notNull(),
    account: text("account").notNull(),
    sender: text("sender").notNull(),
    recipient: text("recipient").notNull(),
    /** The signed message, exactly as it is handed to the next server. */
    raw: text("raw").notNull(),
    attempts: integer("attempts").notNull().default(0),
    /** Pending rows are tried when the clock passes this. */
    nextAt: integer("next_at").notNull(),
    /** Set while a delivery attempt is under way; a claim older than the lease is taken again. */
    claimed: integer("claimed"),
    lastError: text("last_error"),
    /** pending, sent or bounced. */
    status: text("status").notNull(),
    created: integer("created").notNull(),
  },
  (t) => [index("mail_outbox_due").on(t.status, t.nextAt)],
);
