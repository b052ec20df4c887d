// Discovers plugins, validates their manifests and builds the method table
// that every surface derives from.
import { TypeGuard, type TObject, type TSchema } from "@sinclair/typebox";
import { TypeCompiler, type TypeCheck } from "@sinclair/typebox/compiler";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import type { MigrationSet } from "./db/migrate.ts";
import { readMigrations } from "./db/migrate.ts";
import { checkOwnTables } from "./db/owntables.ts";
import { getTableName, is } from "drizzle-orm";
import { SQLiteTable } from "drizzle-orm/sqlite-core";
import { hasProvider, providerNamed, providerSettings } from "./upstream/providers.ts";
import { coreSettings } from "../config/defaults.ts";
import { classesOf, CLASS_NAMES, type MethodClasses, type MethodDef, type PluginDef } from "./plugin.ts";
import { hasDefaults } from "./validate.ts";
import { RESERVED_MY_NAMES } from "./views/reserved.ts";


export interface MethodEntry {
  service: string;
  name: string;
  /** "<service>/<method>" */
  path: string;
  /** "<service>_<method>" */
  tool: string;
  def: MethodDef<TObject, unknown>;
  /** What it does beyond read or write (destructive, outbound, untrusted, costs), as declared or derived from its price. */
  classes: MethodClasses;
  /** The compiled validator, made on first use. */
  readonly check: TypeCheck<TObject>;
  argNames: string[];
  required: string[];
  /** Whether any argument declares a default to fill in. */
  withDefaults: boolean;
  /**
   * The arguments as every surface publishes them (MCP inputSchema, OpenAPI
   * request body, the agent's tool parameters): plain JSON Schema whose
   * `required` is `required` above, made on first use.
   */
  readonly schema: Record<string, unknown>;
  plugin: LoadedPlugin;
}

export interface LoadedPlugin {
  def: PluginDef;
  file: string;
  builtin: boolean;
  migrations: MigrationSet | null;
  methods: MethodEntry[];
  /** The tables its migrations may touch, when it declares them (every drop-in with migrations does). */
  tables: string[] | null;
  /** Providers ctx.http may reach for it. */
  providers: Set<string>;
  /** Settings its ctx.config holds: its own, those it names, its providers'. Filled in once every plugin is loaded. */
  settings: Set<string>;
}

export class ManifestError extends Error {
  constructor(
    readonly file: string,
    readonly field: string,
    reason: string,
  ) {
    super(`invalid plugin manifest ${file}: ${field}: ${reason}`);
  }
}

const NAME = /^[a-z][a-z0-9]{0,31}$/;
/** Owners of the core's tables (hearth_migrations, sqlite_*, upstream_cache, …): no drop-in takes these names. */
const RESERVED = ["core", "hearth", "sqlite", "upstream", "scheduler", "ai", "home", "mail", "pay", "search", "auth"];
const METHOD = /^[a-z][a-z0-9_]{0,47}$/;
const SCREEN = /^[a-z][a-z0-9-]{0,31}$/;

