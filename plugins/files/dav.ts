// WebDAV (RFC 4918, classes 1 and 2) over the caller's files at /files/dav/,
// so Finder, Windows Explorer, GNOME Files and phone apps can mount them as a
// drive. Folders are a path stored with each file (plus a row per folder, so an
// empty one exists); the files/* API is unchanged and lists every file.
// Writes go through the same dispatch as the API (files/put, files/delete) so
// validation, size cap, scopes, limits and prices are the same; a rename, a
// move and a new folder, which no API method does, are done here in the same
// write transaction. Locks are write locks, exclusive or shared, kept in the
// database; so are the dead properties clients set with PROPPATCH. Every write
// checks its conditions first (If-Match, If-None-Match, If: 412 when they do
// not hold), then the locks on what it changes (423 without their tokens).
import { and, eq, gt, or, sql, type Column } from "drizzle-orm";
import { child, children as childrenOf, errorXml, NS, parseXml, serialize, type El, BASIC_CHALLENGE } from "hearth/dav";
import { escape } from "hearth/pages";
import { HearthError, tooLarge, type Ctx, type Db, type Received } from "hearth";
import { BadIf, ifHolds, matchRefusal, parseIf, submittedTokens, type State } from "./conditions.ts";
import { NAME_PATTERN } from "./content.ts";
import { withReceived } from "./incoming.ts";
import { files, folders, locks, props } from "./schema.ts";
import { serveFile } from "./serve.ts";

type File = typeof files.$inferSelect;
type Lock = typeof locks.$inferSelect;
type Prop = typeof props.$inferSelect;
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

/**
 * A file's entity tag on the drive: its content's hash, cut to 128 bits so an
 * If header naming a lock token and two entity tags stays short (neon-based
 * clients such as litmus write it into a 200-byte buffer).
 */
export const etagOf = (f: File) => `"${f.hash.slice(0, 32)}"`;

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

/**
 * Refuses a change to `path` (and, for a folder's delete or move, to what is
 * in it) unless the request submits the token of each exclusive lock on it
 * and of one of the shared locks taken on each place.
 */
function assertUnlocked(tokens: Set<string>, all: Lock[], path: string, withInside = false) {
  const held = locksOn(all, path, withInside);
  const shared = new Map<string, Lock[]>();
  for (const l of held) if (l.scope === "shared") shared.set(l.path, [...(shared.get(l.path) ?? []), l]);
  const free = held.every((l) => l.scope === "shared" || tokens.has(l.token)) && [...shared.values()].every((ls) => ls.some((l) => tokens.has(l.token)));
  if (!free) throw fail(423, `${path || "the top folder"} is locked: send its lock token in the If header`);
}

/** A member added to a folder or taken from it changes the folder: a depth-0 lock on the folder holds that too (RFC 4918 §7.5). */
function assertMembershipUnlocked(tokens: Set<string>, all: Lock[], path: string) {
  if (path === "") return;
  const parent = path.split("/").slice(0, -1).join("/");
  assertUnlocked(
    tokens,
    all.filter((l) => l.path === parent && l.depth === "0"),
    parent,
  );
}

/** What the conditions of a request are checked against at this place. */
function stateOf(t: Target, all: Lock[]): State {
  return { exists: t.kind !== "none", etag: t.kind === "file" ? etagOf(t.file) : undefined, tokens: new Set(locksOn(all, t.path, false).map((l) => l.token)) };
}

/** The place a resource tag of an If header names, when it is on this drive. */
async function tagged(req: Request, db: Db, owner: string, tag: string): Promise<Target | null> {
  try {
    const url = new URL(tag, req.url);
    if (url.host !== new URL(req.url).host && url.host !== req.headers.get("host")) return null;
    if (url.pathname !== DAV_ROOT && !url.pathname.startsWith(`${DAV_ROOT}/`)) return null;
    return await resolve(db, owner, parsePath(url.pathname));
  } catch (e) {
    if (e instanceof DavError || e instanceof TypeError) return null;
    throw e;
  }
}

/**
 * A write's conditions: If-Match and If-None-Match on the request's resource,
 * then the If header's lists, each on the resource it names; 412 when one does
 * not hold. Gives the lock tokens the request submits.
 */
