import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const tasks = sqliteTable(
  "tasks",
  {
    id: text("id").primaryKey(),
    owner: text("owner").notNull(),
    title: text("title").notNull(),
    detail: text("detail").notNull().default(""),
    assignee: text("assignee", { enum: ["me", "agent"] }).notNull().default("me"),
    /** Due time in epoch milliseconds. */
    due: integer("due"),
    status: text("status", { enum: ["todo", "doing", "done"] }).notNull().default("todo"),
    result: text("result").notNull().default(""),
    created: integer("created").notNull(),
    updated: integer("updated").notNull(),
    done: integer("done"),
    /**
     * The most the agent may use when it works on this task: the scopes of the
     * call that made it, narrowed by every call that changed it since ("*" or
     * a JSON list). Tasks from before this was kept get the tasks service
     * alone: who set them working is not known.
     */
    scopes: text("scopes").notNull().default('["tasks"]'),
  },
  (t) => [
    // One status's tasks in the list's order within it, so a status filter reads only those, in order.
    index("tasks_owner_status").on(t.owner, t.status, sql`(CASE WHEN ${t.status} = 'done' THEN -${t.done} WHEN ${t.due} IS NULL THEN 9e15 ELSE ${t.due} END)`, t.created, t.id),
    // tasks/next: the agent's open tasks alone, earliest due first, then the oldest.
    index("tasks_agent_next")
      .on(t.owner, sql`(CASE WHEN ${t.due} IS NULL THEN 9e15 ELSE ${t.due} END)`, t.created)
      .where(sql`${t.assignee} = 'agent' AND ${t.status} != 'done'`),
    // tasks/list's order (open first, earliest due; then done, latest finished; then oldest), so a list is read in order, not sorted.
    index("tasks_open_first").on(
      t.owner,
      sql`(${t.status} = 'done')`,
      sql`(CASE WHEN ${t.status} = 'done' THEN -${t.done} WHEN ${t.due} IS NULL THEN 9e15 ELSE ${t.due} END)`,
      t.created,
      t.id,
    ),
  ],
);
