import { Type as T } from "@sinclair/typebox";
import { and, asc, eq, gt, sql } from "drizzle-orm";
import { prepared, lastly, notFound, fileName, pageAnswer, pageArgs, pageOf, definePlugin, read, write, type Db } from "hearth";
import { foundNotes } from "./find.ts";
import { notes } from "./schema.ts";

const byTitle = (db: Db) =>
  db
    .select()
    .from(notes)
    .where(and(eq(notes.owner, sql.placeholder("owner")), eq(notes.title, sql.placeholder("title"))))
    .prepare();
const upsert = (db: Db) =>
  db
    .insert(notes)
    .values({ owner: sql.placeholder("owner"), title: sql.placeholder("title"), text: sql.placeholder("text"), created: sql.placeholder("now"), updated: sql.placeholder("now") })
    .onConflictDoUpdate({ target: [notes.owner, notes.title], set: { text: sql`excluded.text`, updated: sql`excluded.updated` } })
    .returning()
    .prepare();
const allOf = (db: Db) => db.select().from(notes).where(eq(notes.owner, sql.placeholder("owner"))).orderBy(asc(notes.title)).prepare();
// A page by title, read from the primary key (owner, title) in its order.
const firstPage = (db: Db) => db.select().from(notes).where(eq(notes.owner, sql.placeholder("owner"))).orderBy(asc(notes.title)).limit(sql.placeholder("n")).prepare();
const nextPage = (db: Db) =>
  db
    .select()
    .from(notes)
    .where(and(eq(notes.owner, sql.placeholder("owner")), gt(notes.title, sql.placeholder("after"))))
    .orderBy(asc(notes.title))
    .limit(sql.placeholder("n"))
    .prepare();

const Title = T.String({ minLength: 1, maxLength: 500, description: "The note's title, its key." });

const shape = (n: typeof notes.$inferSelect) => ({
  title: n.title,
  text: n.text,
  created: new Date(n.created).toISOString(),
  updated: new Date(n.updated).toISOString(),
});

export default definePlugin({
  name: "notes",
  description: "Notes: a title and what is under it. The title is the key.",
  needs: ["db"],
  // Each note as a Markdown file named for its title, which is its key.
  exports: async (ctx) => (await prepared(ctx.db, allOf).all({ owner: ctx.caller.account!.id })).map((n) => ({ path: fileName(n.title, ".md"), data: n.text })),
  screens: { notes: { title: "Notes", module: "screens/notes.ts", order: 10, reads: [{ method: "list", args: { limit: 1000 } }] } },
  find: { title: "Notes", method: "list", args: () => ({}), all: true, read: foundNotes },
  methods: {
    add: write({
      description: "Writes a note; an existing title is rewritten.",
      args: T.Object({ title: Title, text: T.String({ maxLength: 1_000_000, description: "The note's text." }) }),
      access: "account",
      destructive: true,
      async run({ title, text }, ctx) {
        const now = ctx.clock.now().getTime();
        // Its one statement is the write's last: on PostgreSQL it goes with the audit entry as one statement, the note's row locked only while it runs.
        return lastly(() => prepared(ctx.db, upsert).all({ owner: ctx.account.id, title, text, now }), ([row]) => shape(row));
      },
    }),
    delete: write({
      description: "Deletes one note by title.",
      args: T.Object({ title: Title }),
      access: "account",
      destructive: true,
      async run({ title }, ctx) {
        const gone = await ctx.db
          .delete(notes)
          .where(and(eq(notes.owner, ctx.account.id), eq(notes.title, title)))
          .returning({ title: notes.title })
          .all();
        if (gone.length === 0) throw notFound(`no note titled "${title}"`);
        return { deleted: title };
      },
    }),
    get: read({
      description: "Reads one note by its title.",
      args: T.Object({ title: Title }),
      access: "account",
      async run({ title }, ctx) {
        const row = await prepared(ctx.db, byTitle).get({ owner: ctx.account.id, title });
        if (!row) throw notFound(`no note titled "${title}"`);
        return shape(row);
      },
    }),
    list: read({
      description: "Every note the caller has written, with its text, by title (at most 1,000; `limit` and `cursor` read them in pages).",
      args: T.Object({ ...pageArgs }),
      access: "account",
      async run(args, ctx) {
        const page = pageOf(args, ["string"]);
        const owner = ctx.account.id;
        const rows = page.after ? await prepared(ctx.db, nextPage).all({ owner, after: page.after[0], n: page.read }) : await prepared(ctx.db, firstPage).all({ owner, n: page.read });
        return pageAnswer(rows, page, (n) => [n.title], (rows) => rows.map(shape));
      },
    }),
  },
});
