import { Type as T } from "@sinclair/typebox";
import { and, asc, eq, sql } from "drizzle-orm";
import { newId, intersectScopes, scopesFromText, scopesText, notFound, prepared, pageAnswer, pageArgs, pageOf, definePlugin, read, write, type Db } from "hearth";
import { tasksCalendar } from "./dav.ts";
import { parseDue } from "./due.ts";
import { tasks } from "./schema.ts";
import { tasksCard } from "./card.ts";

const Status = T.Union([T.Literal("todo"), T.Literal("doing"), T.Literal("done")], { description: "todo, doing or done" });
const Id = T.String({ minLength: 1, maxLength: 64, description: "The task's id, from tasks/list." });

type Row = typeof tasks.$inferSelect;
const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());
const shape = (t: Row) => ({
  id: t.id,
  title: t.title,
  detail: t.detail,
  assignee: t.assignee,
  due: iso(t.due),
  status: t.status,
  result: t.result,
  created: iso(t.created),
  updated: iso(t.updated),
  done: iso(t.done),
  scopes: scopesFromText(t.scopes),
});

// Open tasks first (earliest due, then oldest), then done ones, most recently
// finished first: the order the tasks_open_first index keeps (schema.ts), so
// SQLite reads a list in order instead of sorting it. The expressions are the
// index's, written the same way, or SQLite would not use it. The id comes
// last so that tasks alike in all else have one place, which a page's cursor names.
const listColumns = {
  id: tasks.id,
  title: tasks.title,
  detail: tasks.detail,
  assignee: tasks.assignee,
  due: tasks.due,
  status: tasks.status,
  result: tasks.result,
  created: tasks.created,
  updated: tasks.updated,
  done: tasks.done,
  scopes: tasks.scopes,
};
const isDone = sql`(${tasks.status} = 'done')`;
const rank = sql`(CASE WHEN ${tasks.status} = 'done' THEN -${tasks.done} WHEN ${tasks.due} IS NULL THEN 9e15 ELSE ${tasks.due} END)`;
const mine = eq(tasks.owner, sql.placeholder("owner"));
export const listQuery = (db: Db) => db.select(listColumns).from(tasks).where(mine).orderBy(isDone, rank, tasks.created, tasks.id).limit(sql.placeholder("n"));
// Those of one status, in the same order, from the tasks_owner_status index: without it a status no task has read every task to find none.
export const statusQuery = (db: Db) =>
  db
    .select(listColumns)
    .from(tasks)
    .where(and(mine, eq(tasks.status, sql.placeholder("status"))))
    .orderBy(rank, tasks.created, tasks.id)
    .limit(sql.placeholder("n"));
const listStmt = (db: Db) => listQuery(db).prepare();
const statusStmt = (db: Db) => statusQuery(db).prepare();
// The page after a task's place in that order: its key compared as one row value, (done?, due or finish, created, id).
const k = (i: number) => sql.placeholder(`k${i}`);
const nextPage = (db: Db) =>
  db
    .select(listColumns)
    .from(tasks)
    .where(and(mine, sql`(CASE WHEN ${tasks.status} = 'done' THEN 1 ELSE 0 END, ${rank}, ${tasks.created}, ${tasks.id}) > (${k(0)}, ${k(1)}, ${k(2)}, ${k(3)})`))
    .orderBy(isDone, rank, tasks.created, tasks.id)
    .limit(sql.placeholder("n"))
    .prepare();
const nextStatusPage = (db: Db) =>
  db
    .select(listColumns)
    .from(tasks)
    .where(and(mine, eq(tasks.status, sql.placeholder("status")), sql`(${rank}, ${tasks.created}, ${tasks.id}) > (${k(1)}, ${k(2)}, ${k(3)})`))
    .orderBy(rank, tasks.created, tasks.id)
    .limit(sql.placeholder("n"))
    .prepare();