async function preconditions(req: Request, db: Db, owner: string, all: Lock[], t: Target): Promise<Set<string>> {
  const here = stateOf(t, all);
  const refused = matchRefusal(req, here);
  if (refused) throw fail(412, refused);
  const header = req.headers.get("if");
  if (header === null) return new Set();
  let lists;
  try {
    lists = parseIf(header);
  } catch (e) {
    if (e instanceof BadIf) throw fail(400, e.message);
    throw e;
  }
  const states = new Map<string | undefined, State>([[undefined, here]]);
  for (const l of lists)
    if (l.tag !== undefined && !states.has(l.tag)) {
      const at = await tagged(req, db, owner, l.tag);
      states.set(l.tag, at ? stateOf(at, all) : { exists: false, tokens: new Set() });
    }
  if (!ifHolds(lists, (tag) => states.get(tag)!)) throw fail(412, "the If header's conditions do not hold: the resource's entity tag or its locks are not what the request names");
  return submittedTokens(lists);
}

function activeLockXml(l: Lock, now: number): string {
  return `<D:activelock><D:locktype><D:write/></D:locktype><D:lockscope><D:${l.scope}/></D:lockscope><D:depth>${l.depth === "0" ? "0" : "infinity"}</D:depth>${
    l.holder ? `<D:owner>${l.holder}</D:owner>` : ""
  }<D:timeout>Second-${Math.max(0, Math.round((l.expires - now) / 1000))}</D:timeout><D:locktoken><D:href>${escape(l.token)}</D:href></D:locktoken><D:lockroot><D:href>${escape(
    hrefOf(l.path, false),
  )}</D:href></D:lockroot></D:activelock>`;
}

const SUPPORTED_LOCK =
  "<D:supportedlock><D:lockentry><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry><D:lockentry><D:lockscope><D:shared/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry></D:supportedlock>";

// ---- properties

type Name = { ns: string; name: string };
const keyOf = (n: Name) => `${n.ns}\n${n.name}`;

/** A property's empty element, in the answers' one declared prefix (D: for DAV:) or with its namespace declared on it. */
function emptyProp(n: Name): string {
  if (n.ns === NS.dav) return `<D:${n.name}/>`;
  if (n.ns === "") return `<${n.name}/>`;
  return `<x:${n.name} xmlns:x="${escape(n.ns)}"/>`;
}

const REASON: Record<number, string> = { 200: "OK", 403: "Forbidden", 404: "Not Found", 409: "Conflict", 424: "Failed Dependency" };

/** Why a propstat of this status failed, in RFC 4918's terms (§16). */
const CONDITION: Record<number, string> = { 403: "<D:error><D:cannot-modify-protected-property/></D:error>" };

/** One resource's answer: a propstat for each status, each with its properties. */
function responseXml(href: string, stats: Map<number, string[]>): string {
  const parts = [...stats]
    .filter(([, ps]) => ps.length)
    .map(([status, ps]) => `<D:propstat><D:prop>${ps.join("")}</D:prop><D:status>HTTP/1.1 ${status} ${REASON[status] ?? ""}</D:status>${CONDITION[status] ?? ""}</D:propstat>`);
  return `<D:response><D:href>${escape(href)}</D:href>${parts.join("")}</D:response>`;
}

/** Properties the drive keeps itself; a client may read them but not set or remove them. */
const LIVE = ["displayname", "resourcetype", "getcontentlength", "getcontenttype", "getetag", "getlastmodified", "creationdate", "supportedlock", "lockdiscovery", "quota-used-bytes", "quota-available-bytes"];
const isLive = (n: Name) => n.ns === NS.dav && LIVE.includes(n.name);
/** Named only: RFC 4331 keeps quotas out of allprop. */
const NOT_IN_ALLPROP = new Set(["quota-used-bytes"]);

