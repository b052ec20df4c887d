// A drop-in plugin for the multi-instance test: a priced method whose every
// run costs the instance a provider request (to a loopback fixture that
// counts them), as a paid provider's call would.
import { definePlugin, read, T } from "hearth";
import { defineProvider } from "../../../../core/upstream/index.ts";

// The test points PAID_TEST_URL at its fixture.
defineProvider({ name: "PAID_TEST", label: "Paid test provider", url: "http://127.0.0.1:9" });

export default definePlugin({
  name: "paid",
  description: "A priced method for the multi-instance test.",
  needs: ["http"],
  providers: ["PAID_TEST"],
  methods: {
    work: read({
      description: "Asks the provider once; costs 1 credit.",
      args: T.Object({ n: T.Integer() }),
      access: "account",
      price: 1,
      run: async ({ n }, ctx) => {
        const f = await ctx.http.get("PAID_TEST", "/work", { query: { n: String(n) }, ttl: 1 });
        return { done: f.data };
      },
    }),
  },
});
