// Generates drizzle-kit migrations for the core and for every plugin with a
// schema.ts, each into its own migrations/ folder: `bun run migrations`.
import { existsSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";

const root = join(import.meta.dir, "..", "..");
const targets: { name: string; dir: string }[] = [{ name: "core", dir: join(root, "core", "db") }];
// The upstream response cache is core-owned but applied by core/upstream itself.
targets.push({ name: "upstream", dir: join(root, "core", "upstream") });
targets.push({ name: "scheduler", dir: join(root, "core", "scheduler") });
targets.push({ name: "ai", dir: join(root, "core", "ai") });
targets.push({ name: "home", dir: join(root, "core", "http", "pages", "home") });
targets.push({ name: "mail", dir: join(root, "core", "mail") });
targets.push({ name: "pay", dir: join(root, "core", "pay") });
targets.push({ name: "oauth", dir: join(root, "core", "auth", "oauth") });
for (const name of readdirSync(join(root, "plugins")).sort()) {
  const dir = join(root, "plugins", name);
  if (existsSync(join(dir, "schema.ts"))) targets.push({ name, dir });
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
}
