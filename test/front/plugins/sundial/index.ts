// A drop-in plugin for the front-door tests: a priced public read.
import { Type as T } from "@sinclair/typebox";
import { definePlugin, read } from "../../../../core/plugin.ts";

export default definePlugin({
  name: "sundial",
  description: "The hour by the sun.",
  methods: {
    hour: read({
      description: "The solar hour at a longitude.",
      access: "public",
      price: 2,
      args: T.Object({ lon: T.Number({ minimum: -180, maximum: 180, description: "Degrees east." }), marks: T.Optional(T.Array(T.String())) }),
      run: (a) => ({ lon: a.lon }),
    }),
  },
});
