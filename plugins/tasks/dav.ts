// The account's tasks as one CalDAV task list (VTODO). STATUS maps to the
// task's state, DUE to its due time and X-HEARTH-ASSIGNEE to who does it; a
// client's change goes through tasks/create and tasks/update. tasks/update
// leaves the due time and assignee as they were made, so a client changing
// either makes the task anew (tasks/delete, tasks/create) with its state and
// result carried over.
import { and, eq } from "drizzle-orm";
import type { DavCollection } from "../../core/dav/collection.ts";
import { calendarComponent, ICAL, textOf, uidOf } from "../../core/dav/ical.ts";
import { HearthError } from "../../core/errors.ts";
import { parseDue } from "./due.ts";
import { tasks } from "./schema.ts";

type Row = typeof tasks.$inferSelect;
const TO_STATUS = { todo: "NEEDS-ACTION", doing: "IN-PROCESS", done: "COMPLETED" } as const;
const FROM_STATUS: Record<string, "todo" | "doing" | "done"> = { "": "todo", "NEEDS-ACTION": "todo", "IN-PROCESS": "doing", COMPLETED: "done" };
const ASSIGNEE = "x-hearth-assignee";

const utc = (ms: number) => ICAL.Time.fromJSDate(new Date(ms), true);

function argsOf(text: string) {
  const comp = calendarComponent(text, "vtodo");
  const raw = textOf(comp, "status").toUpperCase();
  const status = FROM_STATUS[raw];
  if (!status) throw new HearthError("invalid_argument", `STATUS:${raw} cannot be kept: a task is NEEDS-ACTION, IN-PROCESS or COMPLETED`, { field: "status" });
  const due = comp.getFirstPropertyValue("due") as InstanceType<typeof ICAL.Time> | null;
  const args: Record<string, unknown> = {
    title: textOf(comp, "summary"),
    detail: textOf(comp, "description"),
    due: due ? new Date(due.toUnixTime() * 1000).toISOString() : "",
  };
  const assignee = textOf(comp, ASSIGNEE);
  if (assignee) args.assignee = assignee;
  return { args, status, uid: uidOf(comp) };
}

export const tasksCalendar: DavCollection = {
  type: "calendar",
  component: "VTODO",
  displayName: "Tasks",
  list: async (ctx) => (await ctx.db.select().from(tasks).where(eq(tasks.owner, ctx.account.id)).all()).map((t) => ({ id: t.id, data: t })),
  get: async (id, ctx) => {
    const t = await ctx.db.select().from(tasks).where(and(eq(tasks.id, id), eq(tasks.owner, ctx.account.id))).get();
    return t && { id: t.id, data: t };
  },
  render(rec, o) {
    const t = rec.data as Row;
    const cal = new ICAL.Component("vcalendar");
    cal.addPropertyWithValue("version", "2.0");
    cal.addPropertyWithValue("prodid", "-//Hearth//tasks//EN");
    const todo = new ICAL.Component("vtodo");
    todo.addPropertyWithValue("uid", o.uid);
    todo.addPropertyWithValue("dtstamp", utc(t.updated));
    todo.addPropertyWithValue("created", utc(t.created));
    todo.addPropertyWithValue("last-modified", utc(t.updated));
    todo.addPropertyWithValue("summary", t.title);
    if (t.detail) todo.addPropertyWithValue("description", t.detail);
    if (t.due !== null) todo.addPropertyWithValue("due", utc(t.due));
    todo.addPropertyWithValue("status", TO_STATUS[t.status]);
    if (t.done !== null) todo.addPropertyWithValue("completed", utc(t.done));
    todo.addPropertyWithValue(ASSIGNEE, t.assignee);
    cal.addSubcomponent(todo);
    return `${cal.toString()}\r\n`;
  },
  async put(text, id, ctx) {
    const { args, status, uid } = argsOf(text);
    const before = id ? await ctx.db.select().from(tasks).where(and(eq(tasks.id, id), eq(tasks.owner, ctx.account.id))).get() : undefined;
    const due = args.due ? parseDue(args.due as string) : null;
    if (before && before.due === due && before.assignee === (args.assignee ?? before.assignee)) {
      await ctx.call("tasks", "update", { id: before.id, title: args.title, detail: args.detail, status });
      return { id: before.id, uid };
    }
    if (id) await ctx.call("tasks", "delete", { id });
    const { due: given, ...rest } = args;
    const made = (await ctx.call("tasks", "create", given ? args : rest)) as { id: string };
    const carried: Record<string, unknown> = {};
    if (status !== "todo") carried.status = status;
    if (before?.result) carried.result = before.result;
    if (Object.keys(carried).length) await ctx.call("tasks", "update", { id: made.id, ...carried });
    return { id: made.id, uid };
  },
  async remove(id, ctx) {
    await ctx.call("tasks", "delete", { id });
  },
};