/** The live properties of a place, by namespace and name, each as its element. */
function liveProps(t: { path: string; file?: File; created: number; used?: number }, held: Lock[], now: number): Map<string, string> {
  const out = new Map<string, string>();
  const add = (name: string, inner: string | null) => out.set(keyOf({ ns: NS.dav, name }), inner === null ? `<D:${name}/>` : `<D:${name}>${inner}</D:${name}>`);
  const f = t.file;
  add("displayname", escape(f ? f.name : t.path.split("/").pop() || "files"));
  add("resourcetype", f ? null : "<D:collection/>");
  if (f) {
    add("getcontentlength", String(f.size));
    add("getcontenttype", escape(f.type));
    add("getetag", etagOf(f));
  }
  add("getlastmodified", new Date(t.created).toUTCString());
  add("creationdate", new Date(t.created).toISOString());
  if (t.used !== undefined) add("quota-used-bytes", String(t.used));
  out.set(keyOf({ ns: NS.dav, name: "supportedlock" }), SUPPORTED_LOCK);
  add("lockdiscovery", held.map((l) => activeLockXml(l, now)).join(""));
  return out;
}

/** What a PROPFIND asks for: every property (and some named besides), the names alone, or the named ones. */
type Wanted = { kind: "allprop"; include: Name[] } | { kind: "propname" } | { kind: "prop"; names: Name[] };

function wanted(body: El | null): Wanted {
  if (!body) return { kind: "allprop", include: [] };
  if (body.ns !== NS.dav || body.name !== "propfind") throw fail(400, "the PROPFIND body must be a DAV:propfind");
  const named = (el: El | undefined) => (el?.children ?? []).map((c) => ({ ns: c.ns, name: c.name }));
  if (child(body, NS.dav, "propname")) return { kind: "propname" };
  if (child(body, NS.dav, "allprop")) return { kind: "allprop", include: named(child(body, NS.dav, "include")) };
  const prop = child(body, NS.dav, "prop");
  if (prop) return { kind: "prop", names: named(prop) };
  throw fail(400, "a DAV:propfind holds DAV:prop, DAV:propname or DAV:allprop");
}

function answerFor(href: string, live: Map<string, string>, dead: Prop[], want: Wanted): string {
  const stats = new Map<number, string[]>([
    [200, []],
    [404, []],
  ]);
  const deadXml = new Map(dead.map((p) => [keyOf(p), p.xml]));
  if (want.kind === "propname") {
    stats.get(200)!.push(
      ...[...live.keys()].map((k) => emptyProp({ ns: NS.dav, name: k.split("\n")[1] })),
      ...dead.map((p) => emptyProp(p)),
    );
  } else if (want.kind === "allprop") {
    for (const [k, xml] of live) if (!NOT_IN_ALLPROP.has(k.split("\n")[1])) stats.get(200)!.push(xml);
    stats.get(200)!.push(...deadXml.values());
    for (const n of want.include) if (n.ns === NS.dav && NOT_IN_ALLPROP.has(n.name) && live.has(keyOf(n))) stats.get(200)!.push(live.get(keyOf(n))!);
  } else {
    for (const n of want.names) {
      const xml = live.get(keyOf(n)) ?? deadXml.get(keyOf(n));
      if (xml !== undefined) stats.get(200)!.push(xml);
      else stats.get(404)!.push(emptyProp(n));
    }
  }
  return responseXml(href, stats);
}

/** The dead properties at a path, or at it and everything inside it. */
function deadProps(db: Db, owner: string, path: string, withInside: boolean): Promise<Prop[]> {
  return db
    .select()
    .from(props)
    .where(withInside && path === "" ? eq(props.owner, owner) : and(eq(props.owner, owner), withInside ? inside(props.path, path) : eq(props.path, path)))
    .all();
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
  const want = wanted(parseXml(await xmlBody(req)));
  const depth = req.headers.get("depth") ?? "infinity";
  if (depth !== "0" && depth !== "1")
    return xmlResponse(403, errorXml(NS.dav, "propfind-finite-depth"));
  const t = await resolve(ctx.db, owner, segments);
  if (t.kind === "none") throw fail(404, `nothing at ${hrefOf(t.path, false)}`);
  const all = await activeLocks(ctx.db, owner, now);
  const held = (path: string) => locksOn(all, path, false);
  const dead = new Map<string, Prop[]>();
  for (const p of await deadProps(ctx.db, owner, t.path, depth === "1" && t.kind !== "file")) dead.set(p.path, [...(dead.get(p.path) ?? []), p]);
  const out: string[] = [];
  const answer = (path: string, o: { file?: File; created: number; used?: number }) =>
    out.push(answerFor(hrefOf(path, !o.file), liveProps({ path, ...o }, held(path), now), dead.get(path) ?? [], want));
  if (t.kind === "file") answer(t.path, { file: t.file, created: t.file.created });
  else {
    const used = t.kind === "root" ? ((await ctx.db.select({ n: sql<number>`coalesce(sum(${files.size}), 0)`.mapWith(Number) }).from(files).where(eq(files.owner, owner)).get())?.n ?? 0) : undefined;
    answer(t.path, { created: t.kind === "folder" ? t.created : 0, used });
    if (depth === "1") {
      const c = await children(ctx.db, owner, t.path);
      for (const f of c.folders) answer(f.path, { created: f.created });
      for (const f of c.files) answer(t.path ? `${t.path}/${f.name}` : f.name, { file: f, created: f.created });
    }
  }
  return xmlResponse(207, `<D:multistatus xmlns:D="DAV:">${out.join("")}</D:multistatus>`);
}

