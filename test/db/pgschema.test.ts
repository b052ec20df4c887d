// one store: it compares the migration files of both dialects, which no pass changes
// The PostgreSQL migrations come from the same sqliteTable definitions as
// SQLite's: a schema change regenerated for one dialect only is caught here.
import { expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { readMigrations } from "../../core/db/migrate.ts";
import { coreOwners, pgMigrationsIn, pgMigrationsOf } from "../../core/db/owners.ts";
import { generatePgMigration, pendingPgMigration } from "../../core/db/pggenerate.ts";

const root = join(import.meta.dir, "..", "..");
const owners = [
  ...coreOwners.map((o) => ({ name: o.name, schema: join(o.dir, "schema.ts"), pg: pgMigrationsOf(o.name) })),
  ...readdirSync(join(root, "plugins"))
    .filter((n) => existsSync(join(root, "plugins", n, "schema.ts")))
    .map((n) => ({ name: n, schema: join(root, "plugins", n, "schema.ts"), pg: pgMigrationsIn(join(root, "plugins", n, "migrations")) })),
];

test("every owner's PostgreSQL migrations are up to date with its tables (bun run migrations writes them)", async () => {
  const behind: string[] = [];
  for (const o of owners) {
    const { statements } = await pendingPgMigration(await import(o.schema), o.pg);
    if (statements.length) behind.push(`${o.name}: ${statements[0].split("\n")[0]}`);
  }
  expect(behind).toEqual([]);
});

test("every plugin with SQLite migrations has PostgreSQL ones", () => {
  const missing = readdirSync(join(root, "plugins")).filter((n) => readMigrations(join(root, "plugins", n, "migrations")) && !readMigrations(pgMigrationsIn(join(root, "plugins", n, "migrations"))));
  expect(missing).toEqual([]);
});

test("a changed table gets a PostgreSQL migration of its own that alters it in place", async () => {
  const out = mkdtempSync(join(tmpdir(), "hearth-pggen-"));
  try {
    const v1 = sqliteTable("things", { id: text("id").primaryKey(), n: integer("n").notNull() });
    const v2 = sqliteTable("things", { id: text("id").primaryKey(), n: integer("n").notNull(), label: text("label").notNull().default("") });
    expect(await generatePgMigration({ v1 }, out)).toBe("0000_schema");
    expect(await generatePgMigration({ v1 }, out)).toBeNull();
    expect(await generatePgMigration({ v2 }, out)).toBe("0001_schema");
    expect(readFileSync(join(out, "0001_schema.sql"), "utf8").trim()).toBe(`ALTER TABLE "things" ADD COLUMN "label" text DEFAULT '' NOT NULL;`);
    expect(readMigrations(out)!.journal.entries.map((e) => e.tag)).toEqual(["0000_schema", "0001_schema"]);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
