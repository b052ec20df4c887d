import { Type as T } from "@sinclair/typebox";
import { and, desc, eq, sql } from "drizzle-orm";
import { invalid, notFound, tooLarge, fileName, ownership, pageAnswer, pageArgs, pageOf, definePlugin, read, write, type Ctx } from "hearth";
import { NAME_PATTERN, TYPE_PATTERN, toBytes, typeFor } from "./content.ts";
import { files, props } from "./schema.ts";
import { serveFile } from "./serve.ts";
import { DAV_ROOT, serveDav } from "./dav.ts";
import { received } from "./incoming.ts";

type File = typeof files.$inferSelect;

// Files are never public as records; a share link opens one file, not the record.
const owned = ownership<File>({ what: "file", ownerColumn: files.owner, ownerOf: (f) => f.owner });

const DEFAULT_MAX = 25 * 1024 * 1024;
const random = (n: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(n))).toString("base64url");
const maxBytes = (config: Readonly<Record<string, string>>) => {
  const n = Number(config.HEARTH_FILES_MAX_BYTES);
  return Number.isFinite(n) && n > 0 ? n : DEFAULT_MAX;
};

const Id = T.String({ minLength: 1, maxLength: 64, description: "The file's id, as put returned it." });

const meta = (ctx: Ctx, f: File) => ({
  id: f.id,
  name: f.name,
  // The folder it is in on the drive (/files/dav/): "" for the top, "Photos/2025" below.
  folder: f.folder,
  type: f.type,
  size: f.size,
  encoding: f.encoding,
  url: `${ctx.baseUrl}/files/${f.id}`,
  share_url: f.share ? `${ctx.baseUrl}/files/shared/${f.share}` : null,
  created: new Date(f.created).toISOString(),
});

async function find(ctx: Ctx, id: string): Promise<File> {
  return owned.own(await ctx.db.select().from(files).where(eq(files.id, id)).get(), ctx.caller, id);
}

/** `{"shared": false}` withdraws the link; anything else (or no body) makes a new one. */
async function sharedWanted(req: Request): Promise<boolean> {
  const text = (await req.text()).trim();
  if (!text) return true;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw invalid("body", 'the body must be JSON such as {"shared": false}');
  }
  const shared = (body as { shared?: unknown } | null)?.shared;
  if (shared === undefined) return true;
  if (typeof shared !== "boolean") throw invalid("shared", "shared must be true or false");
  return shared;
}