export function validateManifest(file: string, p: unknown, folder?: string): asserts p is PluginDef {
  const fail = (field: string, reason: string): never => {
    throw new ManifestError(file, field, reason);
  };
  if (!p || typeof p !== "object") fail("default export", "must be a plugin made with definePlugin({...})");
  const m = p as Record<string, unknown>;
  if (typeof m.name !== "string" || !NAME.test(m.name)) fail("name", "must be a lowercase service name (a-z, 0-9, starting with a letter)");
  if (folder !== undefined && m.name !== folder) fail("name", `must equal its folder name "${folder}" (got "${m.name}")`);
  if (typeof m.description !== "string" || !m.description.trim()) fail("description", "must be a non-empty string");
  if (m.needs !== undefined) {
    if (!Array.isArray(m.needs)) fail("needs", "must be an array of capability names");
    for (const n of m.needs as unknown[]) if (typeof n !== "string" || !/^[a-z][A-Za-z0-9]*$/.test(n)) fail("needs", `${JSON.stringify(n)} is not a capability name`);
  }
  if (m.provides !== undefined) {
    const { capabilities: caps, views } = (m.provides ?? {}) as { capabilities?: unknown; views?: unknown };
    if (!m.provides || typeof m.provides !== "object" || (caps !== undefined && (!caps || typeof caps !== "object")))
      fail("provides", "must be { capabilities?: { name: (scope) => value }, views?: [...] }");
    if (views !== undefined && !Array.isArray(views)) fail("provides.views", "must be an array of view sources");
    ((views ?? []) as Record<string, unknown>[]).forEach((v, i) => {
      if (typeof v?.views !== "function" || typeof v?.read !== "function") fail(`provides.views[${i}]`, "must have views(host) and read(host, uri)");
    });
    for (const [k, f] of Object.entries((caps ?? {}) as Record<string, unknown>)) {
      if (!/^[a-z][A-Za-z0-9]*$/.test(k)) fail(`provides.capabilities.${k}`, "capability names are camelCase, starting with a lowercase letter");
      if (typeof f !== "function") fail(`provides.capabilities.${k}`, "must be a function of the call's scope");
    }
  }
  if (m.config !== undefined) {
    if (!m.config || typeof m.config !== "object") fail("config", "must be an object of settings");
    for (const [k, s] of Object.entries(m.config as Record<string, unknown>)) {
      const st = s as Record<string, unknown>;
      if (!/^[A-Z][A-Z0-9_]*$/.test(k)) fail(`config.${k}`, "setting names are UPPER_SNAKE_CASE");
      if (!st || typeof st.default !== "string" || typeof st.description !== "string") fail(`config.${k}`, "needs a string default and description");
    }
  }
  if (m.settings !== undefined) {
    if (!Array.isArray(m.settings)) fail("settings", "must be an array of setting names");
    for (const k of m.settings as unknown[]) if (typeof k !== "string" || !/^[A-Z][A-Z0-9_]*$/.test(k)) fail("settings", `${JSON.stringify(k)} is not an UPPER_SNAKE_CASE setting name`);
  }
  if (m.providers !== undefined) {
    if (!Array.isArray(m.providers)) fail("providers", "must be an array of provider names or defineProvider({...}) results");
    for (const p of m.providers as unknown[]) {
      const name = typeof p === "string" ? p : (p as { name?: unknown })?.name;
      if (typeof name !== "string" || !/^[A-Z][A-Z0-9_]*$/.test(name)) fail("providers", `${JSON.stringify(p)} is not a provider name or definition`);
    }
  }
  if (m.tables !== undefined) {
    if (!m.tables || typeof m.tables !== "object") fail("tables", "must be an object of drizzle tables ({ bookmarks })");
    for (const [k, t] of Object.entries(m.tables as Record<string, unknown>)) if (!is(t, SQLiteTable)) fail(`tables.${k}`, "must be a table made with sqliteTable(...)");
  }
  if (m.migrations !== undefined && (typeof m.migrations !== "string" || !m.migrations || m.migrations.startsWith("/") || m.migrations.split(/[\\/]/).includes("..")))
    fail("migrations", "must be a folder inside the plugin's folder");
  if (m.screens !== undefined) {
    if (!m.screens || typeof m.screens !== "object" || Array.isArray(m.screens)) fail("screens", "must be an object of screens by key ({ list: { title, module } })");
    const views = Object.values(m.screens as Record<string, Record<string, unknown>>).some((sc) => sc?.module !== undefined);
    if (views && (RESERVED_MY_NAMES as readonly string[]).includes(m.name as string))
      fail("screens", `a service named "${m.name}" cannot bring screens: /my/${m.name} is the instance's own (${RESERVED_MY_NAMES.map((n) => `/my/${n}`).join(", ")} are); rename the service`);
    for (const [k, sc] of Object.entries(m.screens as Record<string, Record<string, unknown>>)) {
      const at = `screens.${k}`;
      if (!SCREEN.test(k)) fail(at, "screen keys are a-z, 0-9 and -, starting with a letter, at most 32");
      if (!sc || typeof sc.title !== "string" || !sc.title.trim() || sc.title.length > 40) fail(`${at}.title`, "must be a name of 1-40 characters");
      if ((sc.module === undefined) === (sc.href === undefined)) fail(at, "must have either module (a view in the plugin's folder) or href (a page of its own)");
      if (sc.module !== undefined && (typeof sc.module !== "string" || !/\.(ts|tsx|js|jsx)$/.test(sc.module) || sc.module.startsWith("/") || sc.module.split(/[\\/]/).includes("..")))
        fail(`${at}.module`, "must be a .ts or .js file inside the plugin's folder (\"screens/list.ts\")");
      if (sc.href !== undefined && (typeof sc.href !== "string" || !(sc.href === `/${m.name}` || sc.href.startsWith(`/${m.name}/`) || sc.href.startsWith(`/${m.name}?`))))
        fail(`${at}.href`, `must be a page of this plugin, starting with "/${m.name}"`);
      if (sc.order !== undefined && typeof sc.order !== "number") fail(`${at}.order`, "must be a number");
      if (sc.reads !== undefined) {
        if (sc.module === undefined || !Array.isArray(sc.reads)) fail(`${at}.reads`, "must be a list of { method, args? } for a screen with a module");
        for (const [i, r] of (sc.reads as Record<string, unknown>[]).entries()) {
          const def = (m.methods as Record<string, { kind?: string; price?: unknown }> | undefined)?.[r?.method as string];
          if (!def || def.kind !== "read" || (def.price !== undefined && def.price !== 0))
            fail(`${at}.reads.${i}.method`, `must name a free read method of this plugin (got "${r?.method}")`);
          if (r.args !== undefined && (!r.args || typeof r.args !== "object" || Array.isArray(r.args))) fail(`${at}.reads.${i}.args`, "must be an object of arguments");
        }
      }
    }
  }
  if (m.find !== undefined) {
    const f = m.find as Record<string, unknown>;
    if (!f || typeof f.title !== "string" || typeof f.method !== "string" || typeof f.args !== "function" || typeof f.read !== "function")
      fail("find", "must be { title, method, args(query), read(result, query) }");
    const def = (m.methods as Record<string, { kind?: string }> | undefined)?.[f.method as string];
    if (!def || def.kind !== "read") fail("find.method", `must name a read method of this plugin (got "${f.method}")`);
  }
  if (m.routes !== undefined) {
    if (!Array.isArray(m.routes)) fail("routes", "must be an array of { method, path, run }");
    (m.routes as Record<string, unknown>[]).forEach((r, i) => {
      if (r?.method !== "GET" && r?.method !== "POST" && r?.method !== "*") fail(`routes[${i}].method`, 'must be "GET", "POST" or "*"');
      const path = r.path as string;
      if (typeof r.path !== "string" || !(path === `/${m.name}` || path.startsWith(`/${m.name}/`) || path.startsWith(`/${m.name}.`)))
        fail(`routes[${i}].path`, `must start with "/${m.name}"`);
      if (path.startsWith("/api/")) fail(`routes[${i}].path`, "may not be under /api");
      if (typeof r.run !== "function") fail(`routes[${i}].run`, "must be a function (req, ctx) => Response");
      if (r.sandbox !== undefined && typeof r.sandbox !== "boolean") fail(`routes[${i}].sandbox`, "must be true or false");
      if (r.streams !== undefined && (!Array.isArray(r.streams) || r.streams.some((v) => typeof v !== "string" || !/^[A-Z]+$/.test(v)))) fail(`routes[${i}].streams`, 'must be a list of HTTP verbs, such as ["PUT"]');
      if (r.streams !== undefined && r.method !== "*") fail(`routes[${i}].streams`, 'only a "*" route reads its bodies itself');
      if (r.sandbox && r.method !== "GET") fail(`routes[${i}].sandbox`, "only a GET route serves a document on the sandbox origin");
      if (r.sandbox && !((m.needs as unknown[] | undefined) ?? []).includes("sandbox")) fail("needs", 'a plugin with sandbox routes needs "sandbox"');
    });
  }
  if (m.sandboxHost !== undefined && (typeof m.sandboxHost !== "string" || !Object.hasOwn((m.config as object | undefined) ?? {}, m.sandboxHost)))
    fail("sandboxHost", "must name one of the plugin's own settings (config)");
  if (m.dav !== undefined) {
    const d = m.dav as Record<string, unknown>;
    if (d?.type !== "calendar" && d?.type !== "addressbook") fail("dav.type", 'must be "calendar" or "addressbook"');
    if (d.type === "calendar" && d.component !== "VEVENT" && d.component !== "VTODO") fail("dav.component", 'a calendar holds "VEVENT" or "VTODO"');
    for (const f of ["list", "render", "put", "remove"]) if (typeof d[f] !== "function") fail(`dav.${f}`, "must be a function");
    // A client's change goes through dispatch, like an API call: the collection reaches its methods with ctx.call.
    if (!((m.needs as unknown[] | undefined) ?? []).includes("call")) fail("needs", 'a plugin with a dav collection needs "call", so changes from clients go through dispatch');
  }
  for (const hook of ["start", "stop"]) if (m[hook] !== undefined && typeof m[hook] !== "function") fail(hook, "must be a function");
  if (m.requires !== undefined) {
    if (!Array.isArray(m.requires)) fail("requires", "must be an array of service names");
    for (const r of m.requires as unknown[])
      if (typeof r !== "string" || !(r === "*" || NAME.test(r.replace(/\?$/, "")))) fail("requires", `${JSON.stringify(r)} is not a service name ("name", "name?" when optional, or "*")`);
    if ((m.requires as unknown[]).length && !((m.needs as unknown[] | undefined) ?? []).includes("call")) fail("needs", 'a plugin that requires other services needs "call" to reach them');
  }
  const ownMethod = (field: string, v: unknown) => {
    if (typeof v !== "string" || !(m.methods && typeof m.methods === "object" && v in (m.methods as object))) fail(field, `must name one of the plugin's own methods (got ${JSON.stringify(v)})`);
  };
  if (m.card !== undefined) {
    const c = m.card as Record<string, unknown>;
    if (!c || typeof c !== "object") fail("card", "must be an object { title, method, render }");
    if (typeof c.title !== "string" || !c.title.trim()) fail("card.title", "must be a non-empty string");
    ownMethod("card.method", c.method);
    for (const f of ["render"]) if (typeof c[f] !== "function") fail(`card.${f}`, "must be a function");
    for (const f of ["args", "zone"]) if (c[f] !== undefined && typeof c[f] !== "function") fail(`card.${f}`, "must be a function");
    if (c.order !== undefined && (typeof c.order !== "number" || !Number.isFinite(c.order))) fail("card.order", "must be a number");
    if (c.optIn !== undefined && (typeof c.optIn !== "string" || !c.optIn.trim())) fail("card.optIn", "must be the label of the choice to show it");
    if (c.choice !== undefined) {
      const ch = c.choice as Record<string, unknown>;
      const props = ((m.methods as Record<string, { args?: { properties?: object } }>)[c.method as string]?.args?.properties ?? {}) as object;
      if (!ch || typeof ch.arg !== "string" || !(ch.arg in props)) fail("card.choice.arg", `must name an argument of ${m.name}/${String(c.method)}`);
      if (typeof ch.label !== "string" || !ch.label.trim()) fail("card.choice.label", "must be a non-empty string");
    }
  }
  if (m.cli !== undefined) {
    if (!m.cli || typeof m.cli !== "object") fail("cli", "must be an object of commands by name");
    for (const [k, c] of Object.entries(m.cli as Record<string, Record<string, unknown>>)) {
      if (!/^[a-z][a-z0-9-]{0,31}$/.test(k)) fail(`cli.${k}`, "command names are lowercase words (a-z, 0-9, -)");
      if (typeof c?.summary !== "string" || typeof c.usage !== "string") fail(`cli.${k}`, "needs a summary and a usage string");
      if (typeof c.run !== "function") fail(`cli.${k}.run`, "must be a function (argv, ctx) => exit code");
    }
  }
  if (m.integration !== undefined) {
    const g = m.integration as Record<string, unknown>;
    if (typeof g?.label !== "string" || !g.label.trim()) fail("integration.label", "must be a non-empty string");
    if (!Array.isArray(g.settings) || !g.settings.length || !g.settings.every((k) => typeof k === "string" && k in ((m.config as object) ?? {})))
      fail("integration.settings", "must name settings the plugin declares in config");
  }
  if (m.geocoder !== undefined) {
    const g = m.geocoder as Record<string, unknown>;
    ownMethod("geocoder.method", g?.method);
    if (typeof g.arg !== "string" || typeof g.read !== "function") fail("geocoder", "needs the argument taking the text (arg) and read(result)");
  }
  if (!m.methods || typeof m.methods !== "object" || Object.keys(m.methods).length === 0) fail("methods", "must declare at least one method");
  for (const [name, def] of Object.entries(m.methods as Record<string, unknown>)) {
    const at = `methods.${name}`;
    if (!METHOD.test(name)) fail(at, "method names are lowercase words (a-z, 0-9, _)");
    const d = def as Record<string, unknown>;
    if (!d || typeof d !== "object") fail(at, "must be made with read({...}) or write({...})");
    if (d.kind !== "read" && d.kind !== "write") fail(`${at}.kind`, 'must be "read" or "write" (use read() or write())');
    if (typeof d.description !== "string" || !d.description.trim()) fail(`${at}.description`, "must be a non-empty string");
    if (!TypeGuard.IsObject(d.args as TSchema)) fail(`${at}.args`, "must be a TypeBox T.Object({...})");
    if (d.access !== "public" && d.access !== "account") fail(`${at}.access`, 'must be "public" or "account"');
    if (d.price !== undefined && typeof d.price !== "function" && !(typeof d.price === "number" && d.price >= 0 && Number.isFinite(d.price)))
      fail(`${at}.price`, "must be a non-negative number of credits or a function of the arguments");
    if (d.irreversible !== undefined && typeof d.irreversible !== "boolean") fail(`${at}.irreversible`, "must be true or false");
    if (typeof d.run !== "function") fail(`${at}.run`, "must be a function (args, ctx) => result");
    for (const flag of ["openWorld", "withheldFromAgent", ...CLASS_NAMES])
      if (d[flag] !== undefined && typeof d[flag] !== "boolean") fail(`${at}.${flag}`, `must be true or false (got ${JSON.stringify(d[flag])})`);
    if (d.destructive === true && d.kind === "read") fail(`${at}.destructive`, "a read method removes and overwrites nothing: make it a write() or drop destructive");
    if (d.costs === false && (typeof d.price === "function" || (typeof d.price === "number" && d.price > 0)))
      fail(`${at}.costs`, "a priced method costs money: drop costs: false or the price");
  }
}

