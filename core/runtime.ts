// The running instance: configuration, store, registry and the capability
// factories, with start-up (migrations, plugin start hooks) and shutdown.
import { join } from "node:path";
import { blobBackend, makeBlobs, sweepBlobTemps } from "./blobs.ts";
import { newCall, type Call } from "./call.ts";
import { capabilityFactories, provideCapability, runtimeSetups, type CapabilityScope } from "./capabilities.ts";
import { coreSettings, dataFolder, resolveConfig } from "./config.ts";
import { Store } from "./db/index.ts";
import { makeIndex } from "./db/fts.ts";
import { applyMigrations, moduleMigrations, readMigrations, type MigrationSet } from "./db/migrate.ts";
import { activity } from "./db/schema.ts";
import { dispatch } from "./dispatch.ts";
import { notConfigured, unauthenticated } from "./errors.ts";
import { makeLogger } from "./log.ts";
import { closeDataDir, privateFile } from "./private.ts";
import type { Blobs, Caller, Clock, Ctx, Db, Logger } from "./plugin.ts";
import { buildRegistry, ManifestError, type BuiltinPlugin, type Registry } from "./registry.ts";
import { checkAgainstDatabase } from "./db/owntables.ts";
import { intersectScopes, TokenCache } from "./auth/tokens.ts";
import "./modules.ts";

/** Set by the single binary's entry: plugins and migrations compiled in, since there is no plugins folder beside it. */
let embeddedBuild: { plugins: BuiltinPlugin[]; coreMigrations: MigrationSet } | undefined;
export function setEmbeddedBuild(b: { plugins: BuiltinPlugin[]; coreMigrations: MigrationSet }) {
  embeddedBuild = b;
}

export const systemClock: Clock = { now: () => new Date() };

export interface RuntimeOptions {
  env?: Record<string, string | undefined>;
  clock?: Clock;
  /** Built-in plugins compiled into the binary; when absent they are read from pluginsDir. */
  embedded?: BuiltinPlugin[];
  embeddedCoreMigrations?: MigrationSet;
  pluginsDir?: string;
  logger?: Logger & { line(data: Record<string, unknown>): void };
}

/** A price or payment step filled in by the payments module; the default refuses priced calls from strangers. */
export interface Metering {
  /** The price in credits of this call, with the instance's overrides applied. */
  price?(entry: import("./registry.ts").MethodEntry, args: Record<string, unknown>, caller: Caller): number;
  /** Called before the handler runs; may throw 401/402/403. Returns what to charge on success. */
  before(scope: { rt: Runtime; entry: import("./registry.ts").MethodEntry; args: Record<string, unknown>; caller: Caller; price: number; baseUrl?: string }): unknown;
  /** Called after the handler succeeded, before commit: takes the payment in call.plan (network). Outside any lock for reads; inside the call's transaction for writes. */
  settle?(call: Call): Promise<void>;
  /** Called inside a write transaction after the handler (and settle) succeeded; records the charge. A throw undoes the call's writes. */
  commit?(call: Call): void | Promise<void>;
  /** Called when the call failed, so anything held for its plan is let go. */
  release?(call: Call): void;
}

/**
 * The registry and the resolved settings, without opening the data folder:
 * enough for commands that only list or call methods, which must not create
 * a data folder wherever they are run.
 */
export async function loadRegistry(opts: Pick<RuntimeOptions, "env" | "embedded" | "pluginsDir"> = {}): Promise<{ registry: Registry; config: Record<string, string> }> {
  const env = opts.env ?? process.env;
  const registry = await buildRegistry({
    embedded: opts.embedded ?? embeddedBuild?.plugins,
    pluginsDir: opts.pluginsDir ?? join(import.meta.dir, "..", "plugins"),
    extra: env.HEARTH_PLUGINS,
  });
  const settings = { ...coreSettings };
  for (const p of registry.plugins.values()) Object.assign(settings, p.def.config ?? {});
  return { registry, config: resolveConfig(settings, env) };
}

