// A drop-in plugin for the model client's tests: it hands a chat request to
// ctx.ai as an agent loop would, and returns what came back, streamed pieces included.
import { definePlugin, read, T } from "hearth";

export default definePlugin({
  name: "aiprobe",
  description: "Test probe for the ai capability.",
  needs: ["ai"],
  methods: {
    chat: read({
      description: "Sends messages (and tools) to the model.",
      args: T.Object({
        messages: T.String(),
        tools: T.Optional(T.String()),
        tool_choice: T.Optional(T.String()),
        stream: T.Optional(T.Boolean()),
        task: T.Optional(T.String()),
        json: T.Optional(T.Boolean()),
      }),
      access: "public",
      async run(a: any, ctx: any) {
        const pieces: string[] = [];
        const answer = await ctx.ai.chat({
          messages: JSON.parse(a.messages),
          tools: a.tools ? JSON.parse(a.tools) : undefined,
          tool_choice: a.tool_choice ? (a.tool_choice.startsWith("{") ? JSON.parse(a.tool_choice) : a.tool_choice) : undefined,
          task: a.task,
          json: a.json,
          onText: a.stream ? (p: string) => pieces.push(p) : undefined,
        });
        return { ...answer, pieces, spent: ctx.ai.spent() };
      },
    }),
    provider: read({
      description: "Which provider and model are in use.",
      args: T.Object({}),
      access: "public",
      run: (_a: unknown, ctx: any) => ctx.ai.provider(),
    }),
    image: read({
      description: "Generates an image and says what came back (not the bytes).",
      args: T.Object({ prompt: T.String() }),
      access: "public",
      async run(a: any, ctx: any) {
        const img = await ctx.ai.image({ prompt: a.prompt });
        return { type: img.type, ext: img.ext, size: img.bytes.length, model: img.model, usage: img.usage, revised_prompt: img.revised_prompt ?? null };
      },
    }),
  },
});
