// WebDAV (RFC 4918, classes 1 and 2) over the caller's files at /files/dav/,
// so Finder, Windows Explorer, GNOME Files and phone apps can mount them as a
// drive. Folders are a path stored with each file (plus a row per folder, so an
// empty one exists); the files/* API is unchanged and lists every file.
// Writes go through the same dispatch as the API (files/put, files/delete) so
// validation, size cap, scopes, limits and prices are the same; a rename, a
// move and a new folder, which no API method does, are done here in the same
// write transaction. Locks are exclusive write locks kept in the database.
import { and, eq, gt, or, sql, type Column } from "drizzle-orm";
import { child, descendants, errorXml, multistatus, NS, parseXml, prop } from "../../core/dav/xml.ts";
import { escape } from "../../core/http/pages/layout.ts";
import { BASIC_CHALLENGE } from "../../core/http/identify.ts";
import { HearthError, tooLarge } from "../../core/errors.ts";
import type { Ctx, Db } from "../../core/plugin.ts";
import { NAME_PATTERN } from "./content.ts";
import { files, folders, locks } from "./schema.ts";
import { serveFile } from "./serve.ts";

type File = typeof files.$inferSelect;
type Lock = typeof locks.$inferSelect;
type DavCtx = Ctx & { params: Record<string, string> };

export const DAV_ROOT = "/files/dav";
const MAX_DEPTH = 32;
const LOCK_SECONDS = 3600;
const NAME = new RegExp(NAME_PATTERN);
const ALLOW = "OPTIONS, GET, HEAD, PUT, DELETE, PROPFIND, PROPPATCH, MKCOL, COPY, MOVE, LOCK, UNLOCK";

/** A refusal in WebDAV's terms: a status and a plain sentence saying why. */
class DavError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}
const fail = (status: number, message: string) => new DavError(status, message);

function text(status: number, body: string, headers: Record<string, string> = {}): Response {
  return new Response(body, { status, headers: { "content-type": "text/plain;charset=utf-8", ...headers } });
}

/** An XML answer; a body that is a whole document already (the DAV layer's writers make those) is sent as it is. */
function xmlResponse(status: number, body: string, headers: Record<string, string> = {}): Response {
  const doc = body.startsWith("<?xml") ? body : `<?xml version="1.0" encoding="utf-8"?>\n${body}`;
  return new Response(doc, { status, headers: { "content-type": 'application/xml; charset="utf-8"', ...headers } });
}

/** The path's names after /files/dav, decoded; "." and ".." and names a file may not have are refused. */
export function parsePath(pathname: string): string[] {
  const rest = pathname.slice(DAV_ROOT.length);
  const out: string[] = [];
  for (const raw of rest.split("/")) {
    if (raw === "") continue;
    let name: string;
    try {
      name = decodeURIComponent(raw);
    } catch {
      throw fail(400, `the path segment ${JSON.stringify(raw)} is not valid percent-encoded UTF-8`);
    }
    if (name === "." || name === "..") throw fail(400, "the path may not contain . or .. segments");
    checkName(name);
    out.push(name);
  }
  if (out.length > MAX_DEPTH) throw fail(400, `folders may be at most ${MAX_DEPTH} deep`);
  return out;
}

function checkName(name: string) {
  if (name.length > 255 || !NAME.test(name) || /^\.+$/.test(name.trim())) throw fail(400, `${JSON.stringify(name)} is not a file name: no slashes or control characters, at most 255 characters`);
}

const join = (segments: string[]) => segments.join("/");
const hrefOf = (path: string, collection: boolean) => {
  const encoded = path ? path.split("/").map(encodeURIComponent).join("/") : "";
  return `${DAV_ROOT}/${encoded}${collection && encoded ? "/" : ""}`;
};
/** Whether `path` is `root` or inside it. */
const within = (path: string, root: string) => root === "" || path === root || path.startsWith(`${root}/`);
const inside = (column: Column, root: string) =>
  or(eq(column, root), sql`substr(${column}, 1, ${root.length + 1}) = ${`${root}/`}`)!;

