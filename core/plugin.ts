// The plugin contract. A plugin declares each method once; every surface
// (HTTP, MCP, CLI, OpenAPI, prices, scopes) is derived from this declaration.
import type { Static, TObject } from "@sinclair/typebox";
import type { Database } from "bun:sqlite";
import type { BaseSQLiteDatabase } from "drizzle-orm/sqlite-core";
import type { CapabilityFactory } from "./capabilities.ts";
import type { DavCollection } from "./dav/collection.ts";
import type { PluginViews } from "./mcp/plugin-views.ts";

export type Access = "public" | "account";
export type MethodKind = "read" | "write";

export interface Account {
  id: string;
  username: string;
  admin: boolean;
}

/** Who is calling. Identity always comes from here, never from an argument. */
export interface Caller {
  account: Account | null;
  /** Services this caller may use: "*" for all. */
  scopes: "*" | string[];
  via: "token" | "session" | "payment" | "local" | "none";
  tokenId?: string;
  /** The token's name, as its owner gave it (an OAuth client's, an app password's): what the audit log shows beside its id. */
  tokenName?: string;
  /** Client address, for rate limits on strangers. */
  address?: string;
  /** Set by surfaces that act for the agent, so withheld methods stay withheld. */
  agent?: boolean;
  /**
   * Signed in only by a session cookie the browser may have sent on its own
   * (a GET from another site's link or page, with neither X-CSRF-Token nor
   * same-origin proof): enough to read, not to spend credits.
   */
  ambient?: boolean;
  /**
   * Set by the agent on the calls of a run that has read content from outside
   * its owner: what it read, in words. A call that sends out is then held for
   * the owner's approval (core/policy/gate.ts), whatever the model says.
   */
  untrustedRead?: string;
}

export interface Clock {
  now(): Date;
}

export interface Logger {
  info(msg: string, data?: Record<string, unknown>): void;
  warn(msg: string, data?: Record<string, unknown>): void;
  error(msg: string, data?: Record<string, unknown>): void;
}

/**
 * A plugin's database: drizzle's SQLite query builders, every query awaited.
 * On the embedded SQLite store the queries run at once; the same builders
 * are what a networked store executes asynchronously, so code written
 * against this type runs unchanged on either.
 */
export type Db = BaseSQLiteDatabase<"async", { changes: number }, Record<string, never>>;

/** Bytes start..end of a blob, both inclusive (as in an HTTP Range). */
export interface BlobRange {
  start: number;
  end: number;
}

/**
 * Content-addressed blob store: the data folder or an S3-compatible bucket,
 * as HEARTH_BLOBS chooses; callers never know which, nor where the bytes lie.
 */
/**
 * A request body received into a temp file beside the blobs while it was
 * hashed, never held whole: not a blob until put, and dropped in any case
 * once the write that would name it is over.
 */
export interface Received {
  hash: string;
  size: number;
  /** Whether the bytes are UTF-8 text, when the receive was asked to tell. */
  utf8: boolean;
  /** Removes the temp file, if the put did not take it. */
  drop(): Promise<void>;
}

export interface Blobs {
  /**
   * Stores bytes (whole or not at all), or what receive took in; returns the
   * sha256 hex. Call it in the write that stores the row naming it.
   */
  put(bytes: Uint8Array | Received): Promise<string>;
  /**
   * Takes a body as it streams into a temp file, hashing it on the way: past
   * `max` bytes the read stops with `over(n)`, and a body that fails or is
   * cut off leaves nothing behind.
   */
  receive(body: ReadableStream<Uint8Array> | null, o: { max: number; over: (n: number) => Error; utf8?: boolean }): Promise<Received>;
  read(hash: string): Promise<Uint8Array>;
  exists(hash: string): Promise<boolean>;
  /** Size in bytes; null when the blob is missing. */
  size(hash: string): Promise<number | null>;
  /** The bytes (or a range of them) as a response body, streamed rather than read whole. */
  body(hash: string, range?: BlobRange): Blob | ReadableStream<Uint8Array>;
  /**
   * A short-lived signed URL answering with the blob under this type and
   * Content-Disposition, when the store offers one and the instance is set to
   * send readers there (HEARTH_S3_REDIRECT=on); otherwise absent.
   */
  presign?(hash: string, o: { type: string; disposition: string }): string;
  /**
   * Call after deleting a row that named the blob: it is removed once the
   * write commits if no column declared with holdsBlobs names it any more
   * (another file, someone's mail). Blobs are shared; nothing removes one outright.
   */
  release(hash: string): Promise<void>;
}