/**
 * PROPPATCH: sets and removes dead properties in the order given, all or
 * nothing. The drive's own properties cannot be changed (403); when one
 * instruction fails, the others are answered 424 and none is applied.
 */
async function proppatch(req: Request, ctx: DavCtx, owner: string, segments: string[], now: number): Promise<Response> {
  const root = parseXml(await xmlBody(req), { keepSpace: true });
  if (!root || root.ns !== NS.dav || root.name !== "propertyupdate") throw fail(400, "the PROPPATCH body must be a DAV:propertyupdate");
  const steps: { set: boolean; el: El }[] = [];
  for (const op of root.children) {
    if (op.ns !== NS.dav || (op.name !== "set" && op.name !== "remove")) throw fail(400, `a DAV:propertyupdate holds DAV:set and DAV:remove, not ${op.name}`);
    for (const p of childrenOf(op, NS.dav, "prop")) for (const el of p.children) steps.push({ set: op.name === "set", el });
  }
  return drive(ctx, owner, async (db) => {
    const t = await resolve(db, owner, segments);
    if (t.kind === "none") throw fail(404, `nothing at ${hrefOf(t.path, false)}`);
    const all = await activeLocks(db, owner, now);
    assertUnlocked(await preconditions(req, db, owner, all, t), all, t.path);
    const refused = steps.filter((s) => isLive(s.el));
    const stats = new Map<number, string[]>();
    const answer = (status: number, el: El) => stats.set(status, [...(stats.get(status) ?? []), emptyProp(el)]);
    if (refused.length) {
      for (const s of steps) answer(isLive(s.el) ? 403 : 424, s.el);
    } else {
      for (const s of steps) {
        const where = and(eq(props.owner, owner), eq(props.path, t.path), eq(props.ns, s.el.ns), eq(props.name, s.el.name));
        await db.delete(props).where(where).run();
        if (s.set) await db.insert(props).values({ owner, path: t.path, ns: s.el.ns, name: s.el.name, xml: serialize(s.el) }).run();
        answer(200, s.el);
      }
    }
    return xmlResponse(207, `<D:multistatus xmlns:D="DAV:">${responseXml(hrefOf(t.path, t.kind !== "file"), stats)}</D:multistatus>`);
  });
}

/** Dead properties follow a place moved, or are copied with it: those at `from` and (unless `depth0`) inside it become those at `to`; what was at `to` goes. */
async function carryProps(db: Db, owner: string, from: string, to: string, move: boolean, depth0 = false) {
  await db.delete(props).where(and(eq(props.owner, owner), inside(props.path, to))).run();
  const moved = (p: string) => to + p.slice(from.length);
  const rows = await deadProps(db, owner, from, !depth0);
  if (move) await db.delete(props).where(and(eq(props.owner, owner), inside(props.path, from))).run();
  for (const p of rows) await db.insert(props).values({ ...p, path: moved(p.path) }).run();
}

// ---- writes

const maxBytes = (ctx: Ctx) => {
  const n = Number(ctx.config.HEARTH_FILES_MAX_BYTES);
  return Number.isFinite(n) && n > 0 ? n : 25 * 1024 * 1024;
};