type Target = { kind: "root"; path: "" } | { kind: "folder"; path: string; created: number } | { kind: "file"; path: string; file: File } | { kind: "none"; path: string };

async function resolve(db: Db, owner: string, segments: string[], wantsFolder = false): Promise<Target> {
  if (segments.length === 0) return { kind: "root", path: "" };
  const path = join(segments);
  const folder = join(segments.slice(0, -1));
  const name = segments[segments.length - 1];
  const file = wantsFolder
    ? undefined
    : await db
        .select()
        .from(files)
        .where(and(eq(files.owner, owner), eq(files.folder, folder), eq(files.name, name)))
        .orderBy(sql`${files.created} DESC`)
        .get();
  if (file) return { kind: "file", path, file };
  const dir = await db.select().from(folders).where(and(eq(folders.owner, owner), eq(folders.path, path))).get();
  if (dir) return { kind: "folder", path, created: dir.created };
  return { kind: "none", path };
}

async function parentExists(db: Db, owner: string, segments: string[]): Promise<boolean> {
  if (segments.length <= 1) return true;
  return !!(await db.select().from(folders).where(and(eq(folders.owner, owner), eq(folders.path, join(segments.slice(0, -1))))).get());
}

// ---- locks

function activeLocks(db: Db, owner: string, now: number): Promise<Lock[]> {
  return db.select().from(locks).where(and(eq(locks.owner, owner), gt(locks.expires, now))).all();
}

/** Locks that hold `path`: on it, on a folder above it taken with depth infinity, or (for a folder) on anything inside. */
function locksOn(all: Lock[], path: string, withInside: boolean): Lock[] {
  return all.filter((l) => l.path === path || (l.depth === "infinity" && within(path, l.path)) || (withInside && within(l.path, path)));
}

/** Lock tokens the request submits in its If header. */
const submitted = (req: Request) => new Set([...(req.headers.get("if") ?? "").matchAll(/<(opaquelocktoken:[^>]+)>/g)].map((m) => m[1]));

function assertUnlocked(req: Request, all: Lock[], path: string, withInside = false) {
  const held = locksOn(all, path, withInside);
  if (held.length === 0) return;
  const tokens = submitted(req);
  if (!held.every((l) => tokens.has(l.token))) throw fail(423, `${path || "the top folder"} is locked: send its lock token in the If header`);
}

function activeLockXml(l: Lock, now: number): string {
  return `<D:activelock><D:locktype><D:write/></D:locktype><D:lockscope><D:exclusive/></D:lockscope><D:depth>${l.depth === "0" ? "0" : "infinity"}</D:depth>${
    l.holder ? `<D:owner>${l.holder}</D:owner>` : ""
  }<D:timeout>Second-${Math.max(0, Math.round((l.expires - now) / 1000))}</D:timeout><D:locktoken><D:href>${escape(l.token)}</D:href></D:locktoken><D:lockroot><D:href>${escape(
    hrefOf(l.path, false),
  )}</D:href></D:lockroot></D:activelock>`;
}

const SUPPORTED_LOCK = "<D:supportedlock><D:lockentry><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry></D:supportedlock>";

// ---- PROPFIND

function propsXml(href: string, props: string): string {
  return `<D:response><D:href>${escape(href)}</D:href><D:propstat><D:prop>${props}</D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>`;
}

function fileProps(f: File, path: string, held: Lock[], now: number): string {
  return propsXml(
    hrefOf(path, false),
    `<D:displayname>${escape(f.name)}</D:displayname><D:resourcetype/><D:getcontentlength>${f.size}</D:getcontentlength><D:getcontenttype>${escape(f.type)}</D:getcontenttype><D:getetag>"${f.hash}"</D:getetag><D:getlastmodified>${new Date(
      f.created,
    ).toUTCString()}</D:getlastmodified><D:creationdate>${new Date(f.created).toISOString()}</D:creationdate>${SUPPORTED_LOCK}<D:lockdiscovery>${held
      .map((l) => activeLockXml(l, now))
      .join("")}</D:lockdiscovery>`,
  );
}

