// Recall: the conversations held with the agent on the web, by mail and on
// the command line, listed, read back and searched. The agent records them
// (store.ts) whether or not anybody asks.
import { Type as T } from "@sinclair/typebox";
import { and, desc, eq, inArray } from "drizzle-orm";
import { notFound, definePlugin, read } from "hearth";
import { conversations } from "./conversations.ts";
import { highlight } from "./highlight.ts";
import { recallConversations, recallMessages } from "./schema.ts";
import { conversationOf, INDEXED_BY, recentMessages, type Conversation } from "./store.ts";

const Client = T.Union([T.Literal("web"), T.Literal("mail"), T.Literal("cli")], { description: "web, mail or cli" });
const iso = (t: number) => new Date(t).toISOString();
const shape = (c: Conversation) => ({ id: c.id, client: c.client, agent: c.agent, topic: c.topic, started: iso(c.started), active: iso(c.active), messages: c.messages });

export default definePlugin({
  name: "recall",
  description: "Past conversations with the agent on the web, by mail and on the command line: listed, read back and searched.",
  needs: ["db", "index"],
  // The agent writes the conversations as it talks (needs: ["conversations"]); recall reads them back.
  provides: { capabilities: { conversations: () => conversations } },
  screens: { recall: { title: "Recall", module: "screens/recall.ts", order: 70 } },
  methods: {
    list: read({
      description: "Your conversations, most recently active first, with topic and the client each happened on (web, mail, cli).",
      args: T.Object({
        client: T.Optional(Client),
        limit: T.Optional(T.Integer({ minimum: 1, maximum: 200, default: 20, description: "How many (default 20, max 200)." })),
      }),
      access: "account",
      untrusted: true,
      async run({ client, limit }, ctx) {
        const where = client ? and(eq(recallConversations.owner, ctx.account.id), eq(recallConversations.client, client)) : eq(recallConversations.owner, ctx.account.id);
        const rows = await ctx.db
          .select()
          .from(recallConversations)
          .where(where)
          .orderBy(desc(recallConversations.active), desc(recallConversations.id))
          .limit(limit ?? 20)
          .all();
        return rows.map(shape);
      },
    }),
    conversation: read({
      description: "One whole conversation: its messages oldest first, each with its role (user, assistant, tool) and time; limit keeps the most recent (default 50).",
      args: T.Object({
        id: T.String({ minLength: 1, maxLength: 64, description: "The conversation's id, from recall/list or recall/search." }),
        limit: T.Optional(T.Integer({ minimum: 1, maximum: 1000, default: 50, description: "Most recent messages kept (default 50, max 1000)." })),
      }),
      access: "account",
      untrusted: true,
      async run({ id, limit }, ctx) {
        const c = await conversationOf(ctx.db, ctx.account.id, id);
        if (!c) throw notFound(`no conversation with id "${id}"`);
        const messages = (await recentMessages(ctx.db, c.id, limit ?? 50)).map((m) => ({ id: m.id, role: m.role, content: m.content, at: iso(m.at) }));
        return { ...shape(c), shown: messages.length, messages };
      },
    }),
    search: read({
      description:
        "Searches everything you have said to an agent and been told, on every client or one (web, mail, cli). Every word must match (as a prefix). Results, most recent first, carry the conversation id and a snippet with the matched words in **bold**.",
      args: T.Object({
        query: T.String({ minLength: 1, maxLength: 500, description: "Words to find." }),
        client: T.Optional(Client),
        limit: T.Optional(T.Integer({ minimum: 1, maximum: 200, default: 20, description: "How many results (default 20, max 200)." })),
      }),
      access: "account",
      untrusted: true,
      async run({ query, client, limit }, ctx) {
        const hits = await ctx.index.search({ query, owner: ctx.account.id, services: [INDEXED_BY], kind: client, limit: limit ?? 20, order: "recent" });
        if (!hits.length) return [];
        const ids = hits.map((h) => h.ref.slice(h.ref.indexOf("/") + 1));
        const rows = new Map(
          (
            await ctx.db
              .select({ id: recallMessages.id, role: recallMessages.role, at: recallMessages.at })
              .from(recallMessages)
              .where(and(inArray(recallMessages.id, ids), eq(recallMessages.owner, ctx.account.id)))
              .all()
          ).map((r) => [r.id, r]),
        );
        const topics = new Map(
          (
            await ctx.db
              .select({ id: recallConversations.id, topic: recallConversations.topic })
              .from(recallConversations)
              .where(and(inArray(recallConversations.id, [...new Set(hits.map((h) => h.ref.slice(0, h.ref.indexOf("/"))))]), eq(recallConversations.owner, ctx.account.id)))
              .all()
          ).map((r) => [r.id, r.topic]),
        );
        const out = [];
        for (const h of hits) {
          const slash = h.ref.indexOf("/");
          const m = rows.get(h.ref.slice(slash + 1));
          // An entry whose message is gone (a conversation removed) is not an answer.
          if (!m) continue;
          const conversation = h.ref.slice(0, slash);
          out.push({ conversation, message: m.id, client: h.kind, topic: topics.get(conversation) ?? "", role: m.role, at: iso(m.at), snippet: highlight(h.snippet, query) });
        }
        return out;
      },
    }),
  },
});
