// One row per request to a model, so an owner can see what the models cost
// and which services spend it; failed requests are kept too (tokens unknown).
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const aiUsage = sqliteTable(
  "ai_usage",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    /** When the request finished (ms since epoch, instance clock). */
    at: integer("at").notNull(),
    requestId: text("request_id").notNull(),
    /** The service whose method asked (text, images, blog, ...). */
    service: text("service").notNull(),
    /** Account the call ran for; null for the instance's own work. */
    account: text("account"),
    /** "chat" or "image". */
    kind: text("kind").notNull(),
    model: text("model").notNull(),
    /** Host of the provider, not its key or full URL. */
    provider: text("provider").notNull(),
    promptTokens: integer("prompt_tokens"),
    completionTokens: integer("completion_tokens"),
    totalTokens: integer("total_tokens"),
    ms: integer("ms").notNull(),
    /** "ok", or the error kind the request ended in. */
    outcome: text("outcome").notNull(),
  },
  (t) => [index("ai_usage_at").on(t.at), index("ai_usage_request").on(t.requestId)],
);
