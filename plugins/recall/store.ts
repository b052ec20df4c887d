// Writing conversations down. The agent records every turn here, on whichever
// client it happened, and indexes what was said and told so recall/search
// finds it; tool results are kept in the conversation but not indexed.
import { and, desc, eq, sql } from "drizzle-orm";
import type { Db, FullTextIndex } from "hearth";
import { recallConversations, recallMessages } from "./schema.ts";

export type Client = "web" | "mail" | "cli";
export const CLIENTS: Client[] = ["web", "mail", "cli"];
export type Role = "user" | "assistant" | "tool";

/** The service whose index entries hold the conversations: the agent writes them as it talks. */
export const INDEXED_BY = "agent";

export type Conversation = typeof recallConversations.$inferSelect;

/** A topic is the opening words of what was first said, on one line. */
export function topicOf(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length <= 80 ? line || "(empty)" : `${line.slice(0, 79).replace(/\s+\S*$/, "")}…`;
}

export async function openConversation(db: Db, c: { owner: string; client: Client; agent: string; topic: string; thread?: string | null; at: number }): Promise<Conversation> {
  const row: Conversation = { id: Bun.randomUUIDv7(), owner: c.owner, client: c.client, agent: c.agent, topic: topicOf(c.topic), thread: c.thread ?? null, started: c.at, active: c.at, messages: 0 };
  await db.insert(recallConversations).values(row).run();
  return row;
}

export async function conversationOf(db: Db, owner: string, id: string): Promise<Conversation | null> {
  return (await db.select().from(recallConversations).where(and(eq(recallConversations.id, id), eq(recallConversations.owner, owner))).get()) ?? null;
}

/** The conversation a mail thread (or other client key) already belongs to. */
export async function conversationByThread(db: Db, owner: string, client: Client, threads: string[]): Promise<Conversation | null> {
  for (const t of threads) {
    const row = await db
      .select()
      .from(recallConversations)
      .where(and(eq(recallConversations.owner, owner), eq(recallConversations.thread, t), eq(recallConversations.client, client)))
      .orderBy(desc(recallConversations.active))
      .get();
    if (row) return row;
  }
  return null;
}

export async function addMessage(db: Db, index: FullTextIndex, c: Conversation, m: { role: Role; content: string; at: number }) {
  const id = Bun.randomUUIDv7();
  await db.insert(recallMessages).values({ id, conversation: c.id, owner: c.owner, role: m.role, content: m.content, at: m.at }).run();
  // The later of the two times, spelled in SQL both SQLite and PostgreSQL read (SQLite's two-argument max() is PostgreSQL's greatest()).
  await db
    .update(recallConversations)
    .set({
      active: sql`case when ${recallConversations.active} > ${m.at} then ${recallConversations.active} else ${m.at} end`,
      messages: sql`${recallConversations.messages} + 1`,
    })
    .where(eq(recallConversations.id, c.id))
    .run();
  // The topic is left out of the entry: in it, every message of a conversation would match its topic's words.
  if (m.role !== "tool" && m.content.trim()) await index.put({ kind: c.client, ref: `${c.id}/${id}`, owner: c.owner, title: "", body: m.content });
  return id;
}

/** The messages to hand the model again when a conversation continues: the latest ones, oldest first. */
/** The tools a conversation's agent called, once each, as its tool messages begin ("notes_list {…}"), without reading their results. */
export async function toolsCalled(db: Db, conversation: string): Promise<string[]> {
  const rows = await db
    .select({ head: sql<string>`substr(${recallMessages.content}, 1, 80)` })
    .from(recallMessages)
    .where(and(eq(recallMessages.conversation, conversation), eq(recallMessages.role, "tool")))
    .all();
  return [...new Set(rows.map((r) => r.head.split(" ", 1)[0]))];
}

export async function recentMessages(db: Db, conversation: string, limit: number) {
  const rows = await db
    .select()
    .from(recallMessages)
    .where(eq(recallMessages.conversation, conversation))
    .orderBy(desc(recallMessages.at), desc(recallMessages.id))
    .limit(limit)
    .all();
  return rows.reverse();
}
