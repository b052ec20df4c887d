import { Type as T } from "@sinclair/typebox";
import { and, desc, eq, inArray } from "drizzle-orm";
import { conflict, invalid, notFound, fileName, ownership, definePlugin, read, write, type Ctx, retract, plainText, renderMarkdown, escapeHtml, notFoundPage, publicPage as page } from "hearth";
import { documents } from "./schema.ts";

type Doc = typeof documents.$inferSelect;

const owned = ownership<Doc>({
  what: "document",
  ownerColumn: documents.owner,
  ownerOf: (d) => d.owner,
  publicWhere: eq(documents.public, true),
  isPublic: (d) => d.public,
  othersPublic: "not_found",
});

const newId = () => Buffer.from(crypto.getRandomValues(new Uint8Array(12))).toString("base64url");
const urlOf = (ctx: Ctx, id: string) => `${ctx.baseUrl}/docs/${id}`;
const Id = T.String({ minLength: 1, maxLength: 64, description: "The document's id, as write returned it." });

const summary = (ctx: Ctx, d: Doc) => ({
  id: d.id,
  title: d.title,
  snippet: snippetOf(d.content),
  public: d.public,
  url: d.public ? urlOf(ctx, d.id) : null,
  created: new Date(d.created).toISOString(),
  updated: new Date(d.updated).toISOString(),
});

const full = (ctx: Ctx, d: Doc) => ({ ...summary(ctx, d), content: d.content });

function snippetOf(markdown: string): string {
  const text = plainText(markdown);
  return text.length > 160 ? `${text.slice(0, 157).trimEnd()}…` : text;
}