// The agent's next task, read from the tasks_agent_next index: its conditions
// are written as the index states them, literally, or SQLite would not use it.
export const nextQuery = (db: Db) =>
  db
    .select()
    .from(tasks)
    .where(and(mine, sql`${tasks.assignee} = 'agent'`, sql`${tasks.status} != 'done'`))
    .orderBy(sql`(CASE WHEN ${tasks.due} IS NULL THEN 9e15 ELSE ${tasks.due} END)`, asc(tasks.created))
    .limit(1);
const nextStmt = (db: Db) => nextQuery(db).prepare();

/** A listed task's place in the list's order, as its cursor holds it. */
const keyOf = (t: { status: string; done: number | null; due: number | null; created: number; id: string }) => {
  const done = t.status === "done";
  return [done ? 1 : 0, done ? -(t.done ?? 0) : (t.due ?? 9e15), t.created, t.id];
};

/**
 * A list's rows, made into answers in place. Times repeat
 * across a list (a task's created and updated, a shared due) and so do scopes:
 * each distinct one is formatted or parsed once.
 */
function shapeList(rows: Omit<Row, "owner">[]): ReturnType<typeof shape>[] {
  const times = new Map<number, string>();
  const isoOnce = (t: number | null) => {
    if (t === null) return null;
    let s = times.get(t);
    if (s === undefined) times.set(t, (s = new Date(t).toISOString()));
    return s;
  };
  const scopes = new Map<string, "*" | string[]>();
  const out = rows as unknown as ReturnType<typeof shape>[];
  for (const r of rows as unknown as Record<string, unknown>[]) {
    r.due = isoOnce(r.due as number | null);
    r.created = isoOnce(r.created as number);
    r.updated = isoOnce(r.updated as number);
    r.done = isoOnce(r.done as number | null);
    const text = r.scopes as string;
    let sc = scopes.get(text);
    if (sc === undefined) scopes.set(text, (sc = scopesFromText(text)));
    r.scopes = sc;
  }
  return out;
}

async function own(ctx: { db: Db; account: { id: string } }, id: string): Promise<Row> {
  const row = await ctx.db.select().from(tasks).where(and(eq(tasks.id, id), eq(tasks.owner, ctx.account.id))).get();
  if (!row) throw notFound(`no task with id "${id}"`);
  return row;
}

