// `hearth plugin new NAME` writes a working drop-in plugin folder (index.ts,
// schema.ts, its first migration, a test); `hearth plugin migrations FOLDER`
// writes a plugin's next drizzle-kit migration, SQLite's and PostgreSQL's, from its schema.ts, which
// imports from "hearth" and so cannot be read by drizzle-kit's own command.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { hearthHome } from "../config.ts";
import { pgMigrationsIn } from "../db/owners.ts";
import { serveSdk } from "../registry.ts";
import { defineModule } from "../module.ts";
import { parseFlags } from "./args.ts";
import type { CliCommand, CliHost } from "./commands.ts";

const USAGE = "usage: hearth plugin new NAME [--dir FOLDER] | hearth plugin migrations FOLDER [--name WORD]";

interface Journal {
  version: string;
  dialect: string;
  entries: { idx: number; version: string; when: number; tag: string; breakpoints: boolean }[];
}

// Named through a variable so the single binary's bundler leaves drizzle-kit (a development tool) out.
const KIT = "drizzle-kit/api";
async function drizzleKit(): Promise<typeof import("drizzle-kit/api")> {
  try {
    return await import(KIT);
  } catch {
    throw new Error("writing migrations needs drizzle-kit: run this from a Hearth checkout after `bun install`");
  }
}

/** drizzle-kit's starting point: a schema with no tables. */
const EMPTY = { version: "6", dialect: "sqlite", id: "00000000-0000-0000-0000-000000000000", prevId: "", tables: {}, views: {}, enums: {}, _meta: { schemas: {}, tables: {}, columns: {} } };

/**
 * Writes the migration that takes the tables from the last snapshot to what
 * schema.ts declares. Returns its tag, or null when nothing changed. Needs
 * drizzle-kit, which a checkout installs (`bun install`); the binary lacks it.
 */
export async function writeMigration(folder: string, word?: string): Promise<string | null> {
  const kit = await drizzleKit();
  await serveSdk();
  const schema = (await import(join(resolve(folder), "schema.ts"))) as Record<string, unknown>;
  const dir = join(resolve(folder), "migrations");
  const journalFile = join(dir, "meta", "_journal.json");
  const journal: Journal = existsSync(journalFile) ? JSON.parse(readFileSync(journalFile, "utf8")) : { version: "7", dialect: "sqlite", entries: [] };
  const last = journal.entries.at(-1);
  const snapshotOf = (idx: number) => join(dir, "meta", `${String(idx).padStart(4, "0")}_snapshot.json`);
  if (last && !existsSync(snapshotOf(last.idx))) throw new Error(`${snapshotOf(last.idx)} is missing: the next migration is the difference from it`);
  const prev = last ? JSON.parse(readFileSync(snapshotOf(last.idx), "utf8")) : EMPTY;
  const cur = await kit.generateSQLiteDrizzleJson(schema, prev.id);
  const statements = await kit.generateSQLiteMigration(prev, cur as typeof prev);
  if (!statements.length) return null;
  const idx = last ? last.idx + 1 : 0;
  const tag = `${String(idx).padStart(4, "0")}_${word ?? (idx === 0 ? "init" : "change")}`;
  mkdirSync(join(dir, "meta"), { recursive: true });
  writeFileSync(join(dir, `${tag}.sql`), statements.join("\n--> statement-breakpoint\n") + "\n");
  writeFileSync(snapshotOf(idx), JSON.stringify(cur, null, 2) + "\n");
  journal.entries.push({ idx, version: "6", when: Date.now(), tag, breakpoints: true });
  writeFileSync(journalFile, JSON.stringify(journal, null, 2) + "\n");
  return tag;
}

// The PostgreSQL generator needs drizzle-kit too: named through a variable for the same reason.
const PG_GENERATE = "../db/pggenerate.ts";

/**
 * Writes the plugin's next PostgreSQL migration (migrations/pg) from its
 * schema.ts, the same tables its SQLite migrations make: an instance on
 * PostgreSQL applies these. Returns its tag, or null when they are up to date.
 */