function folderProps(path: string, created: number, held: Lock[], now: number, used?: number): string {
  const name = path.split("/").pop() || "files";
  return propsXml(
    hrefOf(path, true),
    `<D:displayname>${escape(name)}</D:displayname><D:resourcetype><D:collection/></D:resourcetype><D:getlastmodified>${new Date(created).toUTCString()}</D:getlastmodified><D:creationdate>${new Date(
      created,
    ).toISOString()}</D:creationdate>${used === undefined ? "" : `<D:quota-used-bytes>${used}</D:quota-used-bytes>`}${SUPPORTED_LOCK}<D:lockdiscovery>${held
      .map((l) => activeLockXml(l, now))
      .join("")}</D:lockdiscovery>`,
  );
}

/** The files and folders directly in a folder; of files with the same name there, the newest. */
async function children(db: Db, owner: string, path: string): Promise<{ files: File[]; folders: { path: string; created: number }[] }> {
  const depth = path === "" ? 0 : path.split("/").length;
  const subfolders = (
    await db
      .select()
      .from(folders)
      .where(path === "" ? eq(folders.owner, owner) : and(eq(folders.owner, owner), sql`substr(${folders.path}, 1, ${path.length + 1}) = ${`${path}/`}`))
      .all()
  ).filter((f) => f.path.split("/").length === depth + 1);
  const newest = new Map<string, File>();
  for (const f of await db.select().from(files).where(and(eq(files.owner, owner), eq(files.folder, path))).all()) {
    const seen = newest.get(f.name);
    if (!seen || f.created > seen.created || (f.created === seen.created && f.id > seen.id)) newest.set(f.name, f);
  }
  return { files: [...newest.values()], folders: subfolders.map((f) => ({ path: f.path, created: f.created })) };
}

async function propfind(req: Request, ctx: DavCtx, owner: string, segments: string[], now: number): Promise<Response> {
  const depth = req.headers.get("depth") ?? "infinity";
  if (depth !== "0" && depth !== "1")
    return xmlResponse(403, errorXml(NS.dav, "propfind-finite-depth"));
  const t = await resolve(ctx.db, owner, segments);
  if (t.kind === "none") throw fail(404, `nothing at ${hrefOf(t.path, false)}`);
  const all = await activeLocks(ctx.db, owner, now);
  const held = (path: string) => locksOn(all, path, false);
  const out: string[] = [];
  if (t.kind === "file") out.push(fileProps(t.file, t.path, held(t.path), now));
  else {
    const used = t.kind === "root" ? ((await ctx.db.select({ n: sql<number>`coalesce(sum(${files.size}), 0)`.mapWith(Number) }).from(files).where(eq(files.owner, owner)).get())?.n ?? 0) : undefined;
    out.push(folderProps(t.path, t.kind === "folder" ? t.created : 0, held(t.path), now, used));
    if (depth === "1") {
      const c = await children(ctx.db, owner, t.path);
      for (const f of c.folders) out.push(folderProps(f.path, f.created, held(f.path), now));
      for (const f of c.files) {
        const p = t.path ? `${t.path}/${f.name}` : f.name;
        out.push(fileProps(f, p, held(p), now));
      }
    }
  }
  return xmlResponse(207, `<D:multistatus xmlns:D="DAV:">${out.join("")}</D:multistatus>`);
}

/** PROPPATCH: no dead properties are kept, but clients (Windows sets its file times) expect each one answered. */
async function proppatch(req: Request, segments: string[], ctx: DavCtx, owner: string): Promise<Response> {
  const body = await req.text();
  const t = await resolve(ctx.db, owner, segments);
  if (t.kind === "none") throw fail(404, `nothing at ${hrefOf(t.path, false)}`);
  // Each property named, by its namespace and name whatever prefix the client chose.
  const root = parseXml(body);
  const names = descendants(root, NS.dav, "prop").flatMap((p) => p.children.map((c) => prop(c.ns, c.name)));
  return xmlResponse(207, multistatus([{ href: hrefOf(t.path, t.kind !== "file"), found: names }]));
}

// ---- writes

