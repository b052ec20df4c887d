import { Type as T } from "@sinclair/typebox";
import { definePlugin, read, write, type Ctx, freeWhenHeld } from "hearth";
import { generate } from "./generate.ts";
import { isCached, MAX_LIMIT, search } from "./openverse.ts";

const GENERATE_PRICE = 15;
const SEARCH_PRICE = 1;

export default definePlugin({
  name: "images",
  description: "Images: drawn by the instance's image model and kept among the caller's files, or found in Openverse's library of openly licensed pictures.",
  needs: ["ai", "http", "call"],
  // A made image is kept as a file.
  requires: ["files"],
  providers: ["OPENVERSE"],
  methods: {
    generate: write({
      description:
        "Generates an image from `prompt` with the instance's image model, stores it as one of the caller's files and returns its URL (it opens for the caller; POST <url>/share makes a link anyone can open). Needs AI_IMAGE_MODEL (501 naming it without one) and the files scope.",
      args: T.Object({
        prompt: T.String({ minLength: 1, maxLength: 4000, description: "What to draw." }),
      }),
      access: "account",
      price: GENERATE_PRICE,
      openWorld: true,
      // The model may take a minute; the file is written in its own transaction once the picture exists.
      transaction: false,
      // The picture is paid to the model's provider whatever happens next.
      irreversible: true,
      run: (a, ctx) => generate(ctx, a.prompt.trim() || a.prompt),
    }),
    search: read({
      description: `Searches Openverse's public library of openly licensed images; returns image URLs with each one's licence, creator and the attribution line to show with it. \`limit\` default and at most ${MAX_LIMIT}. Cheaper than generating; a search answered from the day's cache is free.`,
      args: T.Object({
        query: T.String({ minLength: 1, maxLength: 200, description: 'What to look for: "red fox", "lighthouse at night".' }),
        limit: T.Optional(T.Integer({ minimum: 1, maximum: MAX_LIMIT, default: MAX_LIMIT, description: `How many images (1-${MAX_LIMIT}, default ${MAX_LIMIT}).` })),
      }),
      access: "public",
      untrusted: true,
      openWorld: true,
      price: (a, ctx) => freeWhenHeld(isCached(ctx as Ctx, a.query, a.limit ?? MAX_LIMIT), SEARCH_PRICE),
      run: (a, ctx) => search(ctx, a.query, a.limit ?? MAX_LIMIT),
    }),
  },
});