/**
 * TypeBox keeps its markers in symbols, which a JSON round trip drops. A
 * TypeBox property with a default but without T.Optional still lands in
 * `required`, though validation fills it in; callers are told only what they
 * must send. Unknown arguments are refused by dispatch, so the schema says so
 * too unless the plugin chose otherwise.
 */
function publishedSchema(args: TObject, required: string[]): Record<string, unknown> {
  const schema = JSON.parse(JSON.stringify(args)) as Record<string, unknown>;
  schema.type = "object";
  if (required.length) schema.required = [...required];
  else delete schema.required;
  if (schema.additionalProperties === undefined) schema.additionalProperties = false;
  return schema;
}

export class Registry {
  readonly plugins = new Map<string, LoadedPlugin>();
  readonly methods = new Map<string, MethodEntry>();
  /** The same entries by service, then method: finding one builds no "service/method" string. */
  private byService = new Map<string, Map<string, MethodEntry>>();
  /** Names no drop-in may take: the core's own, and every core module's migration owner. */
  readonly reserved: Set<string>;
  constructor(moduleOwners: Iterable<string> = []) {
    this.reserved = new Set([...RESERVED, ...moduleOwners]);
  }

  add(def: unknown, file: string, opts: { builtin: boolean; folder?: string; migrations: MigrationSet | null }) {
    validateManifest(file, def, opts.folder);
    const existing = this.plugins.get(def.name);
    if (existing) throw new ManifestError(file, "name", `service "${def.name}" is already provided by ${existing.file}`);
    const tables = Object.values(def.tables ?? {}).map((t) => getTableName(t as SQLiteTable));
    if (!opts.builtin) {
      // Tables are named for the plugin (plugin names hold no "_"), so drop-ins written apart never meet over one.
      const foreign = tables.find((t) => t !== def.name && !t.startsWith(`${def.name}_`));
      if (foreign) throw new ManifestError(file, "tables", `plugin "${def.name}" declares table "${foreign}": a drop-in's tables are named "${def.name}" or "${def.name}_…"`);
      if (this.reserved.has(def.name)) throw new ManifestError(file, "name", `"${def.name}" names the core's own tables and records`);
    }
    if (opts.migrations && (def.tables || !opts.builtin)) {
      if (!def.tables) throw new ManifestError(file, "tables", `plugin "${def.name}" ships migrations but declares no tables: name the tables they create`);
      const bad = checkOwnTables(opts.migrations, tables);
      if (bad) throw new ManifestError(file, `migrations/${bad.tag}.sql`, `plugin "${def.name}": ${bad.name} ${bad.reason} (tables: ${tables.join(", ") || "none"})`);
    }
    const providers = new Set((def.providers ?? []).map((p) => (typeof p === "string" ? p : p.name)));
    const plugin: LoadedPlugin = { def, file, builtin: opts.builtin, migrations: opts.migrations, methods: [], tables: def.tables ? tables : null, providers, settings: new Set() };
    for (const [name, m] of Object.entries(def.methods).sort(([a], [b]) => a.localeCompare(b))) {
      const args = m.args as TObject;
      // Checked for shape now; compiled on first call, since compiling every validator at start
      // cost start-up time and memory for methods an instance may never be asked.
      // (TypeGuard.IsObject in validateManifest already vouched for its shape.)
      let compiled: TypeCheck<TObject> | undefined;
      let published: Record<string, unknown> | undefined;
      const entry: MethodEntry = {
        service: def.name,
        name,
        path: `${def.name}/${name}`,
        tool: `${def.name}_${name}`,
        def: m as MethodDef<TObject, unknown>,
        classes: classesOf(m),
        get check() {
          if (!compiled) {
            try {
              compiled = TypeCompiler.Compile(args);
            } catch (e) {
              throw new ManifestError(file, `methods.${name}.args`, `schema does not compile: ${(e as Error).message}`);
            }
          }
          return compiled;
        },
        argNames: Object.keys(args.properties),
        // An argument with a default is optional to callers: validation fills it in.
        required: ((args.required as string[] | undefined) ?? []).filter((n) => !("default" in (args.properties[n] as object))),
        withDefaults: hasDefaults(args),
        get schema() {
          return (published ??= publishedSchema(args, this.required));
        },
        plugin,
      };
      plugin.methods.push(entry);
      this.methods.set(entry.path, entry);
      let own = this.byService.get(entry.service);
      if (!own) this.byService.set(entry.service, (own = new Map()));
      own.set(entry.name, entry);
    }
    this.plugins.set(def.name, plugin);
  }

