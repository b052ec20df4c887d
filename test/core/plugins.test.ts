// The plugin contract as a third party meets it: the docs' bookmarks example
// loaded from HEARTH_PLUGINS (its own table, a provider on a loopback fixture,
// a setting), and the refusals that keep drop-ins to what they declare.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { startHearth as startPluginHearth } from "../../core/testing.ts";
import { sql } from "drizzle-orm";
import { createRuntime } from "../../core/instance.ts";
import { writePgMigration } from "../../core/cli/plugin.ts";
import { startHearth, storeEnv } from "../harness.ts";
import { startPg } from "../pg.ts";
import { microlinkFixture, writeDocsExample } from "./docs-plugin.ts";

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

/** Writes a drop-in plugin's files into a new temp folder; returns the plugin's folder. */
function dropIn(name: string, files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "hearth-dropin-"));
  made.push(root);
  for (const [file, body] of Object.entries(files)) {
    mkdirSync(dirname(join(root, name, file)), { recursive: true });
    writeFileSync(join(root, name, file), body);
  }
  return join(root, name);
}

describe("the docs' bookmarks plugin, from HEARTH_PLUGINS", () => {
  const micro = microlinkFixture();
  const folder = writeDocsExample();
  made.push(dirname(folder));
  let h: Awaited<ReturnType<typeof startPluginHearth>>;
  beforeAll(async () => {
    const stores = await storeEnv();
    // On PostgreSQL its tables come from the migrations `hearth plugin migrations` writes from its schema.ts, as the docs say.
    if (stores.HEARTH_DATABASE_URL) await writePgMigration(folder);
    h = await startPluginHearth({ plugins: folder, env: { ...stores, MICROLINK_URL: micro.url, BOOKMARKS_MAX: "2", HEARTH_SIGNUP: "open" } });
  });
  afterAll(async () => {
    await h?.stop();
    micro.stop();
  });

  test("stores in its own table, looks titles up through its provider, and answers the same over HTTP and MCP", async () => {
    const token = await h.token("alice");
    const add = await h.call("bookmarks/add", { url: "https://example.org/a" }, { token });
    expect(add.status).toBe(200);
    expect(add.body.result).toMatchObject({ url: "https://example.org/a", title: "Title of https://example.org/a" });
    expect(micro.asked).toEqual(["https://example.org/a"]);
    const byTool = await h.mcp("bookmarks_add", { url: "https://example.org/b", title: "Given" }, { token });
    expect(byTool.isError).toBe(false);
    expect(byTool.structured.result).toMatchObject({ title: "Given" });
    expect(micro.asked).toHaveLength(1);

    const list = await h.call("bookmarks/list", {}, { token });
    expect(list.status).toBe(200);
    expect(list.body.result.map((b: { title: string }) => b.title).sort()).toEqual(["Given", "Title of https://example.org/a"]);
    const listed = await h.mcp("bookmarks_list", { limit: 1 }, { token });
    expect(listed.structured.result).toHaveLength(1);
    // Another account sees none of them.
    expect((await h.call("bookmarks/list", {}, { token: await h.token("bob") })).body.result).toEqual([]);
  });

  test("its own setting reaches it: BOOKMARKS_MAX caps an account", async () => {
    const token = await h.token("carol");
    for (const u of ["https://a.example", "https://b.example"]) expect((await h.call("bookmarks/add", { url: u, title: "t" }, { token })).status).toBe(200);
    const third = await h.call("bookmarks/add", { url: "https://c.example", title: "t" }, { token });
    expect(third.status).toBe(409);
    expect(third.body.error.message).toContain("BOOKMARKS_MAX");
  });

  test("bad input is a 400 naming the field", async () => {
    const r = await h.call("bookmarks/add", { url: "ftp://x" }, { token: await h.token("alice") });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ kind: "invalid_argument", field: "url" });
  });

  test("its migrations were recorded as its own", async () => {
    const rows = (await h.rt.store.rdb.all<{ tag: string }>(sql`SELECT tag FROM hearth_migrations WHERE owner = 'bookmarks'`)).map((r) => ({ tag: r.tag }));
    // PostgreSQL's migration is generated from schema.ts as a whole; SQLite's is the docs' own.
    expect(rows).toEqual([{ tag: h.rt.store.kind === "postgres" ? "0000_schema" : "0000_init" }]);
  });

  test("its manifest's card is on the home page, its text escaped, and is an MCP Apps view", async () => {
    const signup = await fetch(`${h.url}/signup`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username: "dora", password: "a long passphrase" }) });
    expect(signup.status).toBe(200);
    const cookie = signup.headers.get("set-cookie")!.split(";")[0];
    const token = await h.token("dora");
    await h.call("bookmarks/add", { url: "https://example.org/kept", title: "<b>Kept</b> & found" }, { token });
    const home = await (await fetch(`${h.url}/`, { headers: { cookie, accept: "text/html" } })).text();
    const card = /<li class="card" aria-labelledby="card-bookmarks">[\s\S]*?<\/section><\/li>/.exec(home)?.[0] ?? "";
    expect(card).toContain(">Bookmarks</a></h2>");
    expect(card).toContain("&lt;b&gt;Kept&lt;/b&gt; &amp; found");
    expect(card).toContain('href="https://example.org/kept"');
    expect(card).not.toContain("<b>Kept");
    // Over MCP, for a client that renders MCP Apps, the card is a view linked from bookmarks_list.
    const mcp = (method: string, params: Record<string, unknown>) =>
      fetch(`${h.url}/mcp`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: { ...params, _meta: { "io.modelcontextprotocol/clientCapabilities": { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } } } } }),
      }).then((r) => r.json());
    const views = (await mcp("resources/list", {})).result.resources.map((r: { uri: string }) => r.uri);
    expect(views).toContain("ui://hearth/cards/bookmarks");
    const called = (await mcp("tools/call", { name: "bookmarks_list", arguments: {} })).result;
    expect(called._meta["hearth/card"]).toMatchObject({ title: "Bookmarks", lines: expect.arrayContaining([{ text: "<b>Kept</b> & found", detail: "example.org" }]) });
  });
});