export async function writePgMigration(folder: string): Promise<string | null> {
  await drizzleKit();
  await serveSdk();
  const { generatePgMigration } = (await import(PG_GENERATE)) as typeof import("../db/pggenerate.ts");
  const schema = (await import(join(resolve(folder), "schema.ts"))) as Record<string, unknown>;
  return generatePgMigration(schema, pgMigrationsIn(join(resolve(folder), "migrations")));
}

const template = (name: string) => {
  const NAME = name.toUpperCase();
  return {
    "schema.ts": `// The tables this plugin stores. After changing them, run \`hearth plugin migrations .\` from a Hearth checkout.
import { index, integer, sqliteTable, text } from "hearth";

export const items = sqliteTable(
  "${name}",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    owner: text("owner").notNull(),
    text: text("text").notNull(),
    added: integer("added").notNull(),
  },
  (t) => [index("${name}_owner_added").on(t.owner, t.added)],
);
`,
    "index.ts": `// The ${name} service: see docs/plugins.md in Hearth for the whole contract.
import { definePlugin, desc, eq, invalid, listIn, read, str, T, write } from "hearth";
import { items } from "./schema.ts";

export default definePlugin({
  name: "${name}",
  description: "Short texts kept per account.",
  needs: ["db"],
  tables: { items },
  config: { ${NAME}_MAX_TEXT: { default: "500", description: "Longest text ${name}/add keeps, in characters." } },
  // What the home page shows for it: the latest few texts (the page escapes them).
  card: { title: "${name}", method: "list", args: () => ({ limit: 5 }), render: (result) => ({ lines: listIn(result).map((i) => ({ text: str(i.text) ?? "" })) }) },
  methods: {
    add: write({
      description: "Keeps a text.",
      args: T.Object({ text: T.String({ minLength: 1, maxLength: 10_000 }) }),
      access: "account",
      run: ({ text }, ctx) => {
        const max = Number(ctx.config.${NAME}_MAX_TEXT);
        if (text.length > max) throw invalid("text", \`must be at most \${max} characters (got \${text.length})\`);
        return ctx.db.insert(items).values({ owner: ctx.account.id, text, added: ctx.clock.now().getTime() }).returning().get();
      },
    }),
    list: read({
      description: "Your texts, newest first.",
      args: T.Object({ limit: T.Optional(T.Integer({ minimum: 1, maximum: 100, default: 20 })) }),
      access: "account",
      run: ({ limit }, ctx) =>
        ctx.db.select().from(items).where(eq(items.owner, ctx.account.id)).orderBy(desc(items.added), desc(items.id)).limit(limit ?? 20).all(),
    }),
  },
});
`,
    [`${name}.test.ts`]: `// Starts Hearth with this plugin (its database in a temp folder) and calls it over HTTP and MCP.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { startHearth, type TestHearth } from "hearth/testing";

// Starting Hearth takes a few seconds, and longer on a busy machine than bun's default of five.
setDefaultTimeout(300_000);

let h: TestHearth;
beforeAll(async () => {
  h = await startHearth({ plugins: import.meta.dir, env: { ${NAME}_MAX_TEXT: "20" } });
});
afterAll(() => h?.stop());

test("add keeps a text that list returns, over HTTP and MCP", async () => {
  const token = await h.token("alice");
  const added = await h.call("${name}/add", { text: "first" }, { token });
  expect(added.status).toBe(200);
  expect(added.body.result).toMatchObject({ text: "first" });
  const listed = await h.mcp("${name}_list", {}, { token });
  expect(listed.isError).toBe(false);
  expect(listed.structured.result.map((i: { text: string }) => i.text)).toEqual(["first"]);
  expect((await h.call("${name}/list", {}, { token: await h.token("bob") })).body.result).toEqual([]);
});

test("a text over ${NAME}_MAX_TEXT is refused naming the field", async () => {
  const r = await h.call("${name}/add", { text: "x".repeat(21) }, { token: await h.token("alice") });
  expect(r.status).toBe(400);
  expect(r.body.error.field).toBe("text");
});
`,
  } as Record<string, string>;
};