  get(service: string, method: string): MethodEntry | undefined {
    return this.byService.get(service)?.get(method);
  }

  /** Every method, by service then name: the order every listing uses. */
  list(): MethodEntry[] {
    return [...this.methods.values()].sort((a, b) => a.path.localeCompare(b.path));
  }

  services(): string[] {
    return [...this.plugins.keys()].sort();
  }
}

/** Plugin folders inside a directory (each holding index.ts), or the directory itself when it is one. */
export function pluginFolders(dir: string): string[] {
  const abs = resolve(dir);
  if (!existsSync(abs)) throw new ManifestError(abs, "HEARTH_PLUGINS", "folder does not exist");
  if (existsSync(join(abs, "index.ts")) || existsSync(join(abs, "index.js"))) return [abs];
  return readdirSync(abs)
    .filter((n) => !n.startsWith(".") && statSync(join(abs, n)).isDirectory())
    .filter((n) => existsSync(join(abs, n, "index.ts")) || existsSync(join(abs, n, "index.js")))
    .sort()
    .map((n) => join(abs, n));
}

let sdkServed = false;
/** Lets drop-in plugins import "hearth" (and hearth/dav, hearth/pages, hearth/mail) and "@sinclair/typebox" wherever their folder is. */
export async function serveSdk() {
  if (sdkServed) return;
  sdkServed = true;
  const sdk = await import("./sdk.ts");
  const entries = { "hearth/dav": await import("./sdk/dav.ts"), "hearth/pages": await import("./sdk/pages.ts"), "hearth/mail": await import("./sdk/mail.ts") };
  const typebox = await import("@sinclair/typebox");
  Bun.plugin({
    name: "hearth-sdk",
    setup(build) {
      build.module("hearth", () => ({ exports: { ...sdk }, loader: "object" }));
      for (const [name, mod] of Object.entries(entries)) build.module(name, () => ({ exports: { ...mod }, loader: "object" }));
      build.module("@sinclair/typebox", () => ({ exports: { ...typebox }, loader: "object" }));
    },
  });
}

