import { Type as T } from "@sinclair/typebox";
import { and, desc, eq, sql } from "drizzle-orm";
import { conflict, forbidden, invalid, notFound, ownership, titleByModel, definePlugin, read, write, type Caller, type Ctx, retract } from "hearth";
import { feedResponse } from "./feed.ts";
import { indexPage, postPage } from "./pages.ts";
import { posts } from "./schema.ts";
import { normaliseTags, snippetOf, titleFrom } from "./text.ts";

type Post = typeof posts.$inferSelect;

const owned = ownership<Post>({
  what: "post",
  ownerColumn: posts.author,
  ownerOf: (p) => p.author,
  publicWhere: eq(posts.private, false),
  isPublic: (p) => !p.private,
});

const newId = () => Buffer.from(crypto.getRandomValues(new Uint8Array(9))).toString("base64url");
const urlOf = (ctx: Ctx, id: string) => `${ctx.baseUrl}/blog/${id}`;

const Content = T.String({ minLength: 50, maxLength: 100_000, description: "The post, in markdown: at least 50 characters." });
const Title = T.String({ minLength: 1, maxLength: 200, description: "The post's title." });
const Tags = T.String({ maxLength: 1000, description: 'Comma-separated tags, e.g. "garden, food".' });
const Id = T.String({ minLength: 1, maxLength: 64, description: "The post's id." });
const TitleQuery = T.String({ minLength: 1, maxLength: 200, description: "Enough of the title to pick one post (case-insensitive)." });

const summary = (ctx: Ctx, p: Post) => ({
  id: p.id,
  title: p.title,
  snippet: snippetOf(p.content),
  tags: p.tags,
  author: p.authorName,
  private: p.private,
  url: urlOf(ctx, p.id),
  created: new Date(p.created).toISOString(),
  updated: new Date(p.updated).toISOString(),
});
const full = (ctx: Ctx, p: Post) => ({ ...summary(ctx, p), content: p.content });

/**
 * Picks the one post a title means: an exact title first, then titles that
 * start with it, then titles that contain it (all case-insensitive). Several
 * at the first level that matches is a 409 listing them, never a guess.
 */
function byTitle(candidates: Post[], title: string): Post | null {
  const q = title.trim().toLocaleLowerCase();
  const levels = [
    (t: string) => t === q,
    (t: string) => t.startsWith(q),
    (t: string) => t.includes(q),
  ];
  for (const matches of levels) {
    const found = candidates.filter((p) => matches(p.title.toLocaleLowerCase()));
    if (found.length === 1) return found[0];
    if (found.length > 1)
      throw conflict(`${found.length} posts match the title ${JSON.stringify(title)}: give the id or more of the title`, {
        candidates: found.map((p) => ({ id: p.id, title: p.title, author: p.authorName })),
      });
  }
  return null;
}

function visiblePosts(ctx: Ctx, caller: Caller): Promise<Post[]> {
  return ctx.db.select().from(posts).where(owned.visible(caller)).orderBy(desc(posts.created), desc(posts.id)).all();
}

/**
 * Public posts are in the shared full-text index (owner null, kind "blog"),
 * where readers across services (the archive) find them without reading the
 * blog's table; a private post never is.
 */
async function indexed(ctx: Ctx, p: Post) {
  if (p.private) await ctx.index.remove("blog", p.id);
  else await ctx.index.put({ kind: "blog", ref: p.id, owner: null, title: p.title, body: p.content });
}

async function announce(ctx: Ctx, p: Post) {
  await ctx.emit({ type: "post.published", text: `${p.authorName} published "${p.title}"`, url: urlOf(ctx, p.id), data: { ref: p.id } });
}

