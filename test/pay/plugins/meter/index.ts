// A drop-in plugin for the payment tests: priced methods whose runs can be
// counted, one that fails, one priced by its arguments, and one for accounts.
import { definePlugin, read, T, write } from "hearth";
import { defineProvider } from "../../../../core/upstream/index.ts";

// Tests point METER_TEST_URL at a loopback fixture.
defineProvider({ name: "METER_TEST", label: "Meter test provider", url: "http://127.0.0.1:9" });

/** Runs per method, so tests can tell that a refused call never ran. */
export const runs: Record<string, number> = {};
const ran = (name: string) => (runs[name] = (runs[name] ?? 0) + 1);

export default definePlugin({
  name: "meter",
  description: "Priced methods for testing metering.",
  needs: ["emit", "http", "call", "writes"],
  providers: ["METER_TEST"],
  methods: {
    echo: read({
      description: "Echoes its text; costs 3 credits.",
      args: T.Object({ text: T.String() }),
      access: "public",
      price: 3,
      run: ({ text }) => ({ text, runs: ran("echo") }),
    }),
    record: write({
      description: "Writes an activity line; costs 2 credits.",
      args: T.Object({ text: T.String() }),
      access: "public",
      price: 2,
      run: ({ text }, ctx) => {
        ctx.emit({ type: "meter.recorded", text });
        return { recorded: text, runs: ran("record") };
      },
    }),
    aside: write({
      description: "Makes a priced call of its own, then records an activity line in a short write of its own; costs 2 credits.",
      args: T.Object({ text: T.String({ minLength: 1 }) }),
      access: "public",
      price: 2,
      transaction: false,
      run: async ({ text }, ctx) => {
        const counted = (await ctx.call("meter", "segments", { text })) as { length: number };
        await ctx.writes(() => ctx.emit({ type: "meter.aside", text }));
        return { recorded: text, length: counted.length, runs: ran("aside") };
      },
    }),
    fail: read({
      description: "Always fails after running; costs 2 credits.",
      args: T.Object({}),
      access: "public",
      price: 2,
      run: () => {
        ran("fail");
        throw new Error("boom");
      },
    }),
    segments: read({
      description: "Costs a credit per 160 characters.",
      args: T.Object({ text: T.String({ minLength: 1 }) }),
      access: "public",
      price: ({ text }) => Math.ceil(text.length / 160),
      run: ({ text }) => ({ length: text.length }),
    }),
    mine: read({
      description: "For accounts only; costs 1 credit.",
      args: T.Object({}),
      access: "account",
      price: 1,
      run: (_a, ctx) => ({ user: ctx.account.username }),
    }),
    lookup: read({
      description: "Reads a value from a provider, cached for an hour; costs 2 credits unless the cache answered.",
      args: T.Object({ key: T.String() }),
      access: "public",
      price: 2,
      run: async ({ key }, ctx) => {
        const f = await ctx.http.get("METER_TEST", "/value", { query: { key }, ttl: 3600 });
        return { value: f.data, cached: f.cached };
      },
    }),
    free: read({
      description: "Costs nothing.",
      args: T.Object({}),
      access: "public",
      run: () => ({ ok: true }),
    }),
  },
});