export interface IndexEntry {
  kind: string;
  ref: string;
  /** Account id for private records; null for public ones. */
  owner: string | null;
  title: string;
  body: string;
}

export interface IndexHit {
  /** The service that indexed the entry. */
  service: string;
  kind: string;
  ref: string;
  owner: string | null;
  title: string;
  snippet: string;
  rank: number;
}

/**
 * Full-text index shared by plugins that search: SQLite's FTS5, or
 * PostgreSQL's tsvector on that store. Every method is awaited; a change
 * made inside a write call lands in its transaction, one made from a read
 * queues behind the write lock.
 */
export interface FullTextIndex {
  /** Adds or replaces the entry with this kind and ref. */
  put(entry: IndexEntry): Promise<void>;
  /** Adds or replaces many entries at once, in one transaction. */
  putMany(entries: IndexEntry[]): Promise<void>;
  remove(kind: string, ref: string): Promise<void>;
  /**
   * owner: only that owner's entries; "public": only ownerless; undefined: any.
   * services: whose entries to search; the calling service's by default, "*" for every service
   * (for readers across services, such as the archive; pair it with owner "public").
   */
  search(q: {
    query: string;
    kind?: string | string[];
    owner?: string | "public" | { any: (string | null)[] };
    services?: string[] | "*";
    limit?: number;
    /** "rank" (default): best match first. "recent": latest put first, which stops at `limit` instead of ranking every match (a history searched by words). */
    order?: "rank" | "recent";
  }): Promise<IndexHit[]>;
  /** The public (ownerless) entries of one service and kind, latest put first; body is its first 600 characters. */
  recent(q: { kind: string; service?: string; limit: number }): Promise<IndexEntry[]>;
  /** How many public (ownerless) entries each service holds of each kind, across every service. */
  counts(): Promise<{ service: string; kind: string; n: number }[]>;
  /** The refs this service has indexed under this kind. */
  indexed(kind: string): Promise<Set<string>>;
}

export interface ActivityEvent {
  /** A short machine word: "post.published", "app.created", "room.started". */
  type: string;
  /** One public sentence about what happened. Never a private record. */
  text: string;
  url?: string;
  data?: Record<string, unknown>;
}

/**
 * Capabilities a plugin may declare in `needs`. Modules that provide one
 * augment this interface (declaration merging) and declare a factory in
 * `provides.capabilities`, so core/plugin.ts never lists providers by hand.
 */
export interface CapabilityTypes {
  db: Db;
  /** The raw bun:sqlite connection behind `db`, for FTS and hand-written SQL. */
  sqlite: Database;
  blobs: Blobs;
  index: FullTextIndex;
  /** Records an activity event; in a write call it joins the call's transaction, which waits for it before committing. */
  emit: (event: ActivityEvent) => Promise<void>;
  /**
   * In a write call: waits until no other write holds key, then holds it
   * until the call's transaction ends. For a write that reads, then writes
   * what the read decided (a name still free, a count, a balance), which
   * instances sharing one PostgreSQL database could otherwise interleave.
   * Costs nothing on SQLite, whose writes run one at a time.
   */
  lock: (key: string) => Promise<void>;
  /**
   * Runs fn once the call's write transaction has committed, and never when
   * it rolls back: for telling the world (live listeners, other instances)
   * of what the call wrote. Outside a transaction, at once.
   */
  afterCommit: (fn: () => void | Promise<void>) => Promise<void>;
  /** Runs fn on the writer in a write transaction (joining the call's own in a write call), for a read that must record something once (a wallet made on first request). */
  writes: <T>(fn: (db: Db) => T | Promise<T>) => Promise<T>;
  /**
   * Calls another method through the same dispatch, as the same caller; with
   * `scopes`, with no more than those (never more than the caller's own).
   */
  call: (service: string, method: string, args?: Record<string, unknown>, opts?: { scopes?: "*" | string[] }) => Promise<unknown>;
}

