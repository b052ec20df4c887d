import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** An account's named agents: `default` is always there; others are made with an instruction. */
export const agentAgents = sqliteTable(
  "agent_agents",
  {
    owner: text("owner").notNull(),
    name: text("name").notNull(),
    instruction: text("instruction").notNull(),
    created: integer("created").notNull(),
    updated: integer("updated").notNull(),
  },
  (t) => [primaryKey({ columns: [t.owner, t.name] })],
);
