// The running instance: configuration, store, registry and the capability
// factories, with start-up (migrations, plugin start hooks) and shutdown.
// It is handed everything it runs with; core/instance.ts wires it (settings,
// storage, the core modules, plugins), so modules import it only as a type.
import type { AuditLog } from "./audit/log.ts";
import type { Approvals } from "./policy/approvals.ts";
import type { Policies } from "./policy/store.ts";
import { sweepBlobTemps } from "./blobs.ts";
import { newCall, type Call } from "./call.ts";
import type { CapabilityFactory, CapabilityScope } from "./capabilities.ts";
import type { Store } from "./db/index.ts";
import { applyMigrations, type MigrationSet } from "./db/migrate.ts";
import { notConfigured, unauthenticated } from "./errors.ts";
import { makeLogger, type CallLogger } from "./log.ts";
import type { PluginViews } from "./mcp/plugin-views.ts";
import type { Wiring } from "./module.ts";
import type { Blobs, Caller, Clock, Ctx, Logger } from "./plugin.ts";
import { ManifestError, type BuiltinPlugin, type Registry } from "./registry.ts";
import { checkAgainstDatabase } from "./db/owntables.ts";
import { TokenCache } from "./auth/tokens.ts";
import { openShared, type Shared } from "./shared/index.ts";
import { environmentNames } from "./config.ts";

/** A restore run while serving: the backup's name, when, and where the data before went, or why nothing changed. */
export type RestoreOutcome = { source: string; at: string } & ({ ok: true; previous: string | null } | { ok: false; reason: string });
/** Why a restore failed, for a page: the reason, and that the data is as it was unless the reason says so itself (a restore undone after its data would not open does). */
export const restoreFailure = (reason: string) => (/as it was/.test(reason) ? reason : `the data is as it was: ${reason}`);

export const systemClock: Clock = { now: () => new Date() };

export interface RuntimeOptions {
  env?: Record<string, string | undefined>;
  clock?: Clock;
  /** Built-in plugins compiled into the binary; when absent they are read from pluginsDir. */
  embedded?: BuiltinPlugin[];
  embeddedCoreMigrations?: MigrationSet;
  pluginsDir?: string;
  logger?: CallLogger;
  /** The settings set in the environment rather than the settings file (they win over it); by default those the process had before `hearth` read the file. */
  environment?: ReadonlySet<string>;
}

/** What the wiring chose for an instance: its plugins, settings, storage and core modules. */
export interface RuntimeParts {
  registry: Registry;
  config: Record<string, string>;
  dataDir: string;
  store: Store;
  blobs: Blobs;
  /** The core modules' declarations, merged: capabilities, routes, identifiers, hooks, commands. */
  wiring: Wiring;
  coreMigrations: MigrationSet | null;
}

/** A price or payment step filled in by the payments module; the default refuses priced calls from strangers. */
export interface Metering {
  /** The price in credits of this call, with the instance's overrides applied. */
  price?(entry: import("./registry.ts").MethodEntry, args: Record<string, unknown>, caller: Caller): number | Promise<number>;
  /** Called for a call that costs its caller nothing, before it runs: a payment sent with it is left unspent, and may be refused (one already spent). */
  free?(caller: Caller, call: Call): void | Promise<void>;
  /** Called before the handler runs; may throw 401/402/403. Returns what to charge on success. */
  before(scope: { rt: Runtime; entry: import("./registry.ts").MethodEntry; args: Record<string, unknown>; caller: Caller; price: number; baseUrl?: string; call?: Call }): unknown;
  /** Called after the handler succeeded, before commit: takes the payment in call.plan (network). Outside any lock for reads; inside the call's transaction for writes. */
  settle?(call: Call): Promise<void>;
  /** Called inside a write transaction after the handler (and settle) succeeded; records the charge. A throw undoes the call's writes. */
  commit?(call: Call): void | Promise<void>;
  /** Whether the call's payment is still to be taken after the handler, and may yet fail: such a call's writes wait in one transaction for it. */
  unsettled?(call: Call): boolean;
  /** Called before an irreversible handler runs: takes the payment now, so the effect happens only once paid. May throw 402. */
  prepay?(call: Call): Promise<void>;
  /** Called when a call whose payment was taken before it ran failed with `error`; returns the refusal to answer instead, if it says more. */
  failed?(call: Call, error: unknown): Promise<unknown>;
  /** Called when the call is over (it failed, or its charge committed), so anything held for its plan is let go. */
  release?(call: Call): void;
}

