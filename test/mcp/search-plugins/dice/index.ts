// A drop-in plugin that search_tools must find by its own words, with no
// edit anywhere else.
import { definePlugin, read, T } from "hearth";

export default definePlugin({
  name: "dice",
  description: "Dice for board games and role-playing games.",
  methods: {
    roll: read({
      description: "Rolls dice, such as 2d6 or 1d20, and gives each die's face and the total.",
      args: T.Object({ dice: T.String({ pattern: "^[0-9]{1,2}d[0-9]{1,3}$" }) }),
      access: "public",
      run: ({ dice }) => {
        const [n, sides] = dice.split("d").map(Number);
        const faces = Array.from({ length: n }, () => 1 + Math.floor(Math.random() * sides));
        return { faces, total: faces.reduce((a, b) => a + b, 0) };
      },
    }),
  },
});
