import { Type as T } from "@sinclair/typebox";
import { desc } from "drizzle-orm";
import { definePlugin, read, type ActivityRow as Row } from "hearth";

function parseData(raw: string | null): Record<string, unknown> | null {
  if (!raw) return null;
  try {
    const v = JSON.parse(raw);
    return v && typeof v === "object" && !Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}

const shape = (e: Row) => ({
  id: e.id,
  at: new Date(e.at).toISOString(),
  service: e.service,
  type: e.type,
  text: e.text,
  url: e.url,
  data: parseData(e.data),
});

export default definePlugin({
  name: "stream",
  description: "What has happened on the instance recently: public facts that services announce (a post published, a room started, ...).",
  needs: ["db", "activity"],
  methods: {
    list: read({
      description: "Recent instance activity, newest first. `limit` default 20, max 100.",
      args: T.Object({
        limit: T.Integer({ minimum: 1, maximum: 100, default: 20, description: "How many entries (default 20, max 100)." }),
      }),
      access: "public",
      untrusted: true,
      async run({ limit }, ctx) {
        const activity = ctx.activity;
        return (await ctx.db.select().from(activity).orderBy(desc(activity.at), desc(activity.id)).limit(limit).all()).map(shape);
      },
    }),
  },
});
