import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/** Texts both ways. An inbound text whose sender belongs to nobody is kept with no account. */
export const smsMessages = sqliteTable(
  "sms_messages",
  {
    id: text("id").primaryKey(),
    account: text("account"),
    /** out or in. */
    direction: text("direction").notNull(),
    /** The other party, E.164. */
    number: text("number").notNull(),
    body: text("body").notNull(),
    segments: integer("segments").notNull(),
    /** GSM-7 or UCS-2. */
    encoding: text("encoding").notNull(),
    /** Twilio's message SID; an inbound one is stored once however often Twilio retries. */
    sid: text("sid"),
    /** sending (reserved against the day's cap), queued/sent/... as Twilio says, or received. */
    status: text("status").notNull(),
    /** A verification code text rather than one the account wrote. */
    kind: text("kind").notNull().default("text"),
    at: integer("at").notNull(),
  },
  (t) => [index("sms_messages_recent").on(t.account, t.at), uniqueIndex("sms_messages_sid").on(t.sid), index("sms_messages_number").on(t.number, t.at)],
);

/** Numbers that replied STOP: never texted again until they reply START. */
export const smsOptOuts = sqliteTable("sms_optouts", {
  number: text("number").primaryKey(),
  at: integer("at").notNull(),
});

/** A number proven to be an account's: its texts reach that account. The latest proof wins. */
export const smsNumbers = sqliteTable(
  "sms_numbers",
  {
    number: text("number").primaryKey(),
    account: text("account").notNull(),
    at: integer("at").notNull(),
  },
  (t) => [index("sms_numbers_account").on(t.account)],
);

/** The verification code in flight for an account and number; only its hash is kept. */
export const smsCodes = sqliteTable(
  "sms_codes",
  {
    account: text("account").notNull(),
    number: text("number").notNull(),
    hash: text("hash").notNull(),
    expires: integer("expires").notNull(),
    wrong: integer("wrong").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.account, t.number] })],
);