export type Capability = keyof CapabilityTypes;

export interface BaseCtx {
  caller: Caller;
  requestId: string;
  service: string;
  method: string;
  clock: Clock;
  config: Readonly<Record<string, string>>;
  log: Logger;
  /** The caller's account; throws 401 when there is none. */
  readonly account: Account;
  /** Base URL of this instance as the caller reached it, for links in answers. */
  baseUrl: string;
  /**
   * Credits this call is charged when it succeeds (and is not answered from
   * cache alone), as dispatch priced it with the instance's overrides and
   * metering switch applied, so an answer can say what it cost; 0 outside a
   * call, when it is free or when no one is charged.
   */
  price: number;
}

export type Ctx = BaseCtx & CapabilityTypes;

export type Price<A> = number | ((args: A, ctx: BaseCtx) => number | Promise<number>);

export interface MethodDef<S extends TObject = TObject, R = unknown> {
  kind: MethodKind;
  /** What it does, units, defaults, limits: shown on every surface. */
  description: string;
  args: S;
  access: Access;
  /** Credits per call (a credit is $0.01). Storage-only methods are 0. */
  price?: Price<Static<S>>;
  /** Methods the agent may not call (events/delete). */
  withheldFromAgent?: boolean;
  /** Reaches a provider outside the instance. */
  openWorld?: boolean;
  /*
   * What the method does beyond reading or writing, so that policies on the
   * agent (and the MCP annotations) key on the class of act, not on names.
   */
  /** Deletes or overwrites the owner's data (a record removed, a note or post rewritten in place). */
  destructive?: boolean;
  /**
   * Sends data outside the instance, or where strangers read it: mail out, a
   * text, a fetch of an address the caller names, a payment, a public post, a
   * published app, a chat message. An agent run that has read anything beyond
   * its owner's request may not call it.
   */
  outbound?: boolean;
  /**
   * For an outbound method, the argument naming where it sends (an address,
   * a number, a server): what a credential's recipient allowlist is checked against.
   */
  recipient?: string;
  /**
   * Its answer carries content from outside the owner (a stranger's mail, a
   * fetched page, a feed, someone else's post or chat message, a hosted app's
   * input, a recalled conversation holding such): the agent hands it to the
   * model marked as untrusted, data never to be obeyed.
   */
  untrusted?: boolean;
  /**
   * Spends money. Defaults to whether a price is declared (a number above 0 or
   * a function); true for a method that spends the owner's funds otherwise
   * (wallet/pay); a priced method may not declare false.
   */
  costs?: boolean;
  /**
   * Largest JSON body this method accepts, in bytes, when it needs more (or
   * less) than HEARTH_BODY_LIMIT: an upload, say. A function reads settings.
   */
  bodyLimit?: number | ((config: Readonly<Record<string, string>>) => number);
  /**
   * Writes run in one database transaction by default, so a failure leaves
   * nothing half-written. A write that waits on the network may opt out and
   * take care of its own atomicity.
   */
  transaction?: boolean;
  /**
   * Its effect cannot be undone once it happened (a text sent, a model run
   * the instance pays its provider for), so it runs only once it is paid: an
   * x402 payment for it settles before the handler starts, and should the
   * handler then fail, what was paid becomes the account's credits. A priced
   * `transaction: false` write not declared so runs, when paid with x402, in
   * one transaction that a failed settlement rolls back.
   */
  irreversible?: boolean;
  run: (args: Static<S>, ctx: Ctx) => R | Promise<R>;
}