export class Runtime {
  readonly config: Record<string, string>;
  readonly dataDir: string;
  readonly store: Store;
  readonly blobs: Blobs;
  readonly clock: Clock;
  readonly log: Logger & { line(data: Record<string, unknown>): void };
  readonly tokens: TokenCache;
  metering: Metering | null = null;
  private started = false;

  private constructor(
    readonly registry: Registry,
    config: Record<string, string>,
    opts: RuntimeOptions,
  ) {
    this.config = config;
    this.dataDir = dataFolder(config);
    closeDataDir(this.dataDir);
    // SQLite gives its journal files the database file's mode, so it is made private first.
    privateFile(join(this.dataDir, "hearth.db"));
    this.store = new Store(join(this.dataDir, "hearth.db"));
    this.blobs = makeBlobs(blobBackend(config, this.dataDir), this.store, config);
    this.clock = opts.clock ?? systemClock;
    this.log = opts.logger ?? makeLogger(config.HEARTH_LOG);
    this.tokens = new TokenCache(this.store);
    this.coreMigrations = opts.embeddedCoreMigrations ?? embeddedBuild?.coreMigrations ?? readMigrations(join(import.meta.dir, "db", "migrations"));
    for (const setup of runtimeSetups) setup(this);
  }
  private coreMigrations: MigrationSet | null;

  static async create(opts: RuntimeOptions = {}): Promise<Runtime> {
    const { registry, config } = await loadRegistry(opts);
    return new Runtime(registry, config, opts);
  }

  /** Applies migrations: the core's first, then each plugin's. */
  migrate() {
    if (this.migrated) return;
    if (!this.coreMigrations) throw new Error("core migrations are missing");
    applyMigrations(this.store.writer, "core", this.coreMigrations);
    for (const m of moduleMigrations) applyMigrations(this.store.writer, m.owner, m.set);
    for (const p of this.registry.plugins.values()) {
      if (!p.migrations) continue;
      const tables = p.tables;
      const check = tables
        ? (tag: string, text: string) => {
            const bad = checkAgainstDatabase(this.store.writer, tag, text, tables);
            if (bad) throw new ManifestError(p.file, `migrations/${tag}.sql`, `plugin "${p.def.name}": ${bad.name} ${bad.reason} (tables: ${tables.join(", ")})`);
          }
        : undefined;
      applyMigrations(this.store.writer, p.def.name, p.migrations, check);
    }
    this.migrated = true;
  }
  private migrated = false;

  /** Migrates and runs plugin start hooks. */
  async start() {
    if (this.started) return;
    this.migrate();
    const swept = await sweepBlobTemps(this.dataDir);
    if (swept) this.log.warn("removed half-written blob files left by an earlier stop", { count: swept });
    for (const p of this.registry.plugins.values()) {
      if (p.def.start) await p.def.start(this.instanceCtx(p.def.name));
    }
    this.started = true;
  }

  private stopHooks: (() => void | Promise<void>)[] = [];

  /** Core modules that hold timers or sockets register here to be stopped before the store closes. */
  onStop(fn: () => void | Promise<void>) {
    this.stopHooks.push(fn);
  }

  async stop() {
    for (const p of this.registry.plugins.values()) await p.def.stop?.(this.instanceCtx(p.def.name));
    for (const fn of this.stopHooks.splice(0).reverse()) await fn();
    this.store.close();
  }

  /** A context acting as the instance itself, for start hooks and scheduled work. */
  instanceCtx(service: string): Ctx {
    return this.makeCtx(service, "instance", newCall({ account: null, scopes: "*", via: "local" }, { id: `start-${service}` }), "", "");
  }

  private protos = new Map<string, object>();
  private configs = new Map<string, Readonly<Record<string, string>>>();