export default definePlugin({
  name: "docs",
  description: "Documents in markdown, private unless published; a published one has a page anyone can read.",
  needs: ["db", "index", "emit", "lock"],
  // Each document as the Markdown it is written in, named for its title.
  exports: async (ctx) =>
    (await ctx.db.select().from(documents).where(owned.mine(ctx.caller)).orderBy(documents.created).all()).map((d) => ({ path: fileName(d.title, ".md"), data: d.content })),
  screens: { docs: { title: "Documents", module: "screens/docs.ts", order: 20, reads: [{ method: "list", args: { limit: 500 } }] } },
  find: {
    title: "Documents",
    method: "list",
    args: (query) => ({ query, limit: 20 }),
    read: (result) =>
      (Array.isArray(result) ? (result as { id: string; title: string; snippet: string }[]) : []).map((d) => ({ title: d.title, detail: d.snippet, href: `/my/docs?open=${encodeURIComponent(d.id)}` })),
  },
  methods: {
    write: write({
      description:
        "Creates a document, or replaces the caller's document whose `id` is given (title, content and visibility all replaced). Private unless `public` is true; a public one is readable by anyone at its `url`.",
      args: T.Object({
        title: T.String({ minLength: 1, maxLength: 500, description: "The document's title." }),
        content: T.String({ maxLength: 1_000_000, description: "The body, in markdown." }),
        id: T.Optional(Id),
        public: T.Optional(T.Boolean({ description: "True publishes the document at its URL; default false (private)." })),
      }),
      access: "account",
      outbound: true,
      destructive: true,
      async run(args, ctx) {
        const now = ctx.clock.now().getTime();
        const isPublic = args.public ?? false;
        let doc: Doc;
        let wasPublic = false;
        if (args.id !== undefined) {
          // Whether it is published or withdrawn depends on what it was: no other write may change it in between.
          await ctx.lock(`doc:${args.id}`);
          const before = owned.own(await ctx.db.select().from(documents).where(eq(documents.id, args.id)).get(), ctx.caller, args.id);
          wasPublic = before.public;
          doc = await ctx.db
            .update(documents)
            .set({ title: args.title, content: args.content, public: isPublic, updated: now })
            .where(eq(documents.id, before.id))
            .returning()
            .get();
        } else {
          doc = await ctx.db
            .insert(documents)
            .values({ id: newId(), owner: owned.owner(ctx.caller), title: args.title, content: args.content, public: isPublic, created: now, updated: now })
            .returning()
            .get();
        }
        await ctx.index.put({ kind: "doc", ref: doc.id, owner: doc.owner, title: doc.title, body: doc.content });
        if (doc.public && !wasPublic)
          await ctx.emit({ type: "doc.published", text: `A document was published: ${doc.title}`, url: urlOf(ctx, doc.id), data: { ref: doc.id } });
        if (!doc.public && wasPublic) await retract(ctx.db, "docs", doc.id);
        return full(ctx, doc);
      },
    }),
    list: read({
      description: "The caller's documents, most recently changed first, with snippets; `query` keeps those whose title or body matches every word.",
      args: T.Object({
        query: T.Optional(T.String({ maxLength: 500, description: "Words to find in titles and bodies." })),
        limit: T.Integer({ minimum: 1, maximum: 500, default: 50, description: "How many to return (default 50, max 500)." }),
      }),
      access: "account",
      async run({ query, limit }, ctx) {
        const mine = owned.mine(ctx.caller);
        let where = mine;
        if (query !== undefined && query.trim() !== "") {
          const hits = await ctx.index.search({ query, kind: "doc", owner: ctx.account.id, limit: 1000 });
          if (hits.length === 0) return [];
          where = and(mine, inArray(documents.id, hits.map((h) => h.ref)))!;
        }
        return (await ctx.db.select().from(documents).where(where).orderBy(desc(documents.updated), desc(documents.created)).limit(limit).all()).map((d) => summary(ctx, d));
      },
    }),
    read: read({
      description:
        "One document in full, by `id` (the caller's own, or anyone's public one) or by exact `title` among the caller's own (several with that title: 409 listing their ids).",
      args: T.Object({
        id: T.Optional(Id),
        title: T.Optional(T.String({ minLength: 1, maxLength: 500, description: "The exact title of one of the caller's documents." })),
      }),
      access: "account",
      async run({ id, title }, ctx) {
        if (id !== undefined) return full(ctx, owned.see(await ctx.db.select().from(documents).where(eq(documents.id, id)).get(), ctx.caller, id));
        if (title === undefined) throw invalid("id", "give the document's id, or its exact title");
        const found = await ctx.db.select().from(documents).where(and(owned.mine(ctx.caller), eq(documents.title, title))).orderBy(desc(documents.updated)).all();
        if (found.length === 0) throw notFound(`no document titled ${JSON.stringify(title)}`);
        if (found.length > 1)
          throw conflict(`${found.length} documents are titled ${JSON.stringify(title)}: read one by id`, {
            candidates: found.map((d) => ({ id: d.id, title: d.title, updated: new Date(d.updated).toISOString() })),
          });
        return full(ctx, found[0]);
      },
    }),
    delete: write({
      description: "Deletes one of the caller's documents. Irreversible.",
      args: T.Object({ id: Id }),
      access: "account",
      destructive: true,
      async run({ id }, ctx) {
        await ctx.lock(`doc:${id}`);
        const doc = owned.own(await ctx.db.select().from(documents).where(eq(documents.id, id)).get(), ctx.caller, id);
        await ctx.db.delete(documents).where(eq(documents.id, doc.id)).run();
        await ctx.index.remove("doc", doc.id);
        if (doc.public) await retract(ctx.db, "docs", doc.id);
        return { deleted: doc.id, title: doc.title };
      },
    }),
  },
  routes: [
    {
      method: "GET",
      path: "/docs/:id",
      async run(_req, ctx) {
        const doc = await ctx.db.select().from(documents).where(eq(documents.id, ctx.params.id)).get();
        // The owner may preview a private document at its future address; anyone else gets the same 404 as for nothing.
        if (!doc || !owned.canSee(doc, ctx.caller)) return notFoundPage("There is no public document at this address.");
        return page({
          title: doc.title,
          headers: doc.public ? { "cache-control": "public, max-age=60" } : { "cache-control": "private, no-store", "x-robots-tag": "noindex" },
          body: `<main><article>
<h1>${escapeHtml(doc.title)}</h1>
${doc.public ? "" : "<p><strong>Private:</strong> only you can see this page.</p>"}
${renderMarkdown(doc.content)}
</article></main>
<footer><p>Last changed <time datetime="${new Date(doc.updated).toISOString()}">${new Date(doc.updated).toUTCString()}</time></p></footer>`,
        });
      },
    },
  ],
});