/** A page or endpoint outside /api/v1 that a plugin serves (public pages, feeds, webhooks, live streams). */
export interface RouteDef {
  /**
   * "*" answers every verb, for a protocol of its own (WebDAV's PROPFIND, PUT,
   * MKCOL, ...): the handler reads the body itself and gets read access, making
   * its writes through ctx.call (the same dispatch as the API) or ctx.writes,
   * and a token scoped to other services is refused with 403 as on the API.
   */
  method: "GET" | "POST" | "*";
  /** Elysia path pattern; must start with "/<service>" (e.g. "/blog/feed.xml", "/docs/:id", "/files/dav/*"). */
  path: string;
  /** GET and "*" routes get read access; POST routes run in one write transaction. The caller is identified as for the API. */
  run: (req: Request, ctx: Ctx & { params: Record<string, string> }) => Response | Promise<Response>;
  /**
   * A GET that serves a document someone else wrote (a hosted page), answered
   * on the sandbox origin too (core/http/sandbox.ts; the plugin needs
   * "sandbox"), where it has no caller: cookies and tokens are not read
   * there, and ctx.sandbox.here says it came in that way.
   */
  sandbox?: boolean;
  /**
   * On a "*" route, the verbs (["PUT"]) whose bodies the handler streams to
   * storage as they arrive rather than holding them: the instance's budget of
   * bodies received at once counts only the part of such a body in memory (the
   * chunk being passed on), not its whole length. Every other body counts whole.
   */
  streams?: string[];
}

/** One line of a home card: plain text, escaped where it is shown. */
export interface CardLine {
  text: string;
  /** Muted detail after the text: a time, a change, a due date. */
  detail?: string;
  /** A link, followed only when it is an http(s) address. */
  href?: string;
}

/** What a card shows for one answer; `title` replaces the card's own when the answer changes what it is. */
export interface CardBody {
  title?: string;
  /** One sentence above the lines (today's conditions, the next prayer). */
  lead?: string;
  lines: CardLine[];
}

/** What the home page knows of the person when it asks a card for its arguments. */
export interface CardInput {
  /** Their place, when they set one on the home page. */
  place: { name: string | null; lat: number; lon: number } | null;
  /** Their time zone, from a card that declares `zone`; null when none told it. */
  zone: string | null;
}

/**
 * What the home page shows for this service: one of its methods, called as
 * the signed-in person, and how to read the answer. The page escapes every
 * string; a card that cannot read its answer (or has nothing now) is left out.
 */
export interface CardDef {
  title: string;
  /** A method of this plugin. */
  method: string;
  /** Its arguments for this person; null when the card does not apply to them now (no place set). Default: none. */
  args?: (input: CardInput) => Record<string, unknown> | null;
  /** What to show; null or no lines and no lead leaves the card out. */
  render: (result: unknown, input: { zone: string | null }) => CardBody | null;
  /** Where it sits among the cards, lowest first (default 100). */
  order?: number;
  /** Shown only when the person turns it on, with this label on the home page ("Show today's prayer times"). */
  optIn?: string;
  /** An argument of `method` whose offered values (a union of literals) the person picks from on the home page. */
  choice?: { arg: string; label: string; hint?: string };
  /** This card's answer names the person's time zone; cards that need it wait for it. */
  zone?: (result: unknown) => string | null;
  /** Waits for the time zone before asking for its arguments. */
  needsZone?: boolean;
  /** Also offered to MCP Apps hosts as a view (`ui://hearth/cards/<service>`) linked from the method's tool. */
  view?: boolean;
}

/**
 * A screen of this service for the signed-in person, named in the app's
 * header (docs/views.md). Either a view the core bundles and serves at
 * /my/<service> (the screen keyed by the service's own name) or
 * /my/<service>/<key>, or a link to a page the plugin serves itself.
 */
