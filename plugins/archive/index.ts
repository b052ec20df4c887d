import { Type as T } from "@sinclair/typebox";
import { invalid, definePlugin, read, type Ctx } from "hearth";
import { counts, KINDS, recentIndexed, searchIndexed, type Kind } from "./sources.ts";

const Limit = T.Optional(T.Integer({ minimum: 1, maximum: 100, description: "Entries, default 20, max 100." }));
const KindArg = T.Optional(T.String({ description: `One of ${KINDS.join(", ")}.` }));

function kindOf(raw: string | undefined): Kind | undefined {
  if (raw === undefined) return undefined;
  const k = raw.trim().toLowerCase();
  if (!(KINDS as readonly string[]).includes(k)) throw invalid("kind", `kind must be one of ${KINDS.join(", ")} (got ${JSON.stringify(raw)})`);
  return k as Kind;
}

const recent = (ctx: Ctx, kind: Kind, limit: number) => recentIndexed(ctx, kind, limit);

export default definePlugin({
  name: "archive",
  description: "The reader over everything the instance has collected and published: news, videos, market snapshots, public blog posts and prayer reflections. Private records never appear.",
  needs: ["db", "index"],
  methods: {
    list: read({
      description:
        "With `kind` (news, video, market, blog, prayer): the most recent entries of it. Without: a summary of which kinds are archived, how many of each, and the newest of each. `limit` default 20, max 100.",
      args: T.Object({ kind: KindArg, limit: Limit }),
      access: "public",
      untrusted: true,
      async run(args, ctx) {
        const kind = kindOf(args.kind);
        const limit = args.limit ?? 20;
        if (kind) {
          const entries = await recent(ctx, kind, limit);
          return { kind, entries, count: entries.length };
        }
        const n = await counts(ctx);
        const kinds = await Promise.all(KINDS.map(async (k) => ({ kind: k, count: n[k], newest: n[k] ? ((await recent(ctx, k, 1))[0]?.title ?? null) : null })));
        return { kinds, total: kinds.reduce((s, k) => s + k.count, 0) };
      },
    }),
    search: read({
      description:
        "Searches everything collected across news, videos, market snapshots, public blog posts and prayer reflections, best matches first; `kind` narrows to one. `limit` default 20, max 100.",
      args: T.Object({ query: T.String({ minLength: 1, maxLength: 200, description: "Words to find." }), kind: KindArg, limit: Limit }),
      access: "public",
      untrusted: true,
      async run(args, ctx) {
        if (!args.query.trim()) throw invalid("query", "query must not be blank");
        const kind = kindOf(args.kind);
        const limit = args.limit ?? 20;
        const entries = await searchIndexed(ctx, args.query, kind ? [kind] : [...KINDS], limit);
        return { query: args.query, ...(kind ? { kind } : {}), entries, count: entries.length };
      },
    }),
  },
});