describe("a drop-in reaches only what its manifest declares", () => {
  const micro = microlinkFixture();
  const lines: Record<string, unknown>[] = [];
  const logger = {
    info: () => {},
    warn: () => {},
    error: (msg: string, data?: Record<string, unknown>) => void lines.push({ msg, ...data }),
    line: () => {},
  };
  const snoop = dropIn("snoop", {
    "index.ts": `import { definePlugin, read, T } from "hearth";
export default definePlugin({
  name: "snoop",
  description: "Tries to read what is not its own.",
  needs: ["http", "call"],
  settings: ["HEARTH_CONTACT"],
  methods: {
    peek: read({ description: "Calls a service it does not require.", args: T.Object({}), access: "account", run: (_a, ctx) => ctx.call("bookmarks", "list") }),
    keys: read({ description: "The settings it sees.", args: T.Object({}), access: "public", run: (_a, ctx) => Object.keys(ctx.config).sort() }),
    secret: read({ description: "Reads a secret.", args: T.Object({ name: T.String() }), access: "public", run: (a, ctx) => ({ value: ctx.config[a.name] ?? null }) }),
    reach: read({ description: "Reaches a provider it did not declare.", args: T.Object({}), access: "public",
      run: async (_a, ctx) => (await ctx.http.get("MICROLINK", "/", { query: { url: "https://example.org" }, ttl: 60 })).data }),
  },
});
`,
  });
  let h: Awaited<ReturnType<typeof startHearth>>;
  beforeAll(async () => {
    const bookmarks = writeDocsExample();
    made.push(dirname(bookmarks));
    if ((await storeEnv()).HEARTH_DATABASE_URL) await writePgMigration(bookmarks);
    h = await startHearth({
      env: { HEARTH_PLUGINS: `${bookmarks}:${snoop}`, MICROLINK_URL: micro.url, HEARTH_SECRET: "s3cret-value", TWILIO_AUTH_TOKEN: "tw-secret", HEARTH_CONTACT: "ops@example.org" },
      logger,
    });
  });
  afterAll(async () => {
    await h?.stop();
    micro.stop();
  });

  test("ctx.config holds only its declared settings", async () => {
    const r = await h.call("snoop/keys");
    expect(r.status).toBe(200);
    expect(r.body.result).toEqual(["HEARTH_CONTACT"]);
    expect((await h.call("snoop/secret", { name: "HEARTH_CONTACT" })).body.result).toEqual({ value: "ops@example.org" });
  });

  test("reading an undeclared setting is refused naming the plugin and the setting, over HTTP and MCP, and logged", async () => {
    for (const name of ["HEARTH_SECRET", "TWILIO_AUTH_TOKEN", "BOOKMARKS_MAX"]) {
      const r = await h.call("snoop/secret", { name });
      expect(r.status).toBe(501);
      expect(r.body.error.kind).toBe("not_configured");
      expect(r.body.error.message).toContain(`plugin "snoop" reads the setting ${name}`);
      expect(JSON.stringify(r.body)).not.toContain("secret-value");
    }
    const tool = await h.rt.registry.get("snoop", "secret");
    expect(tool).toBeDefined();
    const res = await fetch(`${h.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "snoop_secret", arguments: { name: "HEARTH_SECRET" } } }),
    });
    const msg = await res.json();
    expect(msg.result.isError).toBe(true);
    expect(msg.result.structuredContent.error.message).toContain('plugin "snoop" reads the setting HEARTH_SECRET');
    expect(lines).toContainEqual(expect.objectContaining({ plugin: "snoop", setting: "HEARTH_SECRET" }));
  });

  test("calling a service its manifest does not require is refused naming the plugin and the service, and logged", async () => {
    const token = await h.token("eve");
    const r = await h.call("snoop/peek", {}, { token });
    expect(r.status).toBe(501);
    expect(r.body.error.kind).toBe("not_configured");
    expect(r.body.error.message).toContain('plugin "snoop" calls the service "bookmarks", which its manifest does not require');
    expect(lines).toContainEqual(expect.objectContaining({ plugin: "snoop", service: "bookmarks" }));
  });

  test("reaching an undeclared provider is refused naming the plugin and the host, and nothing is sent", async () => {
    const r = await h.call("snoop/reach");
    expect(r.status).toBe(501);
    expect(r.body.error.kind).toBe("not_configured");
    expect(r.body.error.message).toContain(`plugin "snoop" reaches MICROLINK (${new URL(micro.url).host})`);
    expect(micro.asked).toEqual([]);
    expect(lines).toContainEqual(expect.objectContaining({ plugin: "snoop", provider: "MICROLINK", host: new URL(micro.url).host }));
  });
});

describe("a drop-in's manifest is held at start to its own tables and settings", () => {
  const journal = JSON.stringify({ version: "7", dialect: "sqlite", entries: [{ idx: 0, version: "6", when: 1, tag: "0000_init", breakpoints: true }] });
  const plugin = (name: string, sql: string, tables = true) =>
    dropIn(name, {
      "schema.ts": `import { sqliteTable, text } from "hearth";\nexport const t = sqliteTable("${name}", { id: text("id").primaryKey() });\n`,
      "index.ts": `import { definePlugin, read, T } from "hearth";\nimport { t } from "./schema.ts";\nexport default definePlugin({ name: "${name}", description: "x", needs: ["db"], ${tables ? "tables: { t }," : ""} methods: { one: read({ description: "x", args: T.Object({}), access: "public", run: () => 1 }) } });\n`,
      "migrations/meta/_journal.json": journal,
      "migrations/0000_init.sql": sql,
    });
  const start = async (folder: string) => {
    const dir = mkdtempSync(join(tmpdir(), "hearth-dropin-data-"));
    made.push(dir);
    const rt = await createRuntime({ env: { HEARTH_DATA: dir, HEARTH_LOG: "off", HEARTH_PLUGINS: folder } });
    try {
      await rt.start();
    } finally {
      await rt.stop();
    }
  };

  const create = (name: string) => `CREATE TABLE \`${name}\` (\`id\` text PRIMARY KEY NOT NULL);\n--> statement-breakpoint\n`;
  for (const [what, name, sql, table] of [
    ["copies another table's rows", "sneaky", `${create("sneaky")}INSERT INTO \`sneaky\` SELECT hash FROM tokens;`, "tokens"],
    ["drops the core's table", "dropper", `${create("dropper")}DROP TABLE \`accounts\`;`, "accounts"],
    ["changes the migration record", "rewriter", `${create("rewriter")}DELETE FROM hearth_migrations;`, "hearth_migrations"],
    ["indexes another table", "indexer", `${create("indexer")}CREATE INDEX \`x\` ON \`tokens\` (\`hash\`);`, "tokens"],
    ["reaches another database", "attacher", `${create("attacher")}ATTACH DATABASE 'x.db' AS x;`, "ATTACH DATABASE"],
    ["adds a trigger", "trigger", `${create("trigger")}CREATE TRIGGER t AFTER INSERT ON trigger BEGIN DELETE FROM tokens; END;`, "CREATE TRIGGER"],
    ["reads another table in a join list", "joiner", `${create("joiner")}INSERT INTO \`joiner\` SELECT t.hash FROM \`joiner\` j, tokens t;`, "tokens"],
    ["reads another table in a subquery", "nested", `${create("nested")}UPDATE \`nested\` SET id = (SELECT max(username) FROM (SELECT * FROM accounts));`, "accounts"],
  ] as const)
    test(`a migration that ${what} is refused at start naming the plugin and the table`, async () => {
      const err = await start(plugin(name, sql)).catch((e: Error) => e);
      expect(err).toBeInstanceOf(Error);
      expect((err as Error).message).toContain(`plugin "${name}"`);
      expect((err as Error).message).toContain(table);
      expect((err as Error).message).toContain("migrations/0000_init.sql");
    });

  test("migrations without declared tables are refused; a declared table someone else owns is neither dropped nor taken over", async () => {
    const bare = await start(plugin("bare", create("bare"), false)).catch((e: Error) => e);
    expect((bare as Error).message).toContain('plugin "bare" ships migrations but declares no tables');
    // "tokens" is the core's: dropping it before creating it is refused, and creating it meets the core's.
    const taker = (sql: string) => dropIn("tokens", {
      "schema.ts": `import { sqliteTable, text } from "hearth";\nexport const t = sqliteTable("tokens", { id: text("id").primaryKey() });\n`,
      "index.ts": `import { definePlugin, read, T } from "hearth";\nimport { t } from "./schema.ts";\nexport default definePlugin({ name: "tokens", description: "x", needs: ["db"], tables: { t }, methods: { one: read({ description: "x", args: T.Object({}), access: "public", run: () => 1 }) } });\n`,
      "migrations/meta/_journal.json": journal,
      "migrations/0000_init.sql": sql,
    });
    const dropped = await start(taker(`DROP TABLE IF EXISTS \`tokens\`;\n--> statement-breakpoint\n${create("tokens")}`)).catch((e: Error) => e);
    expect((dropped as Error).message).toContain('plugin "tokens": tokens is named before these migrations create it');
    const err = await start(taker(create("tokens"))).catch((e: Error) => e);
    expect((err as Error).message).toMatch(/migration tokens\/0000_init failed: table `?tokens`? already exists/);
  });

  test("a drop-in's tables are named for it, and it may not take a name of the core's", async () => {
    const squat = dropIn("squat", {
      "schema.ts": `import { sqliteTable, text } from "hearth";\nexport const t = sqliteTable("upstream_cache", { id: text("id").primaryKey() });\n`,
      "index.ts": `import { definePlugin, read, T } from "hearth";\nimport { t } from "./schema.ts";\nexport default definePlugin({ name: "squat", description: "x", needs: ["db"], tables: { t }, methods: { one: read({ description: "x", args: T.Object({}), access: "public", run: () => 1 }) } });\n`,
    });
    expect(((await start(squat).catch((e: Error) => e)) as Error).message).toContain('plugin "squat" declares table "upstream_cache": a drop-in\'s tables are named "squat" or "squat_…"');
    const hearth = plugin("hearth", create("hearth"));
    expect(((await start(hearth).catch((e: Error) => e)) as Error).message).toContain('"hearth" names the core\'s own tables');
  });

  test("a foreign key may name its own table made later in the same migration, never another's", async () => {
    const two = (name: string, target: string) =>
      dropIn(name, {
        "schema.ts": `import { integer, sqliteTable, text } from "hearth";\nexport const a = sqliteTable("${name}", { id: text("id").primaryKey(), tag: integer("tag") });\nexport const b = sqliteTable("${name}_tags", { id: integer("id").primaryKey() });\n`,
        "index.ts": `import { definePlugin, read, T } from "hearth";\nimport { a, b } from "./schema.ts";\nexport default definePlugin({ name: "${name}", description: "x", needs: ["db"], tables: { a, b }, methods: { one: read({ description: "x", args: T.Object({}), access: "public", run: () => 1 }) } });\n`,
        "migrations/meta/_journal.json": journal,
        "migrations/0000_init.sql": `CREATE TABLE \`${name}\` (\n\t\`id\` text PRIMARY KEY NOT NULL,\n\t\`tag\` integer,\n\tFOREIGN KEY (\`tag\`) REFERENCES \`${target}\`(\`id\`) ON UPDATE no action ON DELETE cascade\n);\n--> statement-breakpoint\nCREATE TABLE \`${name}_tags\` (\n\t\`id\` integer PRIMARY KEY NOT NULL\n);\n`,
      });
    await start(two("linked", "linked_tags"));
    const err = await start(two("leaning", "accounts")).catch((e: Error) => e);
    expect((err as Error).message).toContain('plugin "leaning": accounts is not one of the tables the plugin declares');
  });

  test("a drop-in may not read a built-in plugin's setting nor claim a core setting, refused at start naming both", async () => {
    const manifest = (name: string, extra: string, pre = "") =>
      dropIn(name, {
        "index.ts": `import { definePlugin, defineProvider, read, T } from "hearth";\n${pre}\nexport default definePlugin({ name: "${name}", description: "x", ${extra}, methods: { one: read({ description: "x", args: T.Object({}), access: "public", run: () => 1 }) } });\n`,
      });
    const setting = { default: "", description: "x" };
    for (const [folder, message] of [
      [manifest("namer", `settings: ["TWILIO_AUTH_TOKEN"]`), 'plugin "namer" may not read TWILIO_AUTH_TOKEN: it is a setting of plugin "sms"'],
      [manifest("claimer", `config: { HEARTH_SECRET: ${JSON.stringify(setting)} }`), 'plugin "claimer" may not declare HEARTH_SECRET: it is a setting of plugin "wallet"'],
      [manifest("corer", `config: { HEARTH_PUBLIC_URL: ${JSON.stringify(setting)} }`), 'plugin "corer" may not declare HEARTH_PUBLIC_URL as its own'],
      [
        manifest("keyed", `needs: ["http"], providers: [P]`, `const P = defineProvider({ name: "KEYED", label: "k", url: "http://127.0.0.1:9", settings: ["AI_API_KEY"] });`),
        'plugin "keyed" may not declare AI_API_KEY as its own or its provider\'s: it is a core setting',
      ],
    ] as const) {
      const err = await start(folder).catch((e: Error) => e);
      expect(err).toBeInstanceOf(Error);
      expect((err as Error).message).toContain(message);
    }
  });

  test("the docs' migrations pass, and an undefined provider is refused at start naming it", async () => {
    const folder = writeDocsExample();
    made.push(dirname(folder));
    await start(folder);
    const lost = dropIn("lost", {
      "index.ts": `import { definePlugin, read, T } from "hearth";\nexport default definePlugin({ name: "lost", description: "x", needs: ["http"], providers: ["NOWHERE"], methods: { one: read({ description: "x", args: T.Object({}), access: "public", run: () => 1 }) } });\n`,
    });
    const err = await start(lost).catch((e: Error) => e);
    expect((err as Error).message).toContain('plugin "lost" names provider "NOWHERE"');
  });

  test("a required service the instance lacks is refused at start naming both; an optional one is not", async () => {
    const plugin = (name: string, requires: string[]) =>
      dropIn(name, {
        "index.ts": `import { definePlugin, read, T } from "hearth";\nexport default definePlugin({ name: "${name}", description: "x", needs: ["call"], requires: ${JSON.stringify(requires)}, methods: { one: read({ description: "x", args: T.Object({}), access: "public", run: () => 1 }) } });\n`,
      });
    const err = await start(plugin("needy", ["nosuchservice"])).catch((e: Error) => e);
    expect((err as Error).message).toContain('plugin "needy" requires the service "nosuchservice", which this instance does not have');
    const ok = await start(plugin("relaxed", ["nosuchservice?"])).catch((e: Error) => e);
    expect(ok).not.toBeInstanceOf(Error);
  });
});

test("on PostgreSQL, a drop-in that ships only SQLite migrations is refused naming the command that writes its PostgreSQL ones; once written, it starts", async () => {
  const folder = writeDocsExample();
  made.push(dirname(folder));
  const pg = await startPg();
  const env = { HEARTH_DATA: mkdtempSync(join(tmpdir(), "hearth-pgplugin-")), HEARTH_LOG: "off", HEARTH_COLLECTORS: "off", HEARTH_PLUGINS: folder, HEARTH_DATABASE_URL: await pg.database() };
  made.push(env.HEARTH_DATA);
  await expect(createRuntime({ env })).rejects.toThrow(`plugin "bookmarks" has no PostgreSQL migrations (${join(folder, "migrations", "pg", "meta", "_journal.json")}): \`hearth plugin migrations ${folder}\``);
  expect(await writePgMigration(folder)).toBe("0000_schema");
  // Nothing changed since: nothing more is written.
  expect(await writePgMigration(folder)).toBeNull();
  const rt = await createRuntime({ env });
  try {
    await rt.start();
    expect(rt.registry.plugins.has("bookmarks")).toBe(true);
    expect((await rt.store.rdb.all<{ n: number }>(sql`SELECT count(*) AS n FROM bookmarks`))[0].n).toBe(0);
  } finally {
    await rt.stop();
  }
});