export default definePlugin({
  name: "files",
  description: "Files the caller stores: text or binary, each with a URL only its owner can open unless shared by link. File managers mount them as a WebDAV drive at /files/dav/.",
  needs: ["db", "blobs", "call", "writes", "lock"],
  screens: { files: { title: "Files", module: "screens/files.ts", order: 40, reads: [{ method: "list", args: { limit: 1000 } }] } },
  config: {
    HEARTH_FILES_MAX_BYTES: {
      default: String(DEFAULT_MAX),
      description: "Largest file files/put accepts, in bytes (413 past it).",
    },
  },
  // Each file as it is, in its folder, under its own name.
  exports: async (ctx) => {
    const out = [];
    for (const f of await ctx.db.select().from(files).where(owned.mine(ctx.caller)).orderBy(files.created).all())
      out.push({ path: [...f.folder.split("/").filter(Boolean).map((p) => fileName(p)), fileName(f.name)].join("/"), data: () => ctx.blobs.read(f.hash) });
    return out;
  },
  methods: {
    put: write({
      // Base64 adds a third: the body may be that much larger than the file, plus room for the other fields.
      bodyLimit: (config) => Math.ceil((maxBytes(config) * 4) / 3) + 64 * 1024,
      description:
        'Stores a file and returns its URL, which opens it for its owner only (POST <url>/share makes a link for anyone; {"shared": false} withdraws it). `content` is text, or base64 when `encoding` is "base64"; `type` is guessed from the name when omitted. Size capped by HEARTH_FILES_MAX_BYTES (default 25 MiB).',
      args: T.Object({
        name: T.String({ minLength: 1, maxLength: 255, pattern: NAME_PATTERN, description: "The file name, with its extension; no slashes." }),
        content: T.String({ description: "The content: plain text, or base64 when encoding is base64." }),
        encoding: T.Optional(T.Literal("base64", { description: '"base64" for binary content; omitted for text.' })),
        type: T.Optional(T.String({ maxLength: 200, pattern: TYPE_PATTERN, description: "Content type, e.g. image/png; guessed from the name when omitted." })),
      }),
      access: "account",
      async run(args, ctx) {
        if (/^\.+$/.test(args.name.trim())) throw invalid("name", `name must be a file name, not ${JSON.stringify(args.name)}`);
        // The drive's upload arrives received already (incoming.ts); the API's in `content`.
        const got = args.content === "" ? received() : undefined;
        if (got && got.size > maxBytes(ctx.config)) throw tooLarge(`the file is ${got.size} bytes; the limit is ${maxBytes(ctx.config)} bytes (HEARTH_FILES_MAX_BYTES)`, "content");
        const bytes = got ?? toBytes(args.content, args.encoding, maxBytes(ctx.config));
        const encoding = args.encoding === "base64" ? "base64" : "text";
        const hash = await ctx.blobs.put(bytes);
        const row = await ctx.db
          .insert(files)
          .values({
            id: random(12),
            owner: owned.owner(ctx.caller),
            name: args.name,
            type: typeFor(args.name, args.type, encoding),
            size: got ? got.size : (bytes as Uint8Array).byteLength,
            hash,
            encoding,
            created: ctx.clock.now().getTime(),
          })
          .returning()
          .get();
        return meta(ctx, row);
      },
    }),
    list: read({
      description: "The caller's files, newest first, without their content (at most 1,000; `limit` and `cursor` read them in pages).",
      args: T.Object({ ...pageArgs }),
      access: "account",
      async run(args, ctx) {
        // Newest first, ties by id: the order of the files_owner_created index, so a page is read from it in order.
        const page = pageOf(args, ["number", "string"]);
        const mine = owned.mine(ctx.caller);
        const where = page.after ? and(mine, sql`(${files.created}, ${files.id}) < (${page.after[0]}, ${page.after[1]})`) : mine;
        const rows = await ctx.db.select().from(files).where(where).orderBy(desc(files.created), desc(files.id)).limit(page.read).all();
        return pageAnswer(rows, page, (f) => [f.created, f.id], (rows) => rows.map((f) => meta(ctx, f)));
      },
    }),
    get: read({
      description: "Reads a stored file back: its metadata and content (text as stored, base64 for a file stored as base64).",
      args: T.Object({ id: Id }),
      access: "account",
      async run({ id }, ctx) {
        const f = await find(ctx, id);
        if (!(await ctx.blobs.exists(f.hash))) throw notFound(`the content of file ${JSON.stringify(id)} is missing from the store`);
        const bytes = await ctx.blobs.read(f.hash);
        const content = f.encoding === "base64" ? Buffer.from(bytes).toString("base64") : new TextDecoder().decode(bytes);
        return { ...meta(ctx, f), content };
      },
    }),
    delete: write({
      description: "Deletes a file the caller owns; its bytes go when nothing else here (another file, a message) holds the same content. Irreversible.",
      args: T.Object({ id: Id }),
      access: "account",
      destructive: true,
      async run({ id }, ctx) {
        const f = await find(ctx, id);
        // Of two deletes at once, the second finds nothing, as it would after the first, and releases nothing.
        const gone = await ctx.db.delete(files).where(eq(files.id, f.id)).returning({ id: files.id }).all();
        if (gone.length === 0) throw notFound(`no file ${JSON.stringify(id)}`);
        await ctx.blobs.release(f.hash);
        // The drive's properties set on it go with the last file of its name in its folder, so a new file there starts without them.
        const same = and(eq(files.owner, f.owner), eq(files.folder, f.folder), eq(files.name, f.name));
        if (!(await ctx.db.select({ id: files.id }).from(files).where(same).get()))
          await ctx.db.delete(props).where(and(eq(props.owner, f.owner), eq(props.path, f.folder ? `${f.folder}/${f.name}` : f.name))).run();
        return { deleted: f.id, name: f.name };
      },
    }),
  },
  routes: [
    // WebDAV, so file managers and phones mount the files as a drive (README: "Sync your phone").
    // An upload (PUT) is streamed into the blob store's temp space as it arrives (dav.ts: receive).
    { method: "*", path: DAV_ROOT, run: serveDav, streams: ["PUT"] },
    { method: "*", path: `${DAV_ROOT}/*`, run: serveDav, streams: ["PUT"] },
    {
      // Sharing is a page action rather than an API method, so the API stays exactly the published one.
      method: "POST",
      path: "/files/:id/share",
      async run(req, ctx) {
        const f = await find(ctx, ctx.params.id);
        const shared = await sharedWanted(req);
        const row = await ctx.db
          .update(files)
          .set({ share: shared ? random(24) : null })
          .where(eq(files.id, f.id))
          .returning()
          .get();
        if (!row) throw notFound(`no file ${JSON.stringify(f.id)}`);
        return Response.json({ result: meta(ctx, row) });
      },
    },
    {
      method: "GET",
      path: "/files/shared/:token",
      async run(req, ctx) {
        const f = /^[\w-]{32}$/.test(ctx.params.token) ? await ctx.db.select().from(files).where(eq(files.share, ctx.params.token)).get() : undefined;
        if (!f) return new Response("no file is shared at this address", { status: 404, headers: { "content-type": "text/plain;charset=utf-8" } });
        return serveFile(req, f, ctx.blobs);
      },
    },
    {
      method: "GET",
      path: "/files/:id",
      async run(req, ctx) {
        const f = await ctx.db.select().from(files).where(eq(files.id, ctx.params.id)).get();
        // Someone else's file answers exactly as a missing one does.
        if (!f || !ctx.caller.account || f.owner !== ctx.caller.account.id)
          return new Response("no file of yours at this address", { status: 404, headers: { "content-type": "text/plain;charset=utf-8" } });
        return serveFile(req, f, ctx.blobs);
      },
    },
  ],
});