export interface ScreenDef {
  /** Its name in the header ("Notes"). */
  title: string;
  /**
   * A module in the plugin's folder ("screens/notes.ts") whose default export
   * is a component of `hearth/ui`; it imports only `hearth/ui` and files of
   * its own folder.
   */
  module?: string;
  /** Instead of a module: a page of the plugin's own routes ("/agent"). */
  href?: string;
  /** Where it sits in the header, lowest first (default 100). */
  order?: number;
  /**
   * The reads the view makes as it is first drawn (its `useQuery`s), each a
   * free read method of this plugin with the very arguments the view gives
   * (`[{ method: "list", args: { limit: 100 } }]`): the shell page carries
   * their answers, so the view draws them at once instead of asking after its
   * scripts have run (docs/views.md).
   */
  reads?: { method: string; args?: Record<string, unknown> }[];
}

/** One record the search across everything found: where the person opens it. */
export interface FoundItem {
  title: string;
  /** A muted line: a date, the words around the match. */
  detail?: string;
  /** A path on this instance (a screen: "/my/notes?open=Shopping"). */
  href: string;
}

/**
 * How the search across everything (the header's, /my/search) looks in this
 * service: one of its read methods, called as the signed-in person with the
 * words typed, and how to read its answer into what was found.
 */
export interface FindDef {
  /** The heading its results go under ("Notes"). */
  title: string;
  /** A read method of this plugin. */
  method: string;
  args: (query: string) => Record<string, unknown>;
  /**
   * The method is a paged list (`limit`/`cursor`) that filters nothing by the
   * words: it is read to its end, page by page, so a record past its first
   * thousand is found too. `read` gets every item as one array.
   */
  all?: boolean;
  /** The records found, best first; the search shows the first few. */
  read: (result: unknown, query: string) => FoundItem[];
}

/** A command the plugin adds to `hearth` (the CLI), run in the CLI's process. */
export interface CliDef {
  /** One line for `hearth help`. */
  summary: string;
  /** "hearth NAME ..." */
  usage: string;
  /** Returns the exit code: 0 ok, 1 refused, 2 usage. A HearthError thrown exits 1 with its message. */
  run(argv: string[], ctx: CliCtx): number | Promise<number>;
}

/** What a plugin's CLI command is given. */
export interface CliCtx {
  /** The settings the plugin declared (as ctx.config holds them), with HEARTH_URL and HEARTH_TOKEN. */
  config: Readonly<Record<string, string>>;
  /** Calls a method of the running instance at HEARTH_URL with HEARTH_TOKEN; a refusal throws a HearthError with its kind and message. */
  call(service: string, method: string, args?: Record<string, unknown>): Promise<unknown>;
  out(text: string): void;
  err(text: string): void;
}

/** A plugin that turns a place someone typed into coordinates, for the home page. */
export interface GeocoderDef {
  /** A method of this plugin taking the typed text as `arg`. */
  method: string;
  arg: string;
  /** The first place found, or null. */
  read: (result: unknown) => { name: string; lat: number; lon: number } | null;
}

/** One file of a person's export: a path under the service's folder, and its content. */
export interface ExportFile {
  path: string;
  /** Text, bytes, or a function giving the bytes when the file's turn comes (a large file is read then, not before). */
  data: string | Uint8Array | (() => Promise<Uint8Array>);
}

