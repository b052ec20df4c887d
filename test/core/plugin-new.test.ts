// one store: makes and tests a plugin in files; starts no instance of the pass's store
// `hearth plugin new` writes a plugin folder that passes its own test, and
// `hearth plugin migrations` writes the next migration when its tables change.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { writeTsconfig } from "../../core/cli/plugin.ts";
import { docsTest, writeDocsExample } from "./docs-plugin.ts";

const main = join(import.meta.dir, "../../core/cli/main.ts");
const parent = mkdtempSync(join(tmpdir(), "hearth-plugin-new-"));
const folder = join(parent, "demo");
afterAll(() => rmSync(parent, { recursive: true, force: true }));

async function run(cmd: string[], cwd = parent) {
  const env: Record<string, string | undefined> = { ...process.env, HEARTH_LOG: "off" };
  delete env.HEARTH_PLUGINS;
  const p = Bun.spawn(cmd, { cwd, env, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { stdout, stderr, code };
}

/**
 * `bun test` in the plugin's folder, as its author runs it, under the runner's limit rather than bun's own 5 s a test:
 * on a busy machine the author's test (an instance started and called) is slower, not wrong.
 */
const AUTHORS_TEST = ["bun", "test", "--timeout", "600000"];

test("hearth plugin new demo writes a plugin whose own test passes", async () => {
  const made = await run(["bun", main, "plugin", "new", "demo", "--dir", parent]);
  expect(made.stderr).toBe("");
  expect(made.code).toBe(0);
  expect(made.stdout.trim()).toBe(folder);
  expect(readFileSync(join(folder, "migrations", "0000_init.sql"), "utf8")).toContain("CREATE TABLE `demo`");
  const own = await run(AUTHORS_TEST, folder);
  expect(own.stderr).toContain(" 2 pass");
  expect(own.stderr).toContain(" 0 fail");
  expect(own.code).toBe(0);
});

test("hearth plugin migrations writes each change to its tables, a table rebuild included, which the plugin then runs with", async () => {
  const schema = join(folder, "schema.ts");
  writeFileSync(schema, readFileSync(schema, "utf8").replace('text: text("text").notNull(),', 'text: text("text").notNull(),\n    done: integer("done").notNull().default(0),'));
  const next = await run(["bun", main, "plugin", "migrations", folder]);
  expect(next.stderr).toBe("");
  // The same change for an instance on PostgreSQL, beside it.
  expect(next.stdout.trim().split("\n")).toEqual([join(folder, "migrations", "0001_change.sql"), join(folder, "migrations", "pg", "0001_schema.sql")]);
  expect(readFileSync(join(folder, "migrations", "0001_change.sql"), "utf8")).toContain("ALTER TABLE `demo` ADD `done` integer DEFAULT 0 NOT NULL");
  expect(readFileSync(join(folder, "migrations", "pg", "0001_schema.sql"), "utf8")).toContain('ALTER TABLE "demo" ADD COLUMN "done" bigint DEFAULT 0 NOT NULL');
  expect((await run(["bun", main, "plugin", "migrations", folder])).stdout).toContain("nothing written");
  // A column that may now be empty: drizzle-kit copies the table to __new_demo and renames it back.
  writeFileSync(schema, readFileSync(schema, "utf8").replace('text: text("text").notNull(),', 'text: text("text"),'));
  expect((await run(["bun", main, "plugin", "migrations", folder, "--name", "optional_text"])).code).toBe(0);
  expect(readFileSync(join(folder, "migrations", "0002_optional_text.sql"), "utf8")).toContain("ALTER TABLE `__new_demo` RENAME TO `demo`");
  const own = await run(AUTHORS_TEST, folder);
  expect(own.stderr).toContain(" 0 fail");
  expect(own.code).toBe(0);
});

test("a bad name is a usage error and an existing folder is refused", async () => {
  expect((await run(["bun", main, "plugin", "new", "Bad_Name"])).code).toBe(2);
  const again = await run(["bun", main, "plugin", "new", "demo", "--dir", parent]);
  expect(again.code).toBe(1);
  expect(again.stderr).toContain("exists already");
});

test("a service name already taken is refused: a built-in's, the core's own, a drop-in's named in HEARTH_PLUGINS", async () => {
  const elsewhere = mkdtempSync(join(tmpdir(), "hearth-plugin-new-taken-"));
  try {
    for (const [name, why] of [["notes", "a built-in service"], ["scheduler", "the core's own records"]]) {
      const r = await run(["bun", main, "plugin", "new", name, "--dir", elsewhere]);
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(`plugin name "${name}" is taken: it names ${why}; choose another\n`);
    }
    const p = Bun.spawn(["bun", main, "plugin", "new", "demo", "--dir", elsewhere], { cwd: parent, env: { ...process.env, HEARTH_LOG: "off", HEARTH_PLUGINS: folder }, stdout: "pipe", stderr: "pipe" });
    const [stderr, code] = await Promise.all([new Response(p.stderr).text(), p.exited]);
    expect(code).toBe(1);
    expect(stderr).toBe(`plugin name "demo" is taken: it names the drop-in plugin at ${folder}; choose another\n`);
    // Nothing was written.
    expect(readdirSync(elsewhere)).toEqual([]);
  } finally {
    rmSync(elsewhere, { recursive: true, force: true });
  }
});

test("the docs' test of the bookmarks example passes in the plugin's folder, as a plugin author runs it", async () => {
  const bookmarks = writeDocsExample();
  try {
    expect(writeTsconfig(bookmarks)).toBe(true);
    writeFileSync(join(bookmarks, "bookmarks.test.ts"), docsTest());
    const own = await run(AUTHORS_TEST, bookmarks);
    expect(own.stderr).toContain(" 1 pass");
    expect(own.stderr).toContain(" 0 fail");
    expect(own.code).toBe(0);
  } finally {
    rmSync(dirname(bookmarks), { recursive: true, force: true });
  }
});

test("the docs' examples type-check in their own folders, every capability they use included, as an author's editor checks them", async () => {
  for (const name of ["bookmarks", "reminders"]) {
    const example = writeDocsExample(name);
    try {
      expect(writeTsconfig(example)).toBe(true);
      // On one thread: the same check, but tsc's parallel checkers each work through the core's types again, a third more CPU.
      const tsc = await run(["bun", join(import.meta.dir, "../../node_modules/typescript/bin/tsc"), "--noEmit", "--singleThreaded", "-p", example], example);
      expect({ name, out: tsc.stdout }).toEqual({ name, out: "" });
      expect(tsc.code).toBe(0);
    } finally {
      rmSync(dirname(example), { recursive: true, force: true });
    }
  }
});