/**
 * Why a plugin's files did not load. A syntax error comes from the
 * transpiler as a list of build errors ("4 errors building …"), each with
 * its place: the first is named by file, line and column, with its line.
 */
function whereItFailed(e: unknown): string {
  const errors = e instanceof AggregateError ? e.errors : [e];
  const first = errors.find((x) => (x as { position?: unknown })?.position) as { message: string; position: { file: string; line: number; column: number; lineText?: string } } | undefined;
  if (!first) return e instanceof Error ? e.message : String(e);
  const { file, line, column, lineText } = first.position;
  const more = errors.length > 1 ? ` (${errors.length - 1} more error${errors.length > 2 ? "s" : ""} after it)` : "";
  return `${file}:${line}:${column}: ${first.message}${more}${lineText ? `\n  ${line} | ${lineText}` : ""}`;
}

export async function loadFolder(reg: Registry, folder: string, builtin: boolean) {
  if (!builtin) await serveSdk();
  const file = existsSync(join(folder, "index.ts")) ? join(folder, "index.ts") : join(folder, "index.js");
  let mod: { default?: unknown };
  try {
    mod = await import(file);
  } catch (e) {
    throw new ManifestError(file, "import", whereItFailed(e));
  }
  const name = folder.split("/").pop()!;
  // A folder outside the plugin's is refused by validateManifest; it is not read first.
  const dir = (mod.default as { migrations?: unknown } | undefined)?.migrations;
  const inside = typeof dir === "string" && dir !== "" && !dir.startsWith("/") && !dir.split(/[\\/]/).includes("..");
  reg.add(mod.default, file, { builtin, folder: name, migrations: readMigrations(join(folder, inside ? dir : "migrations")) });
}