const maxBytes = (ctx: Ctx) => {
  const n = Number(ctx.config.HEARTH_FILES_MAX_BYTES);
  return Number.isFinite(n) && n > 0 ? n : 25 * 1024 * 1024;
};

/** The body, read as it arrives and refused once past the cap, so an oversized upload is never held whole. */
async function readCapped(req: Request, max: number): Promise<Uint8Array> {
  const declared = Number(req.headers.get("content-length") ?? "0");
  const over = (n: number) => tooLarge(`the file is ${n} bytes or more; the limit is ${max} bytes (HEARTH_FILES_MAX_BYTES)`, "content");
  if (declared > max) throw over(declared);
  const chunks: Uint8Array[] = [];
  let n = 0;
  if (req.body)
    for await (const chunk of req.body) {
      n += chunk.byteLength;
      if (n > max) throw over(n);
      chunks.push(chunk);
    }
  return new Uint8Array(Buffer.concat(chunks));
}

/** files/put's arguments for these bytes: text when the name says text and the bytes are UTF-8, so files/get gives text back. */
function putArgs(name: string, bytes: Uint8Array): Record<string, unknown> {
  if (/^(text\/|application\/(json|xml|javascript))/.test(Bun.file(name).type)) {
    try {
      return { name, content: new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes) };
    } catch {}
  }
  return { name, content: Buffer.from(bytes).toString("base64"), encoding: "base64" };
}

/** Stores bytes as a file in a folder through files/put; the caller runs it in a write. */
async function store(ctx: Ctx, db: Db, folder: string, name: string, bytes: Uint8Array): Promise<File> {
  const made = (await ctx.call("files", "put", putArgs(name, bytes))) as { id: string };
  return db.update(files).set({ folder }).where(eq(files.id, made.id)).returning().get();
}

/** Removes a file or a folder with everything in it, files through files/delete. */
async function remove(ctx: Ctx, db: Db, owner: string, t: Target) {
  if (t.kind === "file") {
    await ctx.call("files", "delete", { id: t.file.id });
    return;
  }
  if (t.kind !== "folder") return;
  for (const f of await db.select({ id: files.id }).from(files).where(and(eq(files.owner, owner), inside(files.folder, t.path))).all()) await ctx.call("files", "delete", { id: f.id });
  await db.delete(folders).where(and(eq(folders.owner, owner), inside(folders.path, t.path))).run();
  await db.delete(locks).where(and(eq(locks.owner, owner), inside(locks.path, t.path))).run();
}

/**
 * Runs a change to the owner's drive in a write, holding the drive until it
 * ends. What a change does depends on what it finds (a name free or taken, a
 * folder there, a lock held, a folder's contents as it moves them), and
 * changes to one drive reach across it: a folder moved takes its contents
 * along, a lock on a folder holds what is in it. So the changes of one owner
 * take turns; other owners' drives are not held.
 */
function drive<T>(ctx: Ctx, owner: string, fn: (db: Db) => Promise<T>): Promise<T> {
  return ctx.writes(async (db) => {
    await ctx.lock(`drive:${owner}`);
    return fn(db);
  });
}

async function put(req: Request, ctx: DavCtx, owner: string, segments: string[], now: number): Promise<Response> {
  if (segments.length === 0) throw fail(405, "the top folder is not a file");
  const bytes = await readCapped(req, maxBytes(ctx));
  return drive(ctx, owner, async (db) => {
    if (!(await parentExists(db, owner, segments))) throw fail(409, `the folder ${hrefOf(join(segments.slice(0, -1)), true)} does not exist: make it first (MKCOL)`);
    const t = await resolve(db, owner, segments);
    if (t.kind === "folder") throw fail(405, `${hrefOf(t.path, true)} is a folder`);
    assertUnlocked(req, await activeLocks(db, owner, now), t.path);
    const f = await store(ctx, db, join(segments.slice(0, -1)), segments[segments.length - 1], bytes);
    // Replacing: the new file takes the name, then the old one goes (its bytes stay if the content is the same).
    if (t.kind === "file") await ctx.call("files", "delete", { id: t.file.id });
    return new Response(null, { status: t.kind === "file" ? 204 : 201, headers: { etag: `"${f.hash}"` } });
  });
}