/**
 * The body, streamed into the blob store's temp space as it arrives and
 * refused once past the cap, so an upload is never held whole in memory; a
 * body cut off mid-way leaves nothing.
 */
async function receive(req: Request, ctx: Ctx, name: string): Promise<Received> {
  const max = maxBytes(ctx);
  const declared = Number(req.headers.get("content-length") ?? "0");
  const over = (n: number) => tooLarge(`the file is ${n} bytes or more; the limit is ${max} bytes (HEARTH_FILES_MAX_BYTES)`, "content");
  if (declared > max) throw over(declared);
  return ctx.blobs.receive(req.body, { max, over, utf8: textual(name) });
}

/** Largest XML body read (PROPFIND, PROPPATCH, LOCK): properties are small, and a request is held whole to be parsed. */
const MAX_XML = 1024 * 1024;

/** An XML request body, refused with 413 past MAX_XML. */
async function xmlBody(req: Request): Promise<string> {
  const declared = Number(req.headers.get("content-length") ?? "0");
  const over = () => fail(413, `a ${req.method} body may be at most ${MAX_XML} bytes`);
  if (declared > MAX_XML) throw over();
  const chunks: Uint8Array[] = [];
  let n = 0;
  if (req.body)
    for await (const chunk of req.body) {
      n += chunk.byteLength;
      if (n > MAX_XML) throw over();
      chunks.push(chunk);
    }
  return new TextDecoder().decode(Buffer.concat(chunks));
}

/** Whether the name says text: such a file is stored as text when its bytes are UTF-8, so files/get gives text back. */
const textual = (name: string) => /^(text\/|application\/(json|xml|javascript))/.test(Bun.file(name).type);

/** An empty body, for a file made by locking a name not yet there. */
const EMPTY: Received = { hash: new Bun.CryptoHasher("sha256").digest("hex"), size: 0, utf8: true, drop: async () => {} };

/** A stored file's content as a body already received: a copy names the same blob, its bytes never read. */
const contentOf = (f: File): Received => ({ hash: f.hash, size: f.size, utf8: f.encoding === "text", drop: async () => {} });

/**
 * Stores a received body as a file in a folder through files/put (which
 * takes it from withReceived, not from its arguments); the caller runs it in a write.
 */
async function store(ctx: Ctx, db: Db, folder: string, name: string, got: Received): Promise<File> {
  const args = got.utf8 && textual(name) ? { name, content: "" } : { name, content: "", encoding: "base64" };
  const made = (await (got.size === 0 ? ctx.call("files", "put", args) : withReceived(got, () => ctx.call("files", "put", args)))) as { id: string };
  return db.update(files).set({ folder }).where(eq(files.id, made.id)).returning().get();
}

/** Removes a file or a folder with everything in it, files through files/delete. */
async function remove(ctx: Ctx, db: Db, owner: string, t: Target) {
  if (t.kind === "file") {
    await ctx.call("files", "delete", { id: t.file.id });
    await db.delete(props).where(and(eq(props.owner, owner), eq(props.path, t.path))).run();
    return;
  }
  if (t.kind !== "folder") return;
  await db.delete(props).where(and(eq(props.owner, owner), inside(props.path, t.path))).run();
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
  const got = await receive(req, ctx, segments[segments.length - 1]);
  try {
    return await putReceived(req, ctx, owner, segments, now, got);
  } finally {
    // Taken by the blob store when the file was stored; otherwise (refused, failed) the temp file goes.
    await got.drop();
  }
}

function putReceived(req: Request, ctx: DavCtx, owner: string, segments: string[], now: number, got: Received): Promise<Response> {
  return drive(ctx, owner, async (db) => {
    if (!(await parentExists(db, owner, segments))) throw fail(409, `the folder ${hrefOf(join(segments.slice(0, -1)), true)} does not exist: make it first (MKCOL)`);
    const t = await resolve(db, owner, segments);
    if (t.kind === "folder") throw fail(405, `${hrefOf(t.path, true)} is a folder`);
    const all = await activeLocks(db, owner, now);
    const tokens = await preconditions(req, db, owner, all, t);
    assertUnlocked(tokens, all, t.path);
    if (t.kind === "none") assertMembershipUnlocked(tokens, all, t.path);
    const f = await store(ctx, db, join(segments.slice(0, -1)), segments[segments.length - 1], got);
    // Replacing: the new file takes the name, then the old one goes (its bytes stay if the content is the same).
    if (t.kind === "file") await ctx.call("files", "delete", { id: t.file.id });
    return new Response(null, { status: t.kind === "file" ? 204 : 201, headers: { etag: etagOf(f) } });
  });
}

