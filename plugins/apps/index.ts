import { Type as T } from "@sinclair/typebox";
import { and, desc, eq, getTableColumns, inArray, like, lt, sql } from "drizzle-orm";
import { conflict, forbidden, invalid, notFound, tooLarge, unauthenticated, definePlugin, read, write, type Ctx, type Db } from "hearth";
import { build, BUILD_PRICE } from "./build.ts";
import { chargeUse } from "./charge.ts";
import { inspect, MAX_HTML_BYTES } from "./check.ts";
import { appViews } from "./mcp.ts";
import { sanitiseIcon } from "./icon.ts";
import { directoryPage, frameHost, frameResponse, hostPage, missingPage, onAppsHost, snippetFrameResponse, snippetHostPage, tagList, type App } from "./pages.ts";
import { apps, appsGrants, appsOpens, appsSnippets } from "./schema.ts";
import { freeSlug, isTaken, reserved, SLUG, slugify } from "./slug.ts";
import { STARTERS } from "./starters.ts";
import { MAX_KEY, storeOp, type StoreRequest } from "./store.ts";
import { runCalls } from "./trial.ts";

const Slug = T.String({ minLength: 1, maxLength: 64, description: "The app's address: /apps/<slug>." });
const Name = T.String({ minLength: 1, maxLength: 100, description: "The app's name." });
const Html_ = T.String({ minLength: 1, description: "The whole page, with inline CSS and JavaScript, up to 256 KB. It keeps data with hearth.store and calls methods with hearth.call." });
const Description = T.String({ maxLength: 1000, description: "What the app does; defaults to the name." });
const Tags = T.String({ maxLength: 500, description: "Comma-separated tags." });
const Icon = T.String({ maxLength: 16384, description: "An SVG image; scripts, links and outside references are removed." });
const Key = T.String({ minLength: 1, maxLength: MAX_KEY, description: "The key, as the app's page names it." });
const Price = T.Integer({ minimum: 0, maximum: 1000, description: "Credits charged to whoever opens it, paid to you; 0 (free) to 1000." });

/** How long one paid opening keeps its frame loadable (reloads of the same open). */
const TICKET_MS = 12 * 60 * 60 * 1000;

const metered = (ctx: { config: Readonly<Record<string, string>> }) => ctx.config.HEARTH_METERING !== "off";

function checkHtml(html: string) {
  const bytes = new TextEncoder().encode(html).byteLength;
  if (bytes > MAX_HTML_BYTES) throw tooLarge(`html is ${bytes} bytes; an app's page may be at most ${MAX_HTML_BYTES} bytes (256 KB)`, "html");
  return html;
}

