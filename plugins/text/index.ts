import { Type as T } from "@sinclair/typebox";
import { definePlugin, read } from "hearth";
import { capped, TEXT_CAP } from "./ask.ts";
import { classify, parseLabels } from "./classify.ts";
import { extract } from "./extract.ts";
import { summarise } from "./summarise.ts";
import { translate } from "./translate.ts";

const Text = T.String({ minLength: 1, description: `The text, at most ${TEXT_CAP.toLocaleString("en")} characters (413 past it).` });
const NEEDS_MODEL = "Needs the instance's AI provider (501 naming the settings without one).";

export default definePlugin({
  name: "text",
  description: "Classify, extract, summarise and translate text with the instance's model.",
  needs: ["ai"],
  methods: {
    classify: read({
      description: `Sorts text into exactly one of the given labels, with a confidence from 0 to 1. \`labels\` comma-separated, at least 2 (duplicates dropped). An answer outside the labels is asked again once, then 502. ${NEEDS_MODEL}`,
      args: T.Object({
        text: Text,
        labels: T.String({ minLength: 1, maxLength: 5000, description: 'Comma-separated labels, at least 2: "spam, not spam".' }),
      }),
      access: "public",
      price: 1,
      openWorld: true,
      run: (a, ctx) => classify(ctx, capped(a.text), parseLabels(a.labels)),
    }),
    extract: read({
      description: `Returns JSON only, matching \`schema\`: a JSON Schema (the answer is validated and asked again once with the errors; still invalid: 502 with them) or a plain description of what to pull out. Uses AI_MODEL_EXTRACT when set. ${NEEDS_MODEL}`,
      args: T.Object({
        text: Text,
        schema: T.String({ minLength: 1, maxLength: 20_000, description: 'A JSON Schema, or a plain description ("the people named and their roles"). Its patterns run in linear time: no lookaround or backreferences.' }),
      }),
      access: "public",
      price: 5,
      openWorld: true,
      run: (a, ctx) => extract(ctx, capped(a.text), a.schema),
    }),
    summarise: read({
      description: `Summary in a few sentences, or a list with \`style\` "bullets". \`lines\`: about how many sentences or bullets (default 3 sentences, 5 bullets). ${NEEDS_MODEL}`,
      args: T.Object({
        text: Text,
        style: T.Optional(T.String({ maxLength: 40, description: '"bullets" for a list; anything else (or nothing) gives prose.' })),
        lines: T.Optional(T.Integer({ minimum: 1, maximum: 50, description: "About how many sentences or bullets (1-50)." })),
      }),
      access: "public",
      price: 2,
      openWorld: true,
      run(a, ctx) {
        const bullets = a.style?.trim().toLowerCase() === "bullets";
        return summarise(ctx, capped(a.text), bullets, a.lines ?? (bullets ? 5 : 3));
      },
    }),
    translate: read({
      description: `Translation into \`to\` (a language name or code: "French", "fr", "pt-BR"), keeping markdown, line breaks and code blocks. ${NEEDS_MODEL}`,
      args: T.Object({
        text: Text,
        to: T.String({ minLength: 1, maxLength: 64, description: 'The language to translate into: a name ("Japanese") or a code ("ja", "pt-BR").' }),
      }),
      access: "public",
      price: 3,
      openWorld: true,
      run: (a, ctx) => translate(ctx, capped(a.text), a.to),
    }),
  },
});