export default definePlugin({
  name: "blog",
  description: "Blog posts in markdown with public pages and an Atom feed; private posts stay with their author.",
  needs: ["db", "emit", "ai", "writes", "index"],
  screens: { blog: { title: "Blog", href: "/blog", order: 70 }, posts: { title: "Posts", module: "screens/posts.ts", order: 65, reads: [{ method: "list", args: { limit: 1000, mine: true } }] } },
  config: {
    HEARTH_BLOG_TITLE: { default: "Blog", description: "Title of the public blog pages and the Atom feed." },
  },
  // Posts written before public ones were indexed are indexed once, oldest first, so the index's order is theirs.
  async start(ctx) {
    const done = await ctx.index.indexed("blog");
    const unindexed = (
      await ctx.db.select({ id: posts.id, title: posts.title, content: posts.content }).from(posts).where(eq(posts.private, false)).orderBy(posts.created, posts.id).all()
    ).filter((p) => !done.has(p.id));
    if (unindexed.length) await ctx.writes(() => ctx.index.putMany(unindexed.map((p) => ({ kind: "blog", ref: p.id, owner: null, title: p.title, body: p.content }))));
  },
  methods: {
    create: write({
      description:
        "Publishes a post to the caller's blog. `content` at least 50 characters; `title`, when omitted, is written by the instance's model if it has one, else taken from the first sentence; `tags` comma-separated; `private` keeps it to the author.",
      args: T.Object({
        content: Content,
        title: T.Optional(Title),
        tags: T.Optional(Tags),
        private: T.Optional(T.Boolean({ description: "True keeps the post to its author; default false." })),
      }),
      access: "account",
      outbound: true,
      // A title asked of the model can take seconds; the post is written in its own short transaction once it has one.
      transaction: false,
      async run(args, ctx) {
        const title = args.title?.trim() || (await titleByModel(ctx.ai, args.content)) || titleFrom(args.content);
        return ctx.writes(async () => {
          const now = ctx.clock.now().getTime();
          const post = await ctx.db
            .insert(posts)
            .values({
              id: newId(),
              author: owned.owner(ctx.caller),
              authorName: ctx.account.username,
              title,
              content: args.content,
              tags: normaliseTags(args.tags ?? ""),
              private: args.private ?? false,
              created: now,
              updated: now,
            })
            .returning()
            .get();
          if (!post.private) await announce(ctx, post);
          await indexed(ctx, post);
          return full(ctx, post);
        });
      },
    }),
    list: read({
      description: "Recent posts, newest first: titles, snippets and ids. Private posts appear only to their author.",
      args: T.Object({
        limit: T.Integer({ minimum: 1, maximum: 1000, default: 100, description: "How many posts (default 100, max 1000)." }),
        // Beyond the spec (README, "Additions to the spec"): the person's own posts, for writing them.
        mine: T.Optional(T.Boolean({ description: "Only the caller's own posts, private ones included (needs an account)." })),
      }),
      access: "public",
      untrusted: true,
      async run({ limit, mine }, ctx) {
        const list = await ctx.db
          .select()
          .from(posts)
          .where(mine ? owned.mine(ctx.caller) : owned.visible(ctx.caller))
          .orderBy(desc(posts.created), desc(posts.id))
          .limit(limit)
          .all();
        return list.map((p) => summary(ctx, p));
      },
    }),
    read: read({
      description: "One post in full, by `id` or by enough of its title (case-insensitive; an ambiguous title is refused with the candidates).",
      args: T.Object({ id: T.Optional(Id), title: T.Optional(TitleQuery) }),
      access: "public",
      untrusted: true,
      async run({ id, title }, ctx) {
        if (id !== undefined) return full(ctx, owned.see(await ctx.db.select().from(posts).where(eq(posts.id, id)).get(), ctx.caller, id));
        if (title === undefined) throw invalid("id", "give the post's id, or enough of its title");
        const post = byTitle(await visiblePosts(ctx, ctx.caller), title);
        if (!post) throw notFound(`no post matches the title ${JSON.stringify(title)}`);
        return full(ctx, post);
      },
    }),
    update: write({
      description: "Edits one of the caller's own posts. Omitted fields keep their value.",
      args: T.Object({
        id: Id,
        title: T.Optional(Title),
        content: T.Optional(Content),
        tags: T.Optional(Tags),
      }),
      access: "account",
      outbound: true,
      destructive: true,
      async run(args, ctx) {
        const before = owned.own(await ctx.db.select().from(posts).where(eq(posts.id, args.id)).get(), ctx.caller, args.id);
        // Only the fields given are written: two edits at once each keep theirs.
        const title = args.title?.trim();
        const after = await ctx.db
          .update(posts)
          .set({
            ...(title && { title }),
            ...(args.content !== undefined && { content: args.content }),
            ...(args.tags !== undefined && { tags: normaliseTags(args.tags) }),
            updated: ctx.clock.now().getTime(),
          })
          .where(eq(posts.id, before.id))
          .returning()
          .get();
        if (!after) throw notFound(`no post ${JSON.stringify(args.id)}`);
        await indexed(ctx, after);
        return full(ctx, after);
      },
    }),
    delete: write({
      description:
        "Deletes one of the caller's own posts by `id` or `title`. Refuses posts by anyone else (403) and a title that matches more than one post (409). Irreversible.",
      args: T.Object({ id: T.Optional(Id), title: T.Optional(TitleQuery) }),
      access: "account",
      destructive: true,
      async run({ id, title }, ctx) {
        let post: Post;
        if (id !== undefined) post = owned.own(await ctx.db.select().from(posts).where(eq(posts.id, id)).get(), ctx.caller, id);
        else if (title !== undefined) {
          const mine = byTitle(await ctx.db.select().from(posts).where(owned.mine(ctx.caller)).all(), title);
          if (!mine) {
            if (byTitle(await visiblePosts(ctx, ctx.caller), title)) throw forbidden(`the post titled like ${JSON.stringify(title)} belongs to someone else; only its author may delete it`);
            throw notFound(`no post of yours matches the title ${JSON.stringify(title)}`);
          }
          post = mine;
        } else throw invalid("id", "give the id or the title of the post to delete");
        // Of two deletes at once, the second finds nothing, as it would after the first.
        const gone = await ctx.db.delete(posts).where(eq(posts.id, post.id)).returning({ id: posts.id }).all();
        if (gone.length === 0) throw notFound(`no post ${JSON.stringify(post.id)}`);
        await ctx.index.remove("blog", post.id);
        if (!post.private) await retract(ctx.db, "blog", post.id);
        return { deleted: post.id, title: post.title };
      },
    }),
  },
  routes: [
    {
      method: "GET",
      path: "/blog",
      async run(_req, ctx) {
        const list = await ctx.db.select().from(posts).where(eq(posts.private, false)).orderBy(desc(posts.created), desc(posts.id)).limit(100).all();
        return indexPage(ctx.baseUrl, ctx.config.HEARTH_BLOG_TITLE, list.map((p) => summary(ctx, p)), ctx.caller.account ?? null);
      },
    },
    {
      method: "GET",
      path: "/blog/feed.xml",
      async run(_req, ctx) {
        const list = await ctx.db.select().from(posts).where(eq(posts.private, false)).orderBy(desc(posts.created), desc(posts.id)).limit(50).all();
        return feedResponse(ctx.baseUrl, ctx.config.HEARTH_BLOG_TITLE, list);
      },
    },
    {
      method: "GET",
      path: "/blog/:id",
      async run(_req, ctx) {
        const post = await ctx.db.select().from(posts).where(eq(posts.id, ctx.params.id)).get();
        return postPage(ctx.baseUrl, ctx.config.HEARTH_BLOG_TITLE, post && owned.canSee(post, ctx.caller) ? post : null, ctx.caller.account ?? null);
      },
    },
  ],
});