async function mkcol(req: Request, ctx: DavCtx, owner: string, segments: string[], now: number): Promise<Response> {
  if ((await req.arrayBuffer()).byteLength > 0) throw fail(415, "MKCOL takes no body");
  if (segments.length === 0) throw fail(405, "the top folder already exists");
  return drive(ctx, owner, async (db) => {
    const t = await resolve(db, owner, segments);
    if (t.kind !== "none") throw fail(405, `${hrefOf(t.path, t.kind !== "file")} already exists`);
    if (!(await parentExists(db, owner, segments))) throw fail(409, `the folder ${hrefOf(join(segments.slice(0, -1)), true)} does not exist`);
    assertUnlocked(req, await activeLocks(db, owner, now), t.path);
    await db.insert(folders).values({ owner, path: t.path, created: now }).run();
    return new Response(null, { status: 201 });
  });
}

async function del(req: Request, ctx: DavCtx, owner: string, segments: string[], now: number): Promise<Response> {
  if (segments.length === 0) throw fail(403, "the top folder cannot be deleted");
  return drive(ctx, owner, async (db) => {
    const t = await resolve(db, owner, segments);
    if (t.kind === "none") throw fail(404, `nothing at ${hrefOf(t.path, false)}`);
    assertUnlocked(req, await activeLocks(db, owner, now), t.path, t.kind === "folder");
    await remove(ctx, db, owner, t);
    if (t.kind === "file") await db.delete(locks).where(and(eq(locks.owner, owner), eq(locks.path, t.path))).run();
    return new Response(null, { status: 204 });
  });
}

function destination(req: Request): string[] {
  const header = req.headers.get("destination");
  if (!header) throw fail(400, "MOVE and COPY need a Destination header");
  let url: URL;
  try {
    url = new URL(header, req.url);
  } catch {
    throw fail(400, `the Destination ${JSON.stringify(header)} is not a URL`);
  }
  if (url.host !== new URL(req.url).host && req.headers.get("host") && url.host !== req.headers.get("host")) throw fail(502, "the Destination is on another server");
  if (url.pathname !== DAV_ROOT && !url.pathname.startsWith(`${DAV_ROOT}/`)) throw fail(502, `the Destination must be under ${DAV_ROOT}/`);
  return parsePath(url.pathname);
}

async function copyOrMove(req: Request, ctx: DavCtx, owner: string, segments: string[], now: number, move: boolean): Promise<Response> {
  const to = destination(req);
  const overwrite = (req.headers.get("overwrite") ?? "T").toUpperCase() !== "F";
  if (segments.length === 0) throw fail(403, "the top folder cannot be moved or copied");
  if (to.length === 0) throw fail(403, "nothing can replace the top folder");
  const from = join(segments);
  const dest = join(to);
  if (from === dest) throw fail(403, "the source and the destination are the same");
  return drive(ctx, owner, async (db) => {
    const src = await resolve(db, owner, segments);
    if (src.kind === "none") throw fail(404, `nothing at ${hrefOf(from, false)}`);
    if (src.kind === "folder" && within(dest, from)) throw fail(409, "a folder cannot go inside itself");
    if (!(await parentExists(db, owner, to))) throw fail(409, `the folder ${hrefOf(join(to.slice(0, -1)), true)} does not exist`);
    const all = await activeLocks(db, owner, now);
    if (move) assertUnlocked(req, all, from, src.kind === "folder");
    const existing = await resolve(db, owner, to);
    assertUnlocked(req, all, dest, existing.kind === "folder");
    if (existing.kind !== "none") {
      if (!overwrite) throw fail(412, `${hrefOf(dest, existing.kind === "folder")} exists and Overwrite is F`);
      await remove(ctx, db, owner, existing);
    }
    const folder = join(to.slice(0, -1));
    const name = to[to.length - 1];
    if (src.kind === "file") {
      if (move) await db.update(files).set({ name, folder }).where(eq(files.id, src.file.id)).run();
      else await store(ctx, db, folder, name, await ctx.blobs.read(src.file.hash));
    } else if (move) {
      // A folder's files and folders follow it: their paths get the new prefix.
      const rename = (column: Column) => sql`${dest} || substr(${column}, ${from.length + 1})`;
      await db.update(files).set({ folder: rename(files.folder) }).where(and(eq(files.owner, owner), inside(files.folder, from))).run();
      await db.update(folders).set({ path: rename(folders.path) }).where(and(eq(folders.owner, owner), inside(folders.path, from))).run();
      await db.delete(locks).where(and(eq(locks.owner, owner), inside(locks.path, from))).run();
    } else {
      const depth = req.headers.get("depth") ?? "infinity";
      const moved = (p: string) => dest + p.slice(from.length);
      const dirs = await db.select().from(folders).where(and(eq(folders.owner, owner), inside(folders.path, from))).all();
      for (const d of depth === "0" ? dirs.filter((d) => d.path === from) : dirs) await db.insert(folders).values({ owner, path: moved(d.path), created: now }).run();
      if (depth !== "0")
        for (const f of await db.select().from(files).where(and(eq(files.owner, owner), inside(files.folder, from))).all())
          await store(ctx, db, moved(f.folder), f.name, await ctx.blobs.read(f.hash));
    }
    if (move && src.kind === "file") await db.delete(locks).where(and(eq(locks.owner, owner), eq(locks.path, from))).run();
    return new Response(null, { status: existing.kind === "none" ? 201 : 204 });
  });
}

