// A drop-in plugin that exercises the upstream layer directly against a
// loopback provider, so its rules are tested apart from any one service.
import { Type as T } from "@sinclair/typebox";
import { defineProvider, freeWhenHeld } from "../../../../core/upstream/index.ts";
import { definePlugin, read } from "../../../../core/plugin.ts";

defineProvider({ name: "PROBE", label: "Probe", url: "http://127.0.0.1:9", concurrency: 1 });
defineProvider({ name: "PROBE_DEAD", label: "Dead probe", url: "http://127.0.0.1:9", concurrency: 1 });
defineProvider({ name: "PROBE_LIMITED", label: "Limited probe", url: "http://127.0.0.1:9", concurrency: 1, rate: { count: 1, perMs: 60_000 } });
// The same server, given a short timeout of its own, so only it times out on a loaded machine.
defineProvider({ name: "PROBE_IMPATIENT", label: "Impatient probe", url: "http://127.0.0.1:9", concurrency: 1 });

const shape = (body: any) => {
  if (typeof body?.n !== "number") throw new Error("no n");
  return { n: body.n as number };
};

export default definePlugin({
  name: "probe",
  description: "Reaches the loopback probe provider.",
  needs: ["http", "index"],
  providers: ["PROBE", "PROBE_DEAD", "PROBE_LIMITED", "PROBE_IMPATIENT"],
  methods: {
    post: read({
      description: "One POST to /thing, uncached, as a send to a provider is.",
      args: T.Object({ id: T.String() }),
      access: "public",
      async run({ id }, ctx) {
        const f = await ctx.http.get("PROBE", "/thing", { method: "POST", body: JSON.stringify({ id }), contentType: "application/json", ttl: 0, parse: shape });
        return f.data;
      },
    }),
    archive: read({
      description: "A read of /thing whose fresh copy is also indexed; an id starting with boom fails after indexing it.",
      args: T.Object({ id: T.String() }),
      access: "public",
      async run({ id }, ctx) {
        const f = await ctx.http.get("PROBE", "/thing", {
          query: { id },
          ttl: 60,
          parse: shape,
          onFresh: async (d) => {
            await ctx.index.put({ kind: "thing", ref: id, owner: null, title: id, body: `n ${d.n}` });
            if (id.startsWith("boom")) throw new Error("the archive refused it");
          },
        });
        return f.data;
      },
    }),
    get: read({
      description: "One cached read of /thing.",
      args: T.Object({ id: T.String(), provider: T.Optional(T.String()) }),
      access: "public",
      price: (args, ctx) => freeWhenHeld((ctx as any).http.peek(args.provider ?? "PROBE", "/thing", { query: { id: args.id } }), 1),
      async run({ id, provider }, ctx) {
        const f = await ctx.http.get(provider ?? "PROBE", "/thing", { query: { id }, ttl: 60, revalidate: 60, keep: 3600, parse: shape });
        return { ...f.data, ...f.about };
      },
    }),
  },
});