/** Maps "hearth", its sub-entries, "hearth/ui" and "hearth/testing" to this Hearth's source, for the editor and `bun test` in a plugin's folder; false from the binary. */
export function writeTsconfig(folder: string): boolean {
  const sdk = join(hearthHome, "core", "sdk.ts");
  if (!existsSync(sdk)) return false;
  // Each file of core/sdk/ is a sub-entry: hearth/dav is core/sdk/dav.ts.
  const entries = readdirSync(join(hearthHome, "core", "sdk")).filter((f) => f.endsWith(".ts"));
  const paths = {
    hearth: [sdk],
    ...Object.fromEntries(entries.map((f) => [`hearth/${f.slice(0, -3)}`, [join(hearthHome, "core", "sdk", f)]])),
    // What a screen imports (docs/views.md).
    "hearth/ui": [join(hearthHome, "core", "ui", "index.ts")],
    "hearth/testing": [join(hearthHome, "core", "testing.ts")],
  };
  const compilerOptions = { strict: true, module: "Preserve", moduleResolution: "bundler", allowImportingTsExtensions: true, resolveJsonModule: true, noEmit: true, skipLibCheck: true, types: ["bun"], typeRoots: [join(hearthHome, "node_modules", "@types")], paths };
  // The core's declarations of the files it imports (SQL, CSS) come along for the type check.
  const include = ["**/*.ts", join(hearthHome, "core", "**", "*.d.ts")];
  writeFileSync(join(folder, "tsconfig.json"), JSON.stringify({ compilerOptions, include }, null, 2) + "\n");
  return true;
}

async function newPlugin(name: string, parent: string, hearth: CliHost): Promise<number> {
  if (!/^[a-z][a-z0-9]{0,31}$/.test(name)) {
    process.stderr.write(`plugin name "${name}" must be a-z and 0-9, starting with a letter, at most 32 characters\n`);
    return 2;
  }
  // A service name is the route, the tools' prefix and the tables' names: one already taken would stop start-up beside it.
  const { plugins, reserved } = await hearth.services();
  const taken = plugins.get(name);
  if (taken || reserved.has(name)) {
    const by = !taken ? "the core's own records" : taken.builtin ? "a built-in service" : `the drop-in plugin at ${dirname(taken.file)}`;
    process.stderr.write(`plugin name "${name}" is taken: it names ${by}; choose another\n`);
    return 1;
  }
  const folder = resolve(parent, name);
  await drizzleKit();
  if (existsSync(folder)) {
    process.stderr.write(`${folder} exists already\n`);
    return 1;
  }
  mkdirSync(folder, { recursive: true });
  for (const [file, text] of Object.entries(template(name))) writeFileSync(join(folder, file), text);
  writeTsconfig(folder);
  await writeMigration(folder);
  await writePgMigration(folder);
  process.stdout.write(`${folder}\n`);
  return 0;
}

export const pluginCommand: CliCommand = {
  summary: "write a new drop-in plugin folder, or a plugin's next migration from its schema.ts",
  usage: "hearth plugin new NAME | migrations FOLDER",
  async run(argv, hearth) {
    const { flags, rest } = parseFlags(argv);
    const [sub, arg, ...extra] = rest;
    if (!arg || extra.length || (sub !== "new" && sub !== "migrations")) {
      process.stderr.write(`${USAGE}\n`);
      return 2;
    }
    if (sub === "new") return newPlugin(arg, flags.get("dir")?.[0] ?? process.cwd(), hearth);
    const tag = await writeMigration(arg, flags.get("name")?.[0]);
    const pgTag = await writePgMigration(arg);
    if (tag) process.stdout.write(`${join(resolve(arg), "migrations", `${tag}.sql`)}\n`);
    if (pgTag) process.stdout.write(`${join(pgMigrationsIn(join(resolve(arg), "migrations")), `${pgTag}.sql`)}\n`);
    if (!tag && !pgTag) process.stdout.write("no change to the tables: nothing written\n");
    return 0;
  },
};

/** `hearth plugin`: making and checking plugins. */
export const pluginToolsModule = defineModule({ name: "plugin-tools", provides: { cli: { plugin: pluginCommand } } });