function normaliseTags(tags: string): string {
  const out: string[] = [];
  for (const raw of tags.split(",")) {
    const t = raw.trim().toLowerCase().replace(/^#/, "").replace(/\s+/g, "-");
    if (!t) continue;
    if (t.length > 30) throw invalid("tags", `each tag must be at most 30 characters ("${t.slice(0, 30)}…" is longer)`);
    if (!out.includes(t)) out.push(t);
  }
  if (out.length > 10) throw invalid("tags", `at most 10 tags (got ${out.length})`);
  return out.join(",");
}

async function explicitSlug(db: Db, slug: string, field: string): Promise<string> {
  if (!SLUG.test(slug)) throw invalid(field, `${field} must be lower-case letters, digits and dashes, starting and ending with a letter or digit (got ${JSON.stringify(slug)})`);
  if (reserved(slug)) throw invalid(field, `${field} "${slug}" is reserved for the apps pages`);
  if (await isTaken(db, slug)) throw conflict(`the slug "${slug}" is taken`, { slug });
  return slug;
}

const bySlug = (db: Db, slug: string) => db.select().from(apps).where(eq(apps.slug, slug)).get();

async function find(db: Db, slug: string): Promise<App> {
  const app = await bySlug(db, slug);
  if (!app) throw notFound(`no app with the slug "${slug}"`);
  return app;
}

/** One operation on an app's store, as the caller's own (what its page does with hearth.store). */
async function callerStore(ctx: Ctx, slug: string, r: StoreRequest): Promise<unknown> {
  const app = await find(ctx.db, slug);
  return storeOp(ctx.db, ctx.lock, app.id, ctx.account.id, r, ctx.clock.now().getTime());
}

const urlOf = (ctx: Ctx, slug: string) => `${ctx.baseUrl}/apps/${slug}`;

/** An app without its page, for listings: the page's size comes from the database, not from reading the page. */
type Listed = Omit<App, "html"> & { bytes: number };
const { html: _page, ...listedColumns } = getTableColumns(apps);
const listed = { ...listedColumns, bytes: sql<number>`octet_length(${apps.html})` };

function summary(ctx: Ctx, app: Listed) {
  return {
    slug: app.slug,
    name: app.name,
    description: app.description,
    tags: tagList(app.tags),
    icon: app.icon || null,
    price: app.price,
    owner: app.ownerName,
    mine: !!ctx.caller.account && ctx.caller.account.id === app.owner,
    forked_from: app.forkedFrom,
    starter: app.starter,
    bytes: app.bytes,
    url: urlOf(ctx, app.slug),
    created: new Date(app.created).toISOString(),
    updated: new Date(app.updated).toISOString(),
  };
}

function details(ctx: Ctx, app: App) {
  const mine = !!ctx.caller.account && ctx.caller.account.id === app.owner;
  return {
    slug: app.slug,
    name: app.name,
    description: app.description,
    tags: tagList(app.tags),
    icon: app.icon || null,
    price: app.price,
    owner: app.ownerName,
    mine,
    forked_from: app.forkedFrom,
    starter: app.starter,
    bytes: Buffer.byteLength(app.html),
    url: urlOf(ctx, app.slug),
    created: new Date(app.created).toISOString(),
    updated: new Date(app.updated).toISOString(),
    // A priced app's page is what people pay to open, so only its owner reads it here.
    ...(mine || app.price === 0 ? { html: app.html } : {}),
  };
}

async function indexApp(ctx: Ctx, app: App) {
  await ctx.index.put({ kind: "app", ref: app.id, owner: null, title: app.name, body: `${app.description}\n${tagList(app.tags).join(" ")}` });
}

interface NewApp {
  slug: string;
  owner: string | null;
  ownerName: string;
  name: string;
  description: string;
  tags: string;
  icon: string;
  html: string;
  price: number;
  forkedFrom?: string | null;
  starter?: boolean;
}

/** The app inserted under its slug, or undefined when that slug is taken (by a write that ran alongside this one, on PostgreSQL). */
async function tryInsert(ctx: Ctx, db: Db, a: NewApp): Promise<App | undefined> {
  const now = ctx.clock.now().getTime();
  const [app] = await db
    .insert(apps)
    .values({ id: crypto.randomUUID(), ...a, forkedFrom: a.forkedFrom ?? null, starter: a.starter ?? false, created: now, updated: now })
    .onConflictDoNothing({ target: apps.slug })
    .returning()
    .all();
  if (app) await indexApp(ctx, app);
  return app;
}

/**
 * Inserts the app. A slug the caller chose that another write took since it
 * was found free is the same 409 as one taken before; a slug made from a
 * name (`base` given) moves on to the next free one.
 */
async function insertApp(ctx: Ctx, db: Db, a: NewApp, base?: string): Promise<App> {
  for (let slug = a.slug; ; slug = await freeSlug(db, base!)) {
    const app = await tryInsert(ctx, db, { ...a, slug });
    if (app) return app;
    if (base === undefined) throw conflict(`the slug "${slug}" is taken`, { slug });
  }
}

/** The fields of a new app from create's (or build's) arguments, checked; the slug settled last, and the base it was made from when none was given. */
async function newAppOf(
  ctx: Ctx,
  args: { name: string; html: string; slug?: string; description?: string; tags?: string; icon?: string; price?: number },
): Promise<[NewApp, string | undefined]> {
  const account = ctx.account;
  checkHtml(args.html);
  const name = args.name.trim();
  if (!name) throw invalid("name", "name must not be blank");
  const base = args.slug === undefined ? slugify(name) : undefined;
  const app = {
    slug: base === undefined ? await explicitSlug(ctx.db, args.slug!, "slug") : await freeSlug(ctx.db, base),
    owner: account.id,
    ownerName: account.username,
    name,
    description: args.description?.trim() || name,
    tags: normaliseTags(args.tags ?? ""),
    icon: sanitiseIcon(args.icon ?? ""),
    html: args.html,
    price: args.price ?? 0,
  };
  return [app, base];
}

async function announce(ctx: Ctx, app: App, verb: string) {
  await ctx.emit({ type: `app.${verb}`, text: `${app.ownerName} ${verb === "forked" ? "forked" : "made"} the app "${app.name}"`, url: urlOf(ctx, app.slug), data: { slug: app.slug } });
}

const methodsFor = (ctx: Ctx) =>
  // Its first sentence is enough to ask a person about a method, and keeps the page small.
  Object.fromEntries(ctx.methods.list().map((m) => [m.path, { description: (/^.*?[.!?](?=\s|$)/.exec(m.description)?.[0] ?? m.description).slice(0, 160), price: m.price }]));

const viewer = (ctx: Ctx) => ctx.caller.account;

/** What a person may allow an app besides calling methods: keeping its store in their account, and knowing their name. */
const STORE_GRANT = "hearth.store";
const OWN_GRANTS = [STORE_GRANT, "hearth.user"];

const grantsOf = async (db: Db, app: App, account: string) =>
  (await db.select({ method: appsGrants.method }).from(appsGrants).where(and(eq(appsGrants.app, app.id), eq(appsGrants.account, account))).all()).map((g) => g.method);
const hasGrant = async (db: Db, app: App, account: string, method: string) =>
  !!(await db.select({ at: appsGrants.at }).from(appsGrants).where(and(eq(appsGrants.app, app.id), eq(appsGrants.account, account), eq(appsGrants.method, method))).get());

async function jsonBody(req: Request): Promise<Record<string, unknown>> {
  let body: unknown;
  try {
    body = JSON.parse((await req.text()) || "{}");
  } catch {
    throw invalid("body", "the body must be a JSON object");
  }
  if (!body || typeof body !== "object" || Array.isArray(body)) throw invalid("body", "the body must be a JSON object");
  return body as Record<string, unknown>;
}

const ok = (result: unknown) =>
  new Response(JSON.stringify({ result }), { headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" } });

/** APPS_HOST answers with app documents only: anything of the instance's there would share an origin with every app. */
const appsHostOnly = () =>
  new Response("This name serves app pages only: open the instance at its own address.", { status: 404, headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" } });

/** Whether a frame's request came in on an origin of the apps' own (APPS_HOST, or the instance's sandbox port). */
const ownOrigin = (ctx: Ctx, req: Request) => ctx.sandbox.here || onAppsHost(ctx.config, req);

function needsTicket(ctx: Ctx, app: App): boolean {
  return app.price > 0 && metered(ctx) && ctx.caller.account?.id !== app.owner;
}

export default definePlugin({
  name: "apps",
  description:
    "Hosted single-page apps: one HTML page each, run in a sandbox at /apps/<slug>, keeping its own data per person through hearth.store and calling the instance's methods through hearth.call, each once the person allows it.",
  needs: ["db", "index", "emit", "call", "writes", "methods", "ai", "lock", "sandbox", "ledger"],
  screens: { apps: { title: "Apps", href: "/apps", order: 85 } },
  provides: { views: [appViews] },
  // apps/test runs the calls an app's page makes, to whatever service they name.
  requires: ["*"],
  settings: ["HEARTH_METERING", "HEARTH_PUBLIC_URL"],
  config: {
    APPS_HOST: {
      default: "",
      description:
        "Another name of this server (apps.example.org; add it to HEARTH_ALLOWED_HOSTS) that app pages are served from, in an origin of their own, where an app cannot navigate its frame. Unset, they are served on the sandbox port (HEARTH_SANDBOX_PORT), an origin of their own too; behind a proxy (HEARTH_PUBLIC_URL set) that port may not be reachable, and then, unless this is set, an app runs on the instance's host and can still make the browser look up and connect to a host it names.",
    },
  },
  sandboxHost: "APPS_HOST",
  methods: {
    create: write({
      description:
        "Creates a hosted app from a whole HTML page (inline CSS and JavaScript, up to 256 KB; 413 past it). The slug comes from the name when omitted (a taken one gets a suffix; a taken explicit slug is 409). In the page, `await hearth.store.get(key)` / `set(key, value)` / `remove(key)` / `keys(prefix)` keep data per person, `await hearth.user()` names them, and `await hearth.call(\"service/method\", args)` calls a method as them, each once the person allows it. Returns the app's details and URL.",
      args: T.Object({ name: Name, html: Html_, slug: T.Optional(Slug), description: T.Optional(Description), tags: T.Optional(Tags), icon: T.Optional(Icon), price: T.Optional(Price) }),
      access: "account",
      outbound: true,
      async run(args, ctx) {
        const app = await insertApp(ctx, ctx.db, ...(await newAppOf(ctx, args)));
        await announce(ctx, app, "created");
        return details(ctx, app);
      },
    }),
    edit: write({
      description: "Edits an app the caller owns (403 otherwise); omitted fields keep their value. Same limits as create.",
      args: T.Object({ slug: Slug, name: T.Optional(Name), description: T.Optional(Description), tags: T.Optional(Tags), html: T.Optional(Html_), icon: T.Optional(Icon), price: T.Optional(Price) }),
      access: "account",
      outbound: true,
      destructive: true,
      async run(args, ctx) {
        const app = await find(ctx.db, args.slug);
        if (app.owner !== ctx.account.id) throw forbidden(`the app "${app.slug}" belongs to ${app.ownerName}; only its owner may edit it (fork it to make your own copy)`);
        const set: Partial<App> = { updated: ctx.clock.now().getTime() };
        if (args.html !== undefined) set.html = checkHtml(args.html);
        if (args.name !== undefined) {
          if (!args.name.trim()) throw invalid("name", "name must not be blank");
          set.name = args.name.trim();
        }
        if (args.description !== undefined) set.description = args.description.trim() || (set.name ?? app.name);
        if (args.tags !== undefined) set.tags = normaliseTags(args.tags);
        if (args.icon !== undefined) set.icon = sanitiseIcon(args.icon);
        if (args.price !== undefined) set.price = args.price;
        const updated = await ctx.db.update(apps).set(set).where(eq(apps.id, app.id)).returning().get();
        await indexApp(ctx, updated);
        return details(ctx, updated);
      },
    }),
    fork: write({
      description:
        "Copies an app into the caller's account as a free app they own. The copy's slug is new_slug (409 when taken) or one made from the original's. Forking someone else's priced app costs its price once, paid to its creator.",
      args: T.Object({ slug: Slug, new_slug: T.Optional(Slug) }),
      access: "account",
      outbound: true,
      async run(args, ctx) {
        const original = await find(ctx.db, args.slug);
        const account = ctx.account;
        const base = args.new_slug === undefined ? `${original.slug.replace(/-\d+$/, "").slice(0, 40)}-${slugify(account.username).slice(0, 16)}` : undefined;
        const slug = base === undefined ? await explicitSlug(ctx.db, args.new_slug!, "new_slug") : await freeSlug(ctx.db, base);
        const paid = metered(ctx)
          ? await chargeUse(ctx.db, ctx.ledger, { payer: account.id, creator: original.owner, price: original.price, slug: original.slug, what: "fork", requestId: ctx.requestId, at: ctx.clock.now().getTime() })
          : { charged: 0 };
        const copy = await insertApp(ctx, ctx.db, {
          slug,
          owner: account.id,
          ownerName: account.username,
          name: original.name,
          description: original.description,
          tags: original.tags,
          icon: original.icon,
          html: original.html,
          price: 0,
          forkedFrom: original.slug,
        }, base);
        await announce(ctx, copy, "forked");
        return { ...details(ctx, copy), charged: paid.charged };
      },
    }),
    read: read({
      description: "One app's details: name, description, tags, icon, price, owner, size, URL; the page itself for free apps and for the owner.",
      args: T.Object({ slug: Slug }),
      access: "public",
      untrusted: true,
      async run({ slug }, ctx) {
        return details(ctx, await find(ctx.db, slug));
      },
    }),
    search: read({
      description: "Searches the apps directory by name, description or tag (full text); `tag` keeps only apps with that tag. With neither, the newest apps. At most 50.",
      args: T.Object({ query: T.Optional(T.String({ maxLength: 200, description: "Words to find in names, descriptions and tags." })), tag: T.Optional(T.String({ maxLength: 30, description: "One tag." })) }),
      access: "public",
      untrusted: true,
      async run(args, ctx) {
        return (await listApps(ctx, args.query ?? "", args.tag ?? "")).map((a) => summary(ctx, a));
      },
    }),
    test: write({
      description:
        "Checks an app's page and reports what is broken: HTML parse errors, scripts that do not compile, external script sources, oversize, calls to methods that do not exist, elements scripts look up that are missing. Then runs the page's hearth.call(...) calls whose arguments are written literally, through the same dispatch as the caller (charged as usual): reads are run and their answers reported; calls that change something are checked against the method's arguments but not run.",
      args: T.Object({ slug: Slug }),
      access: "public",
      untrusted: true,
      // Its calls may reach providers; they run as calls of their own, not inside one long transaction.
      transaction: false,
      async run({ slug }, ctx) {
        const app = await find(ctx.db, slug);
        const report = inspect(app.html, (p) => !!ctx.methods.get(p));
        const calls = await runCalls(ctx, report.calls);
        return {
          slug: app.slug,
          ok: report.problems.length === 0 && calls.every((c) => c.ok !== false),
          bytes: report.bytes,
          problems: report.problems,
          warnings: report.warnings,
          store_calls: report.storeCalls,
          calls,
        };
      },
    }),
    run: write({
      description:
        "Publishes a JavaScript snippet and returns its URL. Opened, the code runs as a module in a browser sandbox with no network and no access to anyone's account; nothing it prints comes back here.",
      args: T.Object({ code: T.String({ minLength: 1, description: "JavaScript, run as a module." }) }),
      access: "account",
      outbound: true,
      async run({ code }, ctx) {
        const bytes = new TextEncoder().encode(code).byteLength;
        if (bytes > MAX_HTML_BYTES) throw tooLarge(`code is ${bytes} bytes; a snippet may be at most ${MAX_HTML_BYTES} bytes`, "code");
        const id = crypto.randomUUID().replace(/-/g, "").slice(0, 20);
        await ctx.db.insert(appsSnippets).values({ id, owner: ctx.account.id, code, created: ctx.clock.now().getTime() }).run();
        return { id, url: `${ctx.baseUrl}/apps/run/${id}`, bytes };
      },
    }),
    // The store an app's page keeps per person, as methods: an app opened in a conversation (an MCP Apps view)
    // reaches it through the host's tools/call, as the person's own calls; the page under /apps through its host page, once allowed.
    store_get: read({
      description: "One value an app keeps for the caller (what its page saves with hearth.store.set), or null when there is none. The same store its page under /apps uses.",
      args: T.Object({ slug: Slug, key: Key }),
      access: "account",
      run: ({ slug, key }, ctx) => callerStore(ctx, slug, { op: "get", key }),
    }),
    store_keys: read({
      description: "The keys an app keeps for the caller, sorted; `prefix` keeps those starting with it.",
      args: T.Object({ slug: Slug, prefix: T.Optional(T.String({ maxLength: MAX_KEY, description: "Only keys starting with this." })) }),
      access: "account",
      run: ({ slug, prefix }, ctx) => callerStore(ctx, slug, { op: "keys", prefix }),
    }),
    store_set: write({
      description: "Keeps a JSON value under a key in an app's store for the caller (at most 64 KB of JSON a value, 1000 keys an app), as its page's hearth.store.set does.",
      args: T.Object({ slug: Slug, key: Key, value: T.Unknown({ description: "Any JSON value." }) }),
      access: "account",
      run: ({ slug, key, value }, ctx) => callerStore(ctx, slug, { op: "set", key, value }),
    }),
    store_remove: write({
      description: "Removes a key from an app's store for the caller, as its page's hearth.store.remove does.",
      args: T.Object({ slug: Slug, key: Key }),
      access: "account",
      run: ({ slug, key }, ctx) => callerStore(ctx, slug, { op: "remove", key }),
    }),
    build: write({
      description: `Builds a single-page app (a tracker, a checklist, a counter...) from a description with the instance's model: one page with inline CSS and JavaScript that keeps its data in its own store. The page is checked (it parses, is under 256 KB, loads no outside scripts, keeps its data with hearth.store); a page that fails is sent back once with the problems, then the call answers 502. Saved as the caller's app; returns its details and URL. ${BUILD_PRICE} credits.`,
      args: T.Object({ prompt: T.String({ minLength: 3, maxLength: 4000, description: "What the app should do." }) }),
      access: "account",
      outbound: true,
      price: BUILD_PRICE,
      openWorld: true,
      // The model takes seconds: the app is saved in a short transaction of its own once its page passes.
      transaction: false,
      // The model's work is paid to its provider whatever happens next.
      irreversible: true,
      run({ prompt }, ctx) {
        return build(ctx, prompt, (fields) =>
          ctx.writes(async () => {
            const app = await insertApp(ctx, ctx.db, ...(await newAppOf(ctx, fields)));
            await announce(ctx, app, "created");
            return details(ctx, app);
          }),
        );
      },
    }),
  },
  routes: [
    {
      method: "GET",
      path: "/apps",
      async run(req, ctx) {
        if (onAppsHost(ctx.config, req)) return appsHostOnly();
        const q = new URL(req.url).searchParams;
        const query = (q.get("q") ?? "").slice(0, 200);
        const tag = (q.get("tag") ?? "").slice(0, 30).toLowerCase();
        return directoryPage({ list: await listApps(ctx, query, tag), query, tag, tags: await tagCounts(ctx.db), viewer: viewer(ctx) });
      },
    },
    {
      method: "GET",
      path: "/apps/run/:id",
      async run(req, ctx) {
        if (onAppsHost(ctx.config, req)) return appsHostOnly();
        const s = await ctx.db.select({ id: appsSnippets.id }).from(appsSnippets).where(eq(appsSnippets.id, ctx.params.id)).get();
        if (!s) return missingPage("There is no snippet at this address.", viewer(ctx));
        return snippetHostPage(s.id, viewer(ctx), frameHost(ctx.config, req, ctx.sandbox));
      },
    },
    {
      method: "GET",
      path: "/apps/run/:id/frame",
      sandbox: true,
      async run(req, ctx) {
        const s = await ctx.db.select().from(appsSnippets).where(eq(appsSnippets.id, ctx.params.id)).get();
        if (!s) return missingPage("There is no snippet at this address.", null);
        return snippetFrameResponse(s.code, ownOrigin(ctx, req) ? frameHost(ctx.config, req, ctx.sandbox) : null);
      },
    },
    {
      method: "GET",
      path: "/apps/:slug",
      async run(req, ctx) {
        if (onAppsHost(ctx.config, req)) return appsHostOnly();
        const app = await bySlug(ctx.db, ctx.params.slug);
        const who = viewer(ctx);
        if (!app) return missingPage("There is no app at this address.", who);
        const granted = who ? await grantsOf(ctx.db, app, who.id) : [];
        return hostPage({ app, frameHost: frameHost(ctx.config, req, ctx.sandbox), viewer: who, needsTicket: needsTicket(ctx, app), granted, methods: methodsFor(ctx) });
      },
    },
    {
      method: "GET",
      path: "/apps/:slug/frame",
      sandbox: true,
      async run(req, ctx) {
        const app = await bySlug(ctx.db, ctx.params.slug);
        if (!app) return missingPage("There is no app at this address.", null);
        const own = ownOrigin(ctx, req);
        if (needsTicket(ctx, app)) {
          const ticket = new URL(req.url).searchParams.get("ticket") ?? "";
          const who = ctx.caller.account;
          // An origin of the app's own counts no cookie of the instance's: there the ticket, made for the payer moments ago, is what stands for them.
          const open = ticket && (who || own)
            ? await ctx.db.select().from(appsOpens).where(and(eq(appsOpens.ticket, ticket), eq(appsOpens.app, app.id), who ? eq(appsOpens.account, who.id) : undefined)).get()
            : undefined;
          if (!open || open.expires <= ctx.clock.now().getTime())
            return new Response(`This app costs ${app.price} credits per open: open it from /apps/${app.slug}.`, {
              status: 402,
              headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" },
            });
        }
        return frameResponse(app, own ? frameHost(ctx.config, req, ctx.sandbox) : null);
      },
    },
    {
      method: "POST",
      path: "/apps/:slug/open",
      async run(req, ctx) {
        if (onAppsHost(ctx.config, req)) return appsHostOnly();
        const app = await find(ctx.db, ctx.params.slug);
        const who = ctx.caller.account;
        if (!who) throw unauthenticated("sign in to open an app");
        const now = ctx.clock.now().getTime();
        const paid = needsTicket(ctx, app)
          ? await chargeUse(ctx.db, ctx.ledger, { payer: who.id, creator: app.owner, price: app.price, slug: app.slug, what: "open", requestId: ctx.requestId, at: now })
          : { charged: 0, balance: null };
        // Spent opens are of no further use (the ledger keeps what was paid); an open is a quiet moment to drop them.
        await ctx.db.delete(appsOpens).where(lt(appsOpens.expires, now)).run();
        const ticket = Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString("base64url");
        await ctx.db.insert(appsOpens).values({ ticket, app: app.id, account: who.id, price: paid.charged, at: now, expires: now + TICKET_MS }).run();
        return ok({ ticket, charged: paid.charged, balance: paid.balance, expires: new Date(now + TICKET_MS).toISOString() });
      },
    },
    {
      method: "POST",
      path: "/apps/:slug/store",
      async run(req, ctx) {
        if (onAppsHost(ctx.config, req)) return appsHostOnly();
        const app = await find(ctx.db, ctx.params.slug);
        const who = ctx.caller.account;
        if (!who) throw unauthenticated("sign in to keep this app's data on the instance");
        if (!(await hasGrant(ctx.db, app, who.id, STORE_GRANT))) throw forbidden(`you have not allowed the app "${app.slug}" to keep its data in your account`);
        const body = (await jsonBody(req)) as StoreRequest;
        return ok(await storeOp(ctx.db, ctx.lock, app.id, who.id, body, ctx.clock.now().getTime()));
      },
    },
    {
      method: "POST",
      path: "/apps/:slug/allow",
      async run(req, ctx) {
        if (onAppsHost(ctx.config, req)) return appsHostOnly();
        const app = await find(ctx.db, ctx.params.slug);
        const who = ctx.caller.account;
        if (!who) throw unauthenticated("sign in to let an app use your account");
        const body = await jsonBody(req);
        const method = body.method;
        if (typeof method !== "string" || !(OWN_GRANTS.includes(method) || ctx.methods.get(method)))
          throw invalid("method", `method must be ${OWN_GRANTS.map((g) => `"${g}"`).join(", ")} or one of the instance's methods as "service/method" (got ${JSON.stringify(method)})`);
        const where = and(eq(appsGrants.app, app.id), eq(appsGrants.account, who.id), eq(appsGrants.method, method));
        if (body.allow === false) await ctx.db.delete(appsGrants).where(where).run();
        else await ctx.db.insert(appsGrants).values({ app: app.id, account: who.id, method, at: ctx.clock.now().getTime() }).onConflictDoNothing().run();
        return ok({ method, allowed: body.allow !== false });
      },
    },
  ],
  async start(ctx) {
    // Read first: a start that finds the starters in place opens no write, so an instance starts on a read-only data folder.
    const seeded = async (db: Db) => !!(await db.select({ id: apps.id }).from(apps).where(eq(apps.starter, true)).limit(1).get());
    if (await seeded(ctx.db)) return;
    await ctx.writes(async (db) => {
      if (await seeded(db)) return;
      for (const s of STARTERS) {
        // A starter's slug taken (by an app, or by another instance seeding at the same moment) keeps what holds it.
        if (await isTaken(db, s.slug)) continue;
        // The starters' icons are shipped as sanitiseIcon leaves them (test/apps/apps.test.ts holds them to it): a first start need not load sanitize-html and postcss for them.
        await tryInsert(ctx, db, { ...s, owner: null, ownerName: "Hearth", icon: s.icon, tags: normaliseTags(s.tags), price: 0, starter: true });
      }
    });
  },
});

async function listApps(ctx: Ctx, query: string, tag: string): Promise<Listed[]> {
  const t = tag.trim().toLowerCase().replace(/^#/, "");
  const hasTag = (a: Listed) => !t || tagList(a.tags).includes(t);
  if (query.trim()) {
    const hits = await ctx.index.search({ query, kind: "app", owner: "public", limit: 200 });
    if (hits.length === 0) return [];
    const rows = new Map((await ctx.db.select(listed).from(apps).where(inArray(apps.id, hits.map((h) => h.ref))).all()).map((a) => [a.id, a]));
    return hits.map((h) => rows.get(h.ref)).filter((a): a is Listed => !!a && hasTag(a)).slice(0, 50);
  }
  const rows = await ctx.db
    .select(listed)
    .from(apps)
    .where(t ? like(apps.tags, `%${t}%`) : undefined)
    .orderBy(desc(apps.created), desc(apps.slug))
    .limit(t ? 500 : 50)
    .all();
  return rows.filter(hasTag).slice(0, 50);
}

async function tagCounts(db: Db): Promise<{ tag: string; count: number }[]> {
  const counts = new Map<string, number>();
  for (const r of await db.select({ tags: apps.tags }).from(apps).all()) for (const t of tagList(r.tags)) counts.set(t, (counts.get(t) ?? 0) + 1);
  return [...counts].map(([tag, count]) => ({ tag, count })).sort((a, b) => b.count - a.count || a.tag.localeCompare(b.tag)).slice(0, 40);
}
