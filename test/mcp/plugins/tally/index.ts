// A drop-in plugin with priced methods: its tools appear over MCP with no
// edit anywhere, and its charges must match over both routes.
import { definePlugin, read, write, T } from "hearth";

export default definePlugin({
  name: "tally",
  description: "Priced methods for the MCP parity tests.",
  methods: {
    echo: read({
      description: "Says the text back; costs 2 credits.",
      args: T.Object({ text: T.String({ minLength: 1, maxLength: 100 }) }),
      access: "public",
      price: 2,
      run: ({ text }) => ({ said: text }),
    }),
    spend: write({
      description: "Costs as many credits as asked (1 to 5).",
      args: T.Object({ credits: T.Integer({ minimum: 1, maximum: 5 }), note: T.Optional(T.String()) }),
      access: "account",
      price: ({ credits }) => credits,
      run: ({ credits, note }) => ({ spent: credits, note: note ?? null }),
    }),
  },
});