async function lock(req: Request, ctx: DavCtx, owner: string, segments: string[], now: number): Promise<Response> {
  const body = (await req.text()).trim();
  const path = join(segments);
  const seconds = (() => {
    const m = /Second-(\d+)/i.exec(req.headers.get("timeout") ?? "");
    return m ? Math.min(Math.max(Number(m[1]), 1), LOCK_SECONDS) : LOCK_SECONDS;
  })();
  return drive(ctx, owner, async (db) => {
    await db.delete(locks).where(and(eq(locks.owner, owner), sql`${locks.expires} <= ${now}`)).run();
    const all = await activeLocks(db, owner, now);
    if (!body) {
      // A refresh: the lock named in If gets a new timeout.
      const tokens = submitted(req);
      const l = locksOn(all, path, false).find((x) => tokens.has(x.token));
      if (!l) throw fail(412, "a LOCK without a body refreshes a lock: send its token in the If header");
      const refreshed = await db.update(locks).set({ expires: now + seconds * 1000 }).where(eq(locks.token, l.token)).returning().get();
      return xmlResponse(200, `<D:prop xmlns:D="DAV:"><D:lockdiscovery>${activeLockXml(refreshed, now)}</D:lockdiscovery></D:prop>`);
    }
    const info = parseXml(body);
    if (info?.ns !== NS.dav || info.name !== "lockinfo") throw fail(400, "the LOCK body must be a DAV:lockinfo");
    const depth = req.headers.get("depth") === "0" ? "0" : "infinity";
    if (locksOn(all, path, depth === "infinity").length > 0) throw fail(423, `${hrefOf(path, false)} is already locked`);
    // Who holds it, kept as an href or as text in the DAV namespace, so the answer stays well-formed whatever prefixes the client used.
    const given = child(info, NS.dav, "owner");
    const href = child(given, NS.dav, "href")?.text.trim();
    const plain = given?.text.trim() ?? "";
    const holder = href ? `<D:href>${escape(href.slice(0, 500))}</D:href>` : escape(plain.slice(0, 500));
    let t = await resolve(db, owner, segments);
    let status = 200;
    if (t.kind === "none") {
      // Locking a name that is not there yet makes an empty file, as clients that lock before writing expect.
      if (!(await parentExists(db, owner, segments))) throw fail(409, `the folder ${hrefOf(join(segments.slice(0, -1)), true)} does not exist`);
      const f = await store(ctx, db, join(segments.slice(0, -1)), segments[segments.length - 1], new Uint8Array());
      t = { kind: "file", path, file: f };
      status = 201;
    }
    const made = await db
      .insert(locks)
      .values({ token: `opaquelocktoken:${crypto.randomUUID()}`, owner, path: t.path, depth, holder, expires: now + seconds * 1000 })
      .returning()
      .get();
    return xmlResponse(status, `<D:prop xmlns:D="DAV:"><D:lockdiscovery>${activeLockXml(made, now)}</D:lockdiscovery></D:prop>`, { "lock-token": `<${made.token}>` });
  });
}

