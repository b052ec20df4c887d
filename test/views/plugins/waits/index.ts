// A drop-in whose one method answers when the test says so: a screen's parts
// each wait on it, so the test decides what is loading at once and what
// arrives first.
import { Type as T } from "@sinclair/typebox";
import { definePlugin, read } from "../../../../core/plugin.ts";

type Gates = Map<string, { open: () => void; opened: Promise<void> }>;
const g = globalThis as { __waitsGates?: Gates };
export const gates: Gates = (g.__waitsGates ??= new Map());

export function gate(name: string) {
  let g = gates.get(name);
  if (!g) {
    let open = () => {};
    const opened = new Promise<void>((r) => (open = r));
    g = { open, opened };
    gates.set(name, g);
  }
  return g;
}

export default definePlugin({
  name: "waits",
  description: "Answers once the test opens the named gate.",
  needs: [],
  screens: { waits: { title: "Waits", module: "screens/waits.ts" } },
  methods: {
    wait: read({
      description: "Waits for the named gate, then answers with its name.",
      args: T.Object({ name: T.String({ minLength: 1, maxLength: 20 }) }),
      access: "account",
      async run({ name }) {
        await gate(name).opened;
        return { name };
      },
    }),
  },
});
