import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** One conversation with an agent, on one client (web, mail or cli). */
export const recallConversations = sqliteTable(
  "recall_conversations",
  {
    id: text("id").primaryKey(),
    owner: text("owner").notNull(),
    client: text("client", { enum: ["web", "mail", "cli"] }).notNull(),
    /** The named agent it was held with. */
    agent: text("agent").notNull(),
    topic: text("topic").notNull(),
    /** What continues it on its client: a mail thread's first Message-ID, say. */
    thread: text("thread"),
    started: integer("started").notNull(),
    active: integer("active").notNull(),
    messages: integer("messages").notNull().default(0),
  },
  (t) => [index("recall_conversations_owner_active").on(t.owner, t.active), index("recall_conversations_thread").on(t.owner, t.thread)],
);

export const recallMessages = sqliteTable(
  "recall_messages",
  {
    id: text("id").primaryKey(),
    conversation: text("conversation").notNull(),
    owner: text("owner").notNull(),
    /** user: what was said to the agent; assistant: what it answered; tool: what a method it called gave back. */
    role: text("role", { enum: ["user", "assistant", "tool"] }).notNull(),
    content: text("content").notNull(),
    at: integer("at").notNull(),
  },
  (t) => [index("recall_messages_conversation_at").on(t.conversation, t.at)],
);