export default definePlugin({
  name: "tasks",
  card: tasksCard,
  description: "Tasks with a state (todo, doing, done), a due time and an assignee: you or the agent.",
  needs: ["db", "call", "lock"],
  dav: tasksCalendar,
  screens: { tasks: { title: "Tasks", module: "screens/tasks.ts", order: 20, reads: [{ method: "list", args: { limit: 1000 } }] } },
  methods: {
    create: write({
      description:
        'Adds a task. assignee is "me" (default) or "agent"; a task assigned to the agent can be picked up by the agent itself, which then uses at most the services the calling token may (its `scopes`); as for an event prompt, those must include `agent`, or the task stays todo with the reason as its result. due is RFC3339 or "YYYY-MM-DD HH:MM" (read as UTC).',
      args: T.Object({
        title: T.String({ minLength: 1, maxLength: 500 }),
        detail: T.Optional(T.String({ maxLength: 20_000 })),
        assignee: T.Optional(T.Union([T.Literal("me"), T.Literal("agent")], { description: "me (default) or agent" })),
        due: T.Optional(T.String({ description: 'RFC3339 or "YYYY-MM-DD HH:MM"' })),
      }),
      access: "account",
      async run(a, ctx) {
        const now = ctx.clock.now().getTime();
        const row: Row = {
          id: newId(),
          owner: ctx.account.id,
          title: a.title,
          detail: a.detail ?? "",
          assignee: a.assignee ?? "me",
          due: a.due === undefined || a.due === "" ? null : parseDue(a.due),
          status: "todo",
          result: "",
          created: now,
          updated: now,
          done: null,
          scopes: scopesText(ctx.caller.scopes),
        };
        await ctx.db.insert(tasks).values(row).run();
        return shape(row);
      },
    }),
    delete: write({
      description: "Removes a task.",
      args: T.Object({ id: Id }),
      access: "account",
      destructive: true,
      async run({ id }, ctx) {
        // One statement: of two deletes at once, the second finds nothing, as it would after the first.
        const gone = await ctx.db
          .delete(tasks)
          .where(and(eq(tasks.id, id), eq(tasks.owner, ctx.account.id)))
          .returning({ id: tasks.id })
          .all();
        if (gone.length === 0) throw notFound(`no task with id "${id}"`);
        return { deleted: id };
      },
    }),
    list: read({
      description: "The caller's tasks: open ones first (earliest due first), then done ones; optionally only those with a status (at most 1,000; `limit` and `cursor` read them in pages).",
      args: T.Object({ status: T.Optional(Status), ...pageArgs }),
      access: "account",
      async run(args, ctx) {
        const page = pageOf(args, ["number", "number", "number", "string"]);
        const owner = ctx.account.id;
        const n = page.read;
        const after = page.after && { k1: page.after[1], k2: page.after[2], k3: page.after[3] };
        const status = args.status;
        const rows = status
          ? after
            ? await prepared(ctx.db, nextStatusPage).all({ owner, status, n, ...after })
            : await prepared(ctx.db, statusStmt).all({ owner, status, n })
          : after
            ? await prepared(ctx.db, nextPage).all({ owner, n, k0: page.after![0], ...after })
            : await prepared(ctx.db, listStmt).all({ owner, n });
        return pageAnswer(rows, page, keyOf, shapeList);
      },
    }),
    next: read({
      description: "The next task assigned to the agent: the open one due earliest, then the oldest. Null when there is none.",
      args: T.Object({}),
      access: "account",
      async run(_a, ctx) {
        const row = await prepared(ctx.db, nextStmt).get({ owner: ctx.account.id });
        return row ? shape(row) : null;
      },
    }),
    update: write({
      description:
        "Changes a task's title, detail, state (todo, doing, done), result, due time (\"\" removes it) or assignee. Omitted fields keep their value. The task's `scopes` narrow to this call's token's: the agent never does more on a task than everyone who shaped it may.",
      args: T.Object({
        id: Id,
        title: T.Optional(T.String({ minLength: 1, maxLength: 500 })),
        detail: T.Optional(T.String({ maxLength: 20_000 })),
        status: T.Optional(Status),
        result: T.Optional(T.String({ maxLength: 20_000 })),
        // Beyond the spec (README, "Additions to the spec"): a person rescheduling or handing over a task.
        due: T.Optional(T.String({ maxLength: 64, description: 'RFC3339 or "YYYY-MM-DD HH:MM" (read as UTC); "" removes the due time' })),
        assignee: T.Optional(T.Union([T.Literal("me"), T.Literal("agent")], { description: "me or agent" })),
      }),
      access: "account",
      destructive: true,
      async run(a, ctx) {
        // What is written is the task as read, changed: no other write may change it in between.
        // The due time is read before anything is written, so a bad one changes nothing.
        const due = a.due === undefined ? undefined : a.due.trim() === "" ? null : parseDue(a.due);
        await ctx.lock(`task:${a.id}`);
        const row = await own(ctx, a.id);
        const now = ctx.clock.now().getTime();
        const next: Row = {
          ...row,
          title: a.title ?? row.title,
          detail: a.detail ?? row.detail,
          status: a.status ?? row.status,
          result: a.result ?? row.result,
          due: due === undefined ? row.due : due,
          assignee: a.assignee ?? row.assignee,
          updated: now,
          // Narrowed, never widened: a wider token changing the task cannot vouch for what a narrower one asked of it.
          scopes: scopesText(intersectScopes(scopesFromText(row.scopes), ctx.caller.scopes)),
        };
        if (next.status === "done" && row.status !== "done") next.done = now;
        if (next.status !== "done") next.done = null;
        await ctx.db.update(tasks).set(next).where(eq(tasks.id, row.id)).run();
        return shape(next);
      },
    }),
  },
});
