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
  },
  (t) => [index("tasks_owner_status").on(t.owner, t.status)],
);
