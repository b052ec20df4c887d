// Generates drizzle-kit migrations for the core and for every plugin with a
// schema.ts, each into its own migrations/ folder, and the PostgreSQL ones
// from the same tables (core/db/pggenerate.ts): `bun run migrations`.
import { existsSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { coreOwners, pgMigrationsIn, pgMigrationsOf } from "./owners.ts";
import { generatePgMigration } from "./pggenerate.ts";

const root = join(import.meta.dir, "..", "..");
const targets: { name: string; dir: string; pg: string }[] = coreOwners.map((o) => ({ ...o, pg: pgMigrationsOf(o.name) }));
for (const name of readdirSync(join(root, "plugins")).sort()) {
  const dir = join(root, "plugins", name);
  if (existsSync(join(dir, "schema.ts"))) targets.push({ name, dir, pg: pgMigrationsIn(join(dir, "migrations")) });
}
const only = process.argv.slice(2);
// Paths are given relative to cwd: drizzle-kit prefixes "./" to an absolute --out when it reads earlier snapshots.
for (const t of targets) {
  if (only.length && !only.includes(t.name)) continue;
  const proc = Bun.spawnSync(
    ["bun", "x", "drizzle-kit", "generate", "--dialect", "sqlite", "--schema", relative(root, join(t.dir, "schema.ts")), "--out", relative(root, join(t.dir, "migrations"))],
    { cwd: root, stdout: "inherit", stderr: "inherit" },
  );
  if (proc.exitCode !== 0) process.exit(proc.exitCode ?? 1);
  const tag = await generatePgMigration(await import(join(t.dir, "schema.ts")), t.pg);
  console.log(tag ? `[✓] ${t.name}: PostgreSQL migration ${relative(root, join(t.pg, tag))}.sql` : `${t.name}: no PostgreSQL schema changes`);
}