export interface PluginDef {
  /** The service name: folder == route == tool prefix. */
  name: string;
  description: string;
  needs?: Capability[];
  /** Settings this plugin owns, with defaults; documented in config/example.env. Only declared settings reach ctx.config. */
  config?: Record<string, { default: string; description: string }>;
  /**
   * Settings declared elsewhere (the core's, another module's) that this
   * plugin reads. ctx.config holds exactly these, its own `config`, and the
   * settings of its `providers`; reading any other is refused.
   */
  settings?: string[];
  /**
   * The outside providers ctx.http (and ctx.bytes) may reach: names of
   * providers defined with defineProvider, or the definitions themselves.
   * A request to any other is refused.
   */
  providers?: (string | { name: string })[];
  /**
   * The drizzle tables this plugin stores, by name. A plugin that declares
   * them may only name these tables (and their indexes) in its migrations;
   * a drop-in plugin with migrations must declare them.
   */
  tables?: Record<string, unknown>;
  /** The folder of its drizzle-kit migrations, relative to the plugin's folder ("migrations" when omitted); applied at start. */
  migrations?: string;
  /**
   * Other services this plugin calls through ctx.call: "files"; "mail?" for
   * one it uses only when the instance has it; "*" for a plugin that makes
   * calls someone else wrote (a hosted app's). A call to any other is refused
   * naming both; a required service the instance lacks stops start-up.
   */
  requires?: string[];
  /** What the home page shows for this service. */
  card?: CardDef;
  /** The screens a signed-in person uses this service through, by key (docs/views.md). */
  screens?: Record<string, ScreenDef>;
  /** What the search across everything finds in this service (docs/views.md). */
  find?: FindDef;
  /** Commands this plugin adds to `hearth`, by name. */
  cli?: Record<string, CliDef>;
  /** An outside account this plugin works through, shown on /status as configured once all its settings are set. */
  integration?: { label: string; settings: string[] };
  /** Offered to the home page to find the place a person types. */
  geocoder?: GeocoderDef;
  methods: Record<string, MethodDef<any, any>>;
  routes?: RouteDef[];
  /** A collection calendar and contacts apps sync over CalDAV or CardDAV (core/dav), one per account. */
  dav?: DavCollection;
  /**
   * The caller's records in an open format for their export of all their
   * data (core/export): Markdown, the files as they are. Paths are under the
   * service's folder of the archive. The JSON of every row the service keeps
   * for them, and the iCalendar or vCard of its `dav` collection, are added
   * whatever this says.
   */
  exports?: (ctx: Ctx) => Promise<ExportFile[]>;
  /**
   * What this plugin brings beside its methods, as a core module does:
   * capabilities (ctx.<name> for plugins that list it in `needs`) and MCP
   * Apps views.
   */
  provides?: { capabilities?: Record<string, CapabilityFactory>; views?: PluginViews[] };
  /**
   * One of its own settings that gives its sandbox routes a host name of
   * their own, for where the sandbox port cannot be reached (behind a proxy):
   * /status and `hearth help` point the owner at it then.
   */
  sandboxHost?: string;
  /** Called once after migrations, with a context acting as the instance. */
  start?: (ctx: Ctx) => void | Promise<void>;
  /** Called once as the instance stops, with a context acting as the instance (close listeners, timers). */
  stop?: (ctx: Ctx) => void | Promise<void>;
}

/** The classes of act a method declares beyond read or write, as every surface shows them. */
export interface MethodClasses {
  destructive: boolean;
  outbound: boolean;
  untrusted: boolean;
  costs: boolean;
}

export const CLASS_NAMES = ["destructive", "outbound", "untrusted", "costs"] as const;

export function classesOf(def: Pick<MethodDef, "destructive" | "outbound" | "untrusted" | "costs" | "price">): MethodClasses {
  const priced = typeof def.price === "function" || (typeof def.price === "number" && def.price > 0);
  return { destructive: def.destructive === true, outbound: def.outbound === true, untrusted: def.untrusted === true, costs: def.costs ?? priced };
}

export function definePlugin<P extends PluginDef>(plugin: P): P {
  return plugin;
}

export function read<S extends TObject, R>(def: Omit<MethodDef<S, R>, "kind">): MethodDef<S, R> {
  return { ...def, kind: "read" };
}

export function write<S extends TObject, R>(def: Omit<MethodDef<S, R>, "kind">): MethodDef<S, R> {
  return { ...def, kind: "write" };
}