  /**
   * The settings one plugin sees: those its manifest declares (its own
   * `config`, the `settings` it names, its providers'), never the others'
   * secrets. Reading one it did not declare is refused by name, so the
   * mistake shows on the first call rather than as an empty value.
   */
  pluginConfig(service: string): Readonly<Record<string, string>> {
    let view = this.configs.get(service);
    if (view) return view;
    const allowed = this.registry.plugins.get(service)!.settings;
    const all = this.config;
    const log = this.log;
    const visible = Object.freeze(Object.fromEntries(Object.entries(all).filter(([k]) => allowed.has(k))));
    view = new Proxy(visible, {
      get(target, key) {
        if (typeof key !== "string" || key in target || !/^[A-Z][A-Z0-9_]*$/.test(key)) return Reflect.get(target, key);
        if (allowed.has(key)) return undefined;
        log.error("plugin read an undeclared setting", { plugin: service, setting: key });
        throw notConfigured(`plugin "${service}" reads the setting ${key}, which its manifest does not declare: add it to the plugin's settings`);
      },
    });
    this.configs.set(service, view);
    return view;
  }

  /** Builds a handler's context for one call, holding exactly the capabilities its plugin declared. */
  makeCtx(service: string, kind: CapabilityScope["kind"], call: Call, method: string, baseUrl: string): Ctx {
    const { caller, id: requestId } = call;
    const plugin = this.registry.plugins.get(service)!;
    let proto = this.protos.get(service);
    if (!proto) {
      proto = makeProto(service, plugin.def.needs ?? []);
      this.protos.set(service, proto);
    }
    const ctx = Object.create(proto) as Record<string, unknown>;
    ctx.caller = caller;
    ctx.requestId = requestId;
    ctx.service = service;
    ctx.method = method;
    ctx.clock = this.clock;
    ctx.config = this.pluginConfig(service);
    ctx.log = this.log;
    ctx.baseUrl = this.config.HEARTH_PUBLIC_URL || baseUrl;
    ctx.price = 0;
    const scope: CapabilityScope = { rt: this, service, kind, call, caller, requestId, baseUrl: ctx.baseUrl as string };
    for (const need of plugin.def.needs ?? []) ctx[need] = capabilityFactories.get(need)!(scope);
    return ctx as unknown as Ctx;
  }
}

function makeProto(service: string, needs: string[]): object {
  const proto: PropertyDescriptorMap = {
    account: {
      get(this: Ctx) {
        const a = this.caller.account;
        if (!a) throw unauthenticated("this method needs an account: send a token");
        return a;
      },
    },
  };
  for (const name of capabilityFactories.keys()) {
    if (needs.includes(name)) continue;
    proto[name] = {
      get() {
        throw new Error(`plugin "${service}" uses ctx.${name} without declaring "${name}" in needs`);
      },
    };
  }
  return Object.create(null, proto);
}

// The core's own capabilities.
provideCapability("db", (s) => (s.kind === "read" ? s.rt.store.rdb : s.rt.store.wdb));
provideCapability("sqlite", (s) => (s.kind === "read" ? s.rt.store.reader : s.rt.store.writer));
provideCapability("blobs", (s) => s.rt.blobs);
provideCapability("index", (s) =>
  makeIndex(
    s.service,
    () => s.rt.store.writer,
    () => (s.kind === "read" ? s.rt.store.reader : s.rt.store.writer),
    (change) => {
      if (s.rt.store.inWrite()) return change();
      s.rt.store.write(change).catch((e) => s.rt.log.error("index write failed", { service: s.service, error: String(e) }));
    },
  ),
);
provideCapability("emit", (s) => (e: { type: string; text: string; url?: string; data?: Record<string, unknown> }) => {
  const row = { at: s.rt.clock.now().getTime(), service: s.service, type: e.type, text: e.text, url: e.url ?? null, data: e.data ? JSON.stringify(e.data) : null };
  if (s.kind === "write") s.rt.store.wdb.insert(activity).values(row).run();
  else void s.rt.store.write(() => s.rt.store.wdb.insert(activity).values(row).run());
});
provideCapability("writes", (s) => <T>(fn: (db: Db) => T) => s.rt.store.write(() => fn(s.rt.store.wdb)));
// A nested call is a call of its own: its own state, price and charge, never its parent's.
provideCapability("call", (s) => (service: string, method: string, args: Record<string, unknown> = {}, opts?: { scopes?: "*" | string[] }) =>
  dispatch(s.rt, { service, method, args, caller: opts?.scopes ? { ...s.caller, scopes: intersectScopes(s.caller.scopes, opts.scopes) } : s.caller, parent: s.call, baseUrl: s.baseUrl }),
);
