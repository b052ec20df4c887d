// The one place an instance is put together: the settings, the storage in the
// data folder, the core modules (core/modules.ts) and the plugins. Modules
// only declare what they bring; this file merges the declarations once and
// hands them to each Runtime, so nothing depends on what was imported first.
import { join } from "node:path";
import { blobBackend, makeBlobs } from "./blobs.ts";
import type { CliHost } from "./cli/commands.ts";
import { coreSettings, dataFolder, resolveConfig } from "./config.ts";
import { Store } from "./db/index.ts";
import { coreOwners } from "./db/owners.ts";
import { readMigrations, type MigrationSet } from "./db/migrate.ts";
import { wire } from "./module.ts";
import { coreModules } from "./modules.ts";
import { closeDataDir, privateFile } from "./private.ts";
import { recoverSwap } from "./backup/swap.ts";
import { makeLogger } from "./log.ts";
import { buildRegistry, type BuiltinPlugin, type Registry } from "./registry.ts";
import { Runtime, type RuntimeOptions } from "./runtime.ts";

/** The core modules' declarations, merged; the same for every instance in this process. */
export const coreWiring = wire(coreModules);

/** What a lone binary carries instead of folders: its plugins and every migration, PostgreSQL's by owner. */
interface EmbeddedBuild {
  plugins: BuiltinPlugin[];
  coreMigrations: MigrationSet;
  pgMigrations?: Record<string, MigrationSet | null>;
}
let embeddedBuild: EmbeddedBuild | undefined;
/** Set by the single binary's entry: plugins and migrations compiled in, since there is no plugins folder beside it. */
export function setEmbeddedBuild(b: EmbeddedBuild) {
  embeddedBuild = b;
}

/** The commands of `hearth` itself, which no plugin's command may take: the CLI's own and those core modules add. */
export function coreCommands(): string[] {
  return ["serve", "help", "version", "token", ...coreWiring.cli.keys()];
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
    capabilities: coreWiring.capabilities.keys(),
    moduleOwners: coreWiring.migrations.map((m) => m.owner),
    commands: coreCommands(),
  });
  const settings = { ...coreSettings };
  for (const p of registry.plugins.values()) Object.assign(settings, p.def.config ?? {});
  return { registry, config: resolveConfig(settings, env) };
}

/** An instance on the data folder its settings name: not yet migrated or started. */
export async function createRuntime(opts: RuntimeOptions = {}): Promise<Runtime> {
  const { registry, config } = await loadRegistry(opts);
  const dataDir = dataFolder(config);
  // A restore cut off in the middle of its swap (a power cut) is undone before anything opens the data it was moving.
  const undone = await recoverSwap(dataDir);
  if (undone) (opts.logger ?? makeLogger(config.HEARTH_LOG)).warn("a restore was interrupted while it swapped the data: the data as it was before it is back", { data: dataDir });
  closeDataDir(dataDir);
  let store: Store;
  if (config.HEARTH_DATABASE_URL) {
    if (!/^postgres(ql)?:\/\//.test(config.HEARTH_DATABASE_URL)) throw new Error("HEARTH_DATABASE_URL: must be a postgres:// URL (empty for SQLite in the data folder)");
    const pool = Number(config.HEARTH_DATABASE_POOL || "10");
    if (!Number.isInteger(pool) || pool < 2) throw new Error(`HEARTH_DATABASE_POOL: must be a whole number of at least 2 (one connection for writes, one for reads), not "${config.HEARTH_DATABASE_POOL}"`);
    // The PostgreSQL store's code (its client, SQL translation, migrations) is loaded only by an instance that uses it.
    const [{ PgStore }, { migratePg, pgOwners }] = await Promise.all([import("./db/pg.ts"), import("./db/pgmigrate.ts")]);
    const pg = new PgStore(config.HEARTH_DATABASE_URL, { max: pool });
    // Migrating PostgreSQL is asynchronous, so it happens here; the runtime's own pass at start then finds every owner migrated.
    const plugins = [...registry.plugins.values()].map((p) => ({ name: p.def.name, file: p.file, migrations: p.def.migrations, hasMigrations: p.migrations !== null, tables: p.tables }));
    try {
      // Every core owner: those the wiring declares and those with a schema (the scheduler applies its own on first use, on SQLite).
      const modules = new Set([...coreWiring.migrations.map((m) => m.owner), ...coreOwners.map((o) => o.name).filter((n) => n !== "core")]);
      await pg.checkCollation();
      const owners = pgOwners([...modules], plugins).map((o) => ({ ...o, set: embeddedBuild?.pgMigrations?.[o.owner] ?? undefined }));
      await migratePg(pg, owners);
    } catch (e) {
      await pg.close();
      throw e;
    }
    store = pg;
  } else {
    // SQLite gives its journal files the database file's mode, so it is made private first.
    privateFile(join(dataDir, "hearth.db"));
    store = new Store(join(dataDir, "hearth.db"));
  }
  const coreMigrations = opts.embeddedCoreMigrations ?? embeddedBuild?.coreMigrations ?? readMigrations(join(import.meta.dir, "db", "migrations"));
  return new Runtime({ registry, config, dataDir, store, blobs: makeBlobs(blobBackend(config, dataDir), store, config, dataDir), wiring: coreWiring, coreMigrations }, opts);
}

/** What `hearth` commands are handed: they open the instance through here, not by importing this file. */
export const cliHost: CliHost = {
  open: () => createRuntime(),
  services: async () => {
    const { registry } = await loadRegistry();
    return { plugins: registry.plugins, reserved: registry.reserved };
  },
};
