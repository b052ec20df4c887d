// ctx.conversations: writing conversations down and reading them back, for
// the agent, which records every turn here as it talks (recall only reads
// them). Provided by recall and given only to a plugin naming
// "conversations" in needs; every function takes the caller's own ctx.db
// (and ctx.index), so a turn lands in the caller's transaction and its index
// entries under the caller's service, as INDEXED_BY says.
import { and, desc, eq } from "drizzle-orm";
import type { Db } from "hearth";
import { recallConversations } from "./schema.ts";
import { addMessage, conversationByThread, conversationOf, openConversation, recentMessages, toolsCalled, type Conversation } from "./store.ts";

/** An account's latest conversations on one client, most recently active first (the agent page's list). */
async function latest(db: Db, owner: string, client: Conversation["client"], limit: number): Promise<Conversation[]> {
  return db
    .select()
    .from(recallConversations)
    .where(and(eq(recallConversations.owner, owner), eq(recallConversations.client, client)))
    .orderBy(desc(recallConversations.active))
    .limit(limit)
    .all();
}

export const conversations = { open: openConversation, of: conversationOf, byThread: conversationByThread, add: addMessage, toolsCalled, recentMessages, latest };
export type Conversations = typeof conversations;
export type { Conversation };

declare module "hearth" {
  interface CapabilityTypes {
    conversations: Conversations;
  }
}