export class Runtime {
  /** The resolved settings; replaced whole (never edited in place) when the admin changes one that applies at once. */
  get config(): Record<string, string> {
    return this.settings;
  }
  private settings: Record<string, string>;
  readonly dataDir: string;
  readonly store: Store;
  readonly blobs: Blobs;
  readonly clock: Clock;
  readonly log: CallLogger;
  readonly tokens: TokenCache;
  /** What this instance must agree on with the others serving the same deployment. */
  readonly shared: Shared;
  metering: Metering | null = null;
  /** The record of every call (core/audit), once its module has set it up. */
  audit: AuditLog | null = null;
  /** Each credential's policy (core/policy), once its module has set it up. */
  policies: Policies | null = null;
  /** Calls waiting for the owner's answer (core/policy). */
  approvals: Approvals | null = null;
  /** Told of each write an account made, once committed (core/views: the live notices its pages hear). */
  changed: ((change: { account: string; service: string; method: string }) => void) | null = null;
  /**
   * Restores the backup confirmed on /settings/restore at once, and goes on
   * serving from it (core/backup/inplace.ts): set when this instance is
   * `hearth serve`'s. Without it a confirmed restore waits for the next start.
   */
  restoreNow: ((source: string) => void) | null = null;
  /** How the last restore chosen on /settings/restore went, when this process ran it: for that page. */
  lastRestore: RestoreOutcome | null = null;
  /** ctx.<name> factories: the core modules' and those plugins provide. */
  readonly capabilities: ReadonlyMap<string, CapabilityFactory>;
  /** MCP Apps views plugins provide. */
  readonly views: readonly { service: string; source: PluginViews }[];
  private started = false;

  readonly registry: Registry;
  readonly wiring: Wiring;

  /** Settings set in the environment, which win over the settings file: /settings says so beside each. */
  readonly environment: ReadonlySet<string>;

  constructor(parts: RuntimeParts, opts: Pick<RuntimeOptions, "clock" | "logger" | "environment"> = {}) {
    const { registry, config, wiring } = parts;
    this.environment = opts.environment ?? environmentNames ?? new Set();
    this.registry = registry;
    this.settings = config;
    this.wiring = wiring;
    this.dataDir = parts.dataDir;
    this.store = parts.store;
    this.blobs = parts.blobs;
    this.clock = opts.clock ?? systemClock;
    this.log = opts.logger ?? makeLogger(config.HEARTH_LOG);
    this.shared = openShared(config, this.log);
    this.tokens = new TokenCache(this.store, this.shared);
    this.coreMigrations = parts.coreMigrations;
    const plugins = [...registry.plugins.values()];
    this.capabilities = new Map([...wiring.capabilities, ...plugins.flatMap((p) => Object.entries(p.def.provides?.capabilities ?? {}))]);
    this.views = plugins.flatMap((p) => (p.def.provides?.views ?? []).map((source) => ({ service: p.def.name, source })));
    for (const setup of wiring.setups) setup(this);
  }
  private coreMigrations: MigrationSet | null;

  /** Applies migrations: the core's first, then each plugin's. */
  migrate() {
    if (this.migrated) return;
    if (!this.coreMigrations) throw new Error("core migrations are missing");
    applyMigrations(this.store.writer, "core", this.coreMigrations);
    for (const m of this.wiring.migrations) applyMigrations(this.store.writer, m.owner, m.set);
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
    this.store.foldWal();
    const swept = await sweepBlobTemps(this.dataDir);
    if (swept) this.log.warn("removed half-written blob files left by an earlier stop", { count: swept });
    for (const p of this.registry.plugins.values()) {
      if (p.def.start) await p.def.start(this.instanceCtx(p.def.name));
    }
    this.started = true;
  }