/**
 * A drop-in reads no setting a built-in plugin owns (its secrets: HEARTH_SECRET,
 * TWILIO_AUTH_TOKEN), and claims no core or built-in setting as its own or as
 * its provider's: a core setting it reads is one it names in `settings`, where
 * the owner sees it.
 */
function checkDropInSettings(p: LoadedPlugin, ownerOf: Map<string, string>) {
  const named = new Set(p.def.settings ?? []);
  // A declared provider's address, timeout and rate cap come with it, whoever documents them.
  const derived = new Set([...p.providers].flatMap((n) => [`${n}_URL`, `${n}_TIMEOUT_MS`, `${n}_RATE`]));
  for (const k of p.settings) {
    if (derived.has(k)) continue;
    const owner = ownerOf.get(k);
    if (owner && owner !== p.def.name)
      throw new ManifestError(p.file, named.has(k) ? "settings" : "config", `plugin "${p.def.name}" may not read ${k}: it is a setting of plugin "${owner}"`);
    if (k in coreSettings && !named.has(k))
      throw new ManifestError(p.file, "config", `plugin "${p.def.name}" may not declare ${k} as its own or its provider's: it is a core setting (name it in settings to read it)`);
  }
}

/** Every capability a plugin needs is provided, by a core module or a plugin, and by only one. */
function checkCapabilities(reg: Registry, core: Iterable<string>) {
  const known = new Map<string, string>([...core].map((n) => [n, "the core"]));
  for (const p of reg.plugins.values())
    for (const n of Object.keys(p.def.provides?.capabilities ?? {})) {
      const other = known.get(n);
      if (other) throw new ManifestError(p.file, `provides.capabilities.${n}`, `plugin "${p.def.name}" provides "${n}", which ${other === "the core" ? other : `plugin "${other}"`} already provides`);
      known.set(n, p.def.name);
    }
  for (const p of reg.plugins.values())
    for (const n of p.def.needs ?? [])
      if (!known.has(n)) throw new ManifestError(p.file, "needs", `plugin "${p.def.name}" needs unknown capability ${JSON.stringify(n)} (known: ${[...known.keys()].join(", ")})`);
}