async function mkcol(req: Request, ctx: DavCtx, owner: string, segments: string[], now: number): Promise<Response> {
  if ((await req.arrayBuffer()).byteLength > 0) throw fail(415, "MKCOL takes no body");
  if (segments.length === 0) throw fail(405, "the top folder already exists");
  return drive(ctx, owner, async (db) => {
    const t = await resolve(db, owner, segments);
    if (t.kind !== "none") throw fail(405, `${hrefOf(t.path, t.kind !== "file")} already exists`);
    if (!(await parentExists(db, owner, segments))) throw fail(409, `the folder ${hrefOf(join(segments.slice(0, -1)), true)} does not exist`);
    const all = await activeLocks(db, owner, now);
    const tokens = await preconditions(req, db, owner, all, t);
    assertUnlocked(tokens, all, t.path);
    assertMembershipUnlocked(tokens, all, t.path);
    await db.insert(folders).values({ owner, path: t.path, created: now }).run();
    return new Response(null, { status: 201 });
  });
}

async function del(req: Request, ctx: DavCtx, owner: string, segments: string[], now: number): Promise<Response> {
  if (segments.length === 0) throw fail(403, "the top folder cannot be deleted");
  return drive(ctx, owner, async (db) => {
    const t = await resolve(db, owner, segments);
    if (t.kind === "none") throw fail(404, `nothing at ${hrefOf(t.path, false)}`);
    const all = await activeLocks(db, owner, now);
    const tokens = await preconditions(req, db, owner, all, t);
    assertUnlocked(tokens, all, t.path, t.kind === "folder");
    assertMembershipUnlocked(tokens, all, t.path);
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
    const tokens = await preconditions(req, db, owner, all, src);
    if (move) assertUnlocked(tokens, all, from, src.kind === "folder");
    if (move) assertMembershipUnlocked(tokens, all, from);
    const existing = await resolve(db, owner, to);
    assertUnlocked(tokens, all, dest, existing.kind === "folder");
    if (existing.kind === "none") assertMembershipUnlocked(tokens, all, dest);
    if (existing.kind !== "none") {
      if (!overwrite) throw fail(412, `${hrefOf(dest, existing.kind === "folder")} exists and Overwrite is F`);
      await remove(ctx, db, owner, existing);
    }
    const folder = join(to.slice(0, -1));
    const name = to[to.length - 1];
    await carryProps(db, owner, from, dest, move, !move && src.kind === "folder" && req.headers.get("depth") === "0");
    if (src.kind === "file") {
      if (move) await db.update(files).set({ name, folder }).where(eq(files.id, src.file.id)).run();
      else await store(ctx, db, folder, name, contentOf(src.file));
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
          await store(ctx, db, moved(f.folder), f.name, contentOf(f));
    }
    if (move && src.kind === "file") await db.delete(locks).where(and(eq(locks.owner, owner), eq(locks.path, from))).run();
    return new Response(null, { status: existing.kind === "none" ? 201 : 204 });
  });
}

/** The lock's time: the first the client asks for that we read (Infinite or Second-n), at most LOCK_SECONDS. */
function timeoutOf(req: Request): number {
  for (const part of (req.headers.get("timeout") ?? "").split(",")) {
    const v = part.trim();
    if (/^infinite$/i.test(v)) return LOCK_SECONDS;
    const m = /^Second-(\d+)$/i.exec(v);
    if (m) return Math.min(Math.max(Number(m[1]), 1), LOCK_SECONDS);
  }
  return LOCK_SECONDS;
}