async function unlock(req: Request, ctx: DavCtx, owner: string, segments: string[], now: number): Promise<Response> {
  // RFC 4918 writes it in angle brackets; some clients send the bare token.
  const header = (req.headers.get("lock-token") ?? "").trim();
  const token = /^<([^>]+)>$/.exec(header)?.[1] ?? (header || undefined);
  if (!token) throw fail(400, "UNLOCK needs a Lock-Token header: <opaquelocktoken:…>");
  const path = join(segments);
  return drive(ctx, owner, async (db) => {
    const l = await db.select().from(locks).where(and(eq(locks.owner, owner), eq(locks.token, token))).get();
    if (!l || l.expires <= now || !locksOn([l], path, false).length) return xmlResponse(409, errorXml(NS.dav, "lock-token-matches-request-uri"));
    await db.delete(locks).where(eq(locks.token, token)).run();
    return new Response(null, { status: 204 });
  });
}

async function get(req: Request, ctx: DavCtx, owner: string, segments: string[]): Promise<Response> {
  const t = await resolve(ctx.db, owner, segments);
  if (t.kind === "file") return serveFile(req, t.file, ctx.blobs);
  if (t.kind === "none") throw fail(404, `nothing at ${hrefOf(t.path, false)}`);
  const c = await children(ctx.db, owner, t.path);
  const lines = [...c.folders.map((f) => `${f.path.split("/").pop()}/`), ...c.files.map((f) => f.name)].sort();
  return text(200, lines.length ? `${lines.join("\n")}\n` : "");
}

/** Answers one WebDAV request for the signed-in caller. */
export async function serveDav(req: Request, ctx: DavCtx): Promise<Response> {
  const headers = { DAV: "1, 2", "MS-Author-Via": "DAV" };
  try {
    if (req.method === "OPTIONS") return new Response(null, { status: 200, headers: { ...headers, Allow: ALLOW } });
    const owner = ctx.caller.account?.id;
    if (!owner)
      throw new HearthError("unauthenticated", "WebDAV needs your user name and an app password (a Hearth token allowed files)", { headers: { "WWW-Authenticate": BASIC_CHALLENGE } });
    const segments = parsePath(new URL(req.url).pathname);
    const now = ctx.clock.now().getTime();
    let res: Response;
    switch (req.method) {
      case "GET":
        res = await get(req, ctx, owner, segments);
        break;
      case "HEAD": {
        // The headers alone: the bytes are not fetched, and the length stays even where the body would stream.
        const full = await get(req, ctx, owner, segments);
        await full.body?.cancel();
        res = new Response(null, full);
        break;
      }
      case "PROPFIND":
        await req.arrayBuffer();
        res = await propfind(req, ctx, owner, segments, now);
        break;
      case "PROPPATCH":
        res = await proppatch(req, segments, ctx, owner);
        break;
      case "PUT":
        res = await put(req, ctx, owner, segments, now);
        break;
      case "MKCOL":
        res = await mkcol(req, ctx, owner, segments, now);
        break;
      case "DELETE":
        res = await del(req, ctx, owner, segments, now);
        break;
      case "COPY":
      case "MOVE":
        res = await copyOrMove(req, ctx, owner, segments, now, req.method === "MOVE");
        break;
      case "LOCK":
        res = await lock(req, ctx, owner, segments, now);
        break;
      case "UNLOCK":
        res = await unlock(req, ctx, owner, segments, now);
        break;
      default:
        return text(405, `${req.method} is not a WebDAV method here`, { ...headers, Allow: ALLOW });
    }
    for (const [k, v] of Object.entries(headers)) res.headers.set(k, v);
    return res;
  } catch (e) {
    if (e instanceof DavError) return text(e.status, `${e.message}\n`, headers);
    throw e;
  }
}