export interface BuiltinPlugin {
  def: unknown;
  file: string;
  folder: string;
  migrations: MigrationSet | null;
}

/**
 * Builds the registry: built-in plugins (from the plugins folder, or embedded
 * in the single binary), then every drop-in folder named by HEARTH_PLUGINS.
 */
export async function buildRegistry(opts: {
  pluginsDir?: string;
  embedded?: BuiltinPlugin[];
  extra?: string;
  /** The capabilities the core modules provide; when given, every plugin's `needs` is checked against them and those plugins provide. */
  capabilities?: Iterable<string>;
  /** The owners of the core modules' migrations: their tables and records are theirs, so no drop-in takes these names. */
  moduleOwners?: Iterable<string>;
  /** The commands of `hearth` itself (serve, help, token, backup, …): a plugin's command may not take one's name, which the CLI would never reach. */
  commands?: Iterable<string>;
}): Promise<Registry> {
  const reg = new Registry(opts.moduleOwners);
  if (opts.embedded) for (const p of opts.embedded) reg.add(p.def, p.file, { builtin: true, folder: p.folder, migrations: p.migrations });
  else if (opts.pluginsDir) for (const f of pluginFolders(opts.pluginsDir)) await loadFolder(reg, f, true);
  for (const dir of (opts.extra ?? "").split(":").filter(Boolean)) for (const f of pluginFolders(dir)) await loadFolder(reg, f, false);
  // Providers are checked once every plugin has loaded, since a plugin may use one another module defines.
  const ownerOf = new Map<string, string>();
  for (const p of reg.plugins.values())
    for (const k of Object.keys(p.def.config ?? {})) {
      const other = ownerOf.get(k);
      if (other && !p.builtin) throw new ManifestError(p.file, `config.${k}`, `plugin "${p.def.name}" may not declare ${k}: it is a setting of plugin "${other}"`);
      if (!other) ownerOf.set(k, p.def.name);
    }
  const commands = new Map<string, string>();
  const core = new Set(opts.commands ?? []);
  for (const p of reg.plugins.values()) {
    for (const r of p.def.requires ?? [])
      if (r !== "*" && !r.endsWith("?") && !reg.plugins.has(r)) throw new ManifestError(p.file, "requires", `plugin "${p.def.name}" requires the service "${r}", which this instance does not have`);
    for (const c of Object.keys(p.def.cli ?? {})) {
      if (core.has(c)) throw new ManifestError(p.file, `cli.${c}`, `plugin "${p.def.name}" adds the command "${c}", which is a command of hearth itself: name it otherwise`);
      const other = commands.get(c);
      if (other || reg.plugins.has(c)) throw new ManifestError(p.file, `cli.${c}`, `plugin "${p.def.name}" adds the command "${c}", which ${other ? `plugin "${other}" adds too` : "is a service's name"}`);
      commands.set(c, p.def.name);
    }
    for (const name of p.providers)
      if (!hasProvider(name)) throw new ManifestError(p.file, "providers", `plugin "${p.def.name}" names provider "${name}", which nothing defines (defineProvider)`);
    p.settings = new Set([...Object.keys(p.def.config ?? {}), ...(p.def.settings ?? []), ...[...p.providers].flatMap((n) => providerSettings(providerNamed(n)))]);
    if (!p.builtin) checkDropInSettings(p, ownerOf);
  }
  if (opts.capabilities) checkCapabilities(reg, opts.capabilities);
  return reg;
}
