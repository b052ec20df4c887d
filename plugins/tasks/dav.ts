// The account's tasks as one CalDAV task list (VTODO). STATUS maps to the
// task's state, DUE to its due time and X-HEARTH-ASSIGNEE to who does it; a
// client's change goes through tasks/create and tasks/update. A client
// changing the due time or assignee has them set on the task itself (checked
// as tasks/create checks them, and named as the card names them), which keeps
// its id, state and result.
//
// The VTODO a client sent stays the record: a change over the API rewrites
// the lines of what the task keeps (SUMMARY, DESCRIPTION, STATUS with
// COMPLETED, DUE, X-HEARTH-ASSIGNEE) and leaves PRIORITY, alarms, categories
// and every other line as the client wrote it.
import { and, eq } from "drizzle-orm";
import { type DavCollection, calendarSeries, ICAL, textOf, uidOf, HearthError } from "hearth";
import { ContentPatch, escapeText, utcStamp } from "hearth/dav";
import { parseDue } from "./due.ts";
import { tasks } from "./schema.ts";

type Row = typeof tasks.$inferSelect;
const TO_STATUS = { todo: "NEEDS-ACTION", doing: "IN-PROCESS", done: "COMPLETED" } as const;
const FROM_STATUS: Record<string, "todo" | "doing" | "done"> = { "": "todo", "NEEDS-ACTION": "todo", "IN-PROCESS": "doing", COMPLETED: "done" };
const ASSIGNEE = "x-hearth-assignee";

const utc = (ms: number) => ICAL.Time.fromJSDate(new Date(ms), true);

function argsOf(text: string) {
  // A repeating task's changed occurrences (RECURRENCE-ID) are kept in the client's text; the task is its series.
  const comp = calendarSeries(text, "vtodo").master;
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

/** The client's VTODO with what the task keeps brought up to the record; every other line as sent. */
function patchTodo(raw: string, t: Row): string {
  const { args, status } = argsOf(raw);
  const p = new ContentPatch(raw, "VTODO");
  let changed = false;
  if (args.title !== t.title) {
    changed = true;
    p.setValue("SUMMARY", escapeText(t.title));
  }
  if (args.detail !== t.detail) {
    changed = true;
    if (t.detail) p.setValue("DESCRIPTION", escapeText(t.detail));
    else p.remove("DESCRIPTION");
  }
  const due = args.due ? Date.parse(args.due as string) : null;
  if (due !== t.due) {
    changed = true;
    if (t.due === null) p.remove("DUE");
    else p.setLine("DUE", `DUE:${utcStamp(t.due)}`);
  }
  if ((args.assignee ?? "me") !== t.assignee) {
    changed = true;
    p.setLine(ASSIGNEE.toUpperCase(), `${ASSIGNEE.toUpperCase()}:${t.assignee}`);
  }
  if (status !== t.status) {
    changed = true;
    p.setLine("STATUS", `STATUS:${TO_STATUS[t.status]}`);
    if (t.done !== null) p.setLine("COMPLETED", `COMPLETED:${utcStamp(t.done)}`);
    else p.remove("COMPLETED");
    // A percentage that says otherwise would contradict the state.
    if (p.has("PERCENT-COMPLETE")) {
      if (t.status === "done") p.setLine("PERCENT-COMPLETE", "PERCENT-COMPLETE:100");
      else if (status === "done") p.remove("PERCENT-COMPLETE");
    }
  }
  if (changed) {
    // When the object was last revised in the store (RFC 5545 3.8.7.2, 3.8.7.3).
    p.setLine("DTSTAMP", `DTSTAMP:${utcStamp(t.updated)}`);
    if (p.has("LAST-MODIFIED")) p.setLine("LAST-MODIFIED", `LAST-MODIFIED:${utcStamp(t.updated)}`);
  }
  return p.toString();
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
    if (o.raw) return patchTodo(o.raw, t);
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
  async put(text, id, ctx, current) {
    const { args, status, uid } = argsOf(text);
    const before = id ? (current?.id === id ? (current.data as typeof tasks.$inferSelect) : await ctx.db.select().from(tasks).where(and(eq(tasks.id, id), eq(tasks.owner, ctx.account.id))).get()) : undefined;
    const due = args.due ? parseDue(args.due as string) : null;
    if (before) {
      const assignee = (args.assignee as string | undefined) ?? before.assignee;
      if (before.due !== due || before.assignee !== assignee) {
        if (assignee !== "me" && assignee !== "agent") throw new HearthError("invalid_argument", `X-HEARTH-ASSIGNEE:${assignee} cannot be kept: a task is done by me or agent`, { field: "assignee" });
        await ctx.db.update(tasks).set({ due, assignee }).where(eq(tasks.id, before.id)).run();
      }
      // tasks/update dates the change and narrows the task's scopes to this call's, as for any change.
      await ctx.call("tasks", "update", { id: before.id, title: args.title, detail: args.detail, status });
      return { id: before.id, uid };
    }
    const { due: given, ...rest } = args;
    const made = (await ctx.call("tasks", "create", given ? args : rest)) as { id: string };
    if (status !== "todo") await ctx.call("tasks", "update", { id: made.id, status });
    return { id: made.id, uid };
  },
  async remove(id, ctx) {
    await ctx.call("tasks", "delete", { id });
  },
};