  private stopHooks: (() => void | Promise<void>)[] = [];
  private reconfigureHooks: ((changed: string[]) => void)[] = [];

  /** Core modules that keep something derived from a setting register here to drop it when settings change. */
  onReconfigure(fn: (changed: string[]) => void) {
    this.reconfigureHooks.push(fn);
  }

  /**
   * Takes new values for settings that are read on every use: the next call
   * (and every plugin's ctx.config from then on) sees them. Settings read
   * only at start are not passed here; they wait for the next start.
   */
  reconfigure(values: Record<string, string>) {
    const changed = Object.keys(values).filter((k) => this.settings[k] !== values[k]);
    if (!changed.length) return;
    this.settings = Object.freeze({ ...this.settings, ...values }) as Record<string, string>;
    this.configs.clear();
    for (const fn of this.reconfigureHooks) fn(changed);
  }

  /** Core modules that hold timers or sockets register here to be stopped before the store closes. */
  onStop(fn: () => void | Promise<void>) {
    this.stopHooks.push(fn);
  }

  async stop() {
    for (const p of this.registry.plugins.values()) await p.def.stop?.(this.instanceCtx(p.def.name));
    for (const fn of this.stopHooks.splice(0).reverse()) await fn();
    await this.shared.close();
    // Awaited: a PostgreSQL store's pool holds connections until it has closed them, and a stopped instance must not keep any.
    await this.store.close();
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
    view = declaredSettings(service, this.registry.plugins.get(service)!.settings, this.config, this.log);
    this.configs.set(service, view);
    return view;
  }

  /** Builds a handler's context for one call, holding exactly the capabilities its plugin declared. */
  makeCtx(service: string, kind: CapabilityScope["kind"], call: Call, method: string, baseUrl: string, o: { sandboxed?: boolean } = {}): Ctx {
    const { caller, id: requestId } = call;
    const plugin = this.registry.plugins.get(service)!;
    let proto = this.protos.get(service);
    if (!proto) {
      proto = makeProto(service, plugin.def.needs ?? [], this.capabilities.keys(), this.log);
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
    const scope: CapabilityScope = { rt: this, service, kind, call, caller, requestId, baseUrl: ctx.baseUrl as string, reached: baseUrl, sandboxed: o.sandboxed };
    for (const need of plugin.def.needs ?? []) ctx[need] = this.capabilities.get(need)!(scope);
    return ctx as unknown as Ctx;
  }
}

/** The settings a plugin declared, out of all of them; reading another is refused naming both (and logged). */
export function declaredSettings(service: string, allowed: Set<string>, all: Record<string, string>, log: Pick<Logger, "error">): Readonly<Record<string, string>> {
  const visible = Object.freeze(Object.fromEntries(Object.entries(all).filter(([k]) => allowed.has(k))));
  return new Proxy(visible, {
    get(target, key) {
      if (typeof key !== "string" || key in target || !/^[A-Z][A-Z0-9_]*$/.test(key)) return Reflect.get(target, key);
      if (allowed.has(key)) return undefined;
      log.error("plugin read an undeclared setting", { plugin: service, setting: key });
      throw notConfigured(`plugin "${service}" reads the setting ${key}, which its manifest does not declare: add it to the plugin's settings`);
    },
  });
}

function makeProto(service: string, needs: string[], capabilities: Iterable<string>, log: Pick<Logger, "error">): object {
  const proto: PropertyDescriptorMap = {
    account: {
      get(this: Ctx) {
        const a = this.caller.account;
        if (!a) throw unauthenticated("this method needs an account: send a token");
        return a;
      },
    },
  };
  for (const name of capabilities) {
    if (needs.includes(name)) continue;
    proto[name] = {
      // Refused by name, as an undeclared setting is: the answer and the log say which plugin and what to add.
      get() {
        log.error("plugin used a capability it does not declare", { plugin: service, capability: name });
        throw notConfigured(`plugin "${service}" uses ctx.${name} without declaring "${name}" in needs: add it to the plugin's needs`);
      },
    };
  }
  return Object.create(null, proto);
}