async function lock(req: Request, ctx: DavCtx, owner: string, segments: string[], now: number): Promise<Response> {
  const body = (await xmlBody(req)).trim();
  const path = join(segments);
  const seconds = timeoutOf(req);
  const info = parseXml(body);
  if (info && (info.ns !== NS.dav || info.name !== "lockinfo")) throw fail(400, "the LOCK body must be a DAV:lockinfo");
  const scope = child(child(info, NS.dav, "lockscope"), NS.dav, "shared") ? "shared" : "exclusive";
  if (info && !child(child(info, NS.dav, "lockscope"), NS.dav, scope)) throw fail(400, "a DAV:lockinfo names its DAV:lockscope: DAV:exclusive or DAV:shared");
  if (info && !child(child(info, NS.dav, "locktype"), NS.dav, "write")) throw fail(400, "a DAV:lockinfo names its DAV:locktype, and only DAV:write locks are taken here");
  return drive(ctx, owner, async (db) => {
    await db.delete(locks).where(and(eq(locks.owner, owner), sql`${locks.expires} <= ${now}`)).run();
    const all = await activeLocks(db, owner, now);
    let t = await resolve(db, owner, segments);
    const tokens = await preconditions(req, db, owner, all, t);
    if (!info) {
      // A refresh: the lock named in If, on this place or a folder above it, gets a new timeout.
      const l = locksOn(all, path, false).find((x) => tokens.has(x.token));
      if (!l) throw fail(412, "a LOCK without a body refreshes a lock: send its token in the If header");
      const refreshed = await db.update(locks).set({ expires: now + seconds * 1000 }).where(eq(locks.token, l.token)).returning().get();
      return xmlResponse(200, `<D:prop xmlns:D="DAV:"><D:lockdiscovery>${activeLockXml(refreshed, now)}</D:lockdiscovery></D:prop>`);
    }
    const depth = req.headers.get("depth") === "0" ? "0" : "infinity";
    // Shared locks keep company with other shared ones; an exclusive one with none.
    const conflicts = locksOn(all, path, depth === "infinity").filter((l) => scope === "exclusive" || l.scope === "exclusive");
    if (conflicts.length > 0) throw fail(423, `${hrefOf(path, false)} is already locked`);
    // Who holds it, kept as an href or as text in the DAV namespace, so the answer stays well-formed whatever prefixes the client used.
    const given = child(info, NS.dav, "owner");
    const href = child(given, NS.dav, "href")?.text.trim();
    const plain = given?.text.trim() ?? "";
    const holder = href ? `<D:href>${escape(href.slice(0, 500))}</D:href>` : escape(plain.slice(0, 500));
    let status = 200;
    if (t.kind === "none") {
      // Locking a name that is not there yet makes an empty file, as clients that lock before writing expect (RFC 4918 §7.3).
      if (!(await parentExists(db, owner, segments))) throw fail(409, `the folder ${hrefOf(join(segments.slice(0, -1)), true)} does not exist`);
      assertMembershipUnlocked(tokens, all, path);
      const f = await store(ctx, db, join(segments.slice(0, -1)), segments[segments.length - 1], EMPTY);
      t = { kind: "file", path, file: f };
      status = 201;
    }
    const made = await db
      .insert(locks)
      .values({ token: `opaquelocktoken:${crypto.randomUUID()}`, owner, path: t.path, depth, scope, holder, expires: now + seconds * 1000 })
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
  if (t.kind === "file") return serveFile(req, t.file, ctx.blobs, etagOf(t.file));
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
    // A page of this instance (the Files screen) sends its CSRF token: its signed-out person is sent to sign in, not shown the browser's password box.
    if (!owner)
      throw new HearthError("unauthenticated", "WebDAV needs your user name and an app password (a Hearth token allowed files)", req.headers.has("x-csrf-token") ? {} : { headers: { "WWW-Authenticate": BASIC_CHALLENGE } });
    // A fragment is the client's own business: one sent means the address is not what it seems (DELETE /a/#b must not delete /a/).
    if (req.url.includes("#")) throw fail(400, "the request's address has a fragment (#...): percent-encode a # in a name as %23");
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
        res = await propfind(req, ctx, owner, segments, now);
        break;
      case "PROPPATCH":
        res = await proppatch(req, ctx, owner, segments, now);
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
