// one store: what a drop-in's author is told; the test helper's PostgreSQL runs start a cluster of their own in either pass, and drop-ins' own tables run on both stores in test/core/plugins.test.ts
// What a drop-in's author is told, by the instance and by `hearth`, when a
// plugin is new: a capability it forgot to declare, where its settings are
// documented, a command or a syntax error that stops start-up, and the test
// helper on PostgreSQL. Each plugin is a folder in a temp folder importing
// only "hearth", loaded by a real instance.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createRuntime } from "../../core/instance.ts";
import { startHearth as startPluginHearth } from "../../core/testing.ts";
import { startHearth } from "../harness.ts";
import { startPg } from "../pg.ts";

const root = join(import.meta.dir, "../..");
const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

/** Writes a drop-in plugin's files into a new temp folder; returns the plugin's folder. */
function dropIn(name: string, files: Record<string, string>): string {
  const parent = mkdtempSync(join(tmpdir(), "hearth-dropin-"));
  made.push(parent);
  for (const [file, body] of Object.entries(files)) {
    mkdirSync(dirname(join(parent, name, file)), { recursive: true });
    writeFileSync(join(parent, name, file), body);
  }
  return join(parent, name);
}

async function run(cmd: string[], env: Record<string, string> = {}) {
  const p = Bun.spawn(cmd, { cwd: root, env: { ...process.env, HEARTH_LOG: "off", ...env }, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { stdout, stderr, code };
}

const greeter = dropIn("greeter", {
  "index.ts": `import { definePlugin, read, T } from "hearth";
export default definePlugin({
  name: "greeter",
  description: "Says hello, and forgets to declare the index.",
  needs: ["db"],
  config: {
    GREETER_WORD: { default: "hello", description: "The word each greeting starts with." },
    GREETER_TIMES: { default: "1", description: "How many times a greeting repeats it." },
  },
  methods: {
    hello: read({ description: "A greeting.", args: T.Object({}), access: "public", run: (_a, ctx) => ({ text: ctx.config.GREETER_WORD }) }),
    search: read({ description: "Searches what it never declared.", args: T.Object({ q: T.String() }), access: "public", run: (a, ctx) => ctx.index.search({ query: a.q }) }),
  },
});
`,
});

describe("a method touching a capability its manifest does not declare", () => {
  const errors: Record<string, unknown>[] = [];
  const logger = { info: () => {}, warn: () => {}, error: (msg: string, data?: Record<string, unknown>) => void errors.push({ msg, ...data }), line: () => {} };
  let h: Awaited<ReturnType<typeof startHearth>>;
  afterAll(() => h?.stop());

  test("answers 501 naming the plugin and the capability, over HTTP and MCP, and is logged", async () => {
    h = await startHearth({ env: { HEARTH_PLUGINS: greeter }, logger });
    expect((await h.call("greeter/hello")).body.result).toEqual({ text: "hello" });
    const r = await h.call("greeter/search", { q: "x" });
    expect(r.status).toBe(501);
    expect(r.body.error.kind).toBe("not_configured");
    expect(r.body.error.message).toBe('plugin "greeter" uses ctx.index without declaring "index" in needs: add it to the plugin\'s needs');
    expect(JSON.stringify(r.body)).not.toContain("at ");
    const res = await fetch(`${h.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "greeter_search", arguments: { q: "x" } } }),
    });
    const msg = await res.json();
    expect(msg.result.isError).toBe(true);
    expect(msg.result.structuredContent.error.message).toContain('plugin "greeter" uses ctx.index without declaring "index"');
    expect(errors).toContainEqual(expect.objectContaining({ plugin: "greeter", capability: "index" }));
  });
});

test("a drop-in's settings are in config/example.env and hearth help, with their defaults and descriptions", async () => {
  const out = join(dirname(greeter), "example.env");
  const wrote = await run(["bun", "core/configdoc.ts", out], { HEARTH_PLUGINS: greeter });
  expect(wrote.code).toBe(0);
  const env = readFileSync(out, "utf8");
  expect(env).toContain(`# --- greeter (drop-in: ${greeter}) ---\n# The word each greeting starts with.\nGREETER_WORD=hello\n\n# How many times a greeting repeats it.\nGREETER_TIMES=1\n`);
  // The built-in plugins' part is the committed file's, unchanged.
  expect(env.startsWith(readFileSync(join(root, "config/example.env"), "utf8"))).toBe(true);
  const help = await run(["bun", "core/cli/main.ts", "help", "greeter"], { HEARTH_PLUGINS: greeter });
  expect(help.code).toBe(0);
  expect(help.stdout).toContain("settings:\n  GREETER_WORD=hello\n      The word each greeting starts with.\n  GREETER_TIMES=1\n      How many times a greeting repeats it.\n");
});

test("a command named like one of hearth's own is refused at start, naming the plugin and the command", async () => {
  for (const command of ["token", "backup"]) {
    const folder = dropIn(`shadow${command}`, {
      "index.ts": `import { definePlugin, read, T } from "hearth";
export default definePlugin({
  name: "shadow${command}",
  description: "Adds a command hearth already has.",
  cli: { ${command}: { summary: "mine", usage: "hearth ${command}", run: () => 0 } },
  methods: { one: read({ description: "x", args: T.Object({}), access: "public", run: () => 1 }) },
});
`,
    });
    const data = mkdtempSync(join(tmpdir(), "hearth-dropin-data-"));
    made.push(data);
    await expect(createRuntime({ env: { HEARTH_DATA: data, HEARTH_LOG: "off", HEARTH_PLUGINS: folder } })).rejects.toThrow(
      `${join(folder, "index.ts")}: cli.${command}: plugin "shadow${command}" adds the command "${command}", which is a command of hearth itself`,
    );
    // And the CLI says so rather than run either.
    const cli = await run(["bun", "core/cli/main.ts", "help"], { HEARTH_PLUGINS: folder });
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain(`adds the command "${command}", which is a command of hearth itself`);
  }
});

test("a syntax error in a plugin stops start-up naming its file, line and column", async () => {
  const folder = dropIn("broken", {
    "index.ts": `import { definePlugin, read, T } from "hearth";
import { shape } from "./shape.ts";
export default definePlugin({ name: "broken", description: "x", methods: { one: read({ description: "x", args: T.Object({}), access: "public", run: () => shape }) } });
`,
    "shape.ts": `export const shape = {
  width: 1,
  height: 2
  depth: 3,
};
`,
  });
  const data = mkdtempSync(join(tmpdir(), "hearth-dropin-data-"));
  made.push(data);
  const err = (await createRuntime({ env: { HEARTH_DATA: data, HEARTH_LOG: "off", HEARTH_PLUGINS: folder } }).catch((e: Error) => e)) as Error;
  expect(err).toBeInstanceOf(Error);
  expect(err.message).toContain(`invalid plugin manifest ${join(folder, "index.ts")}: import: ${join(folder, "shape.ts")}:4:3: Expected "}" but found "depth"`);
  expect(err.message).toContain("4 |   depth: 3,");
});

describe("the test helper (hearth/testing)", () => {
  test("runs on a new PostgreSQL database when given a server, and drops it and its folder on stop", async () => {
    const pg = await startPg();
    const server = `postgres://postgres@127.0.0.1:${pg.port}/postgres`;
    const databases = async () => ((await pg.admin("SELECT datname FROM pg_database WHERE datname LIKE 'hearth_test_%'")) as { datname: string }[]).map((r) => r.datname);
    const before = await databases();
    const h = await startPluginHearth({ plugins: greeter, database: server });
    const [mine] = (await databases()).filter((d) => !before.includes(d));
    expect(mine).toBeString();
    expect(h.rt.config.HEARTH_DATABASE_URL).toEndWith(`/${mine}`);
    expect((await h.call("greeter/hello")).body.result).toEqual({ text: "hello" });
    await h.stop();
    await h.stop();
    expect(await databases()).toEqual(before);
    expect(existsSync(h.dir)).toBe(false);
  });

  test("HEARTH_TEST_DATABASE_URL asks for it too; a start that fails leaves neither folder nor database behind", async () => {
    const pg = await startPg();
    const databases = async () => ((await pg.admin("SELECT datname FROM pg_database WHERE datname LIKE 'hearth_test_%'")) as { datname: string }[]).map((r) => r.datname);
    const before = await databases();
    const broken = dropIn("refused", {
      "index.ts": `import { definePlugin, read, T } from "hearth";
export default definePlugin({ name: "refused", description: "x", needs: ["nothing"], methods: { one: read({ description: "x", args: T.Object({}), access: "public", run: () => 1 }) } });
`,
    });
    // The helper's temp folder is made in a folder of this test's own, to see that none is left.
    const temp = mkdtempSync(join(tmpdir(), "hearth-helper-tmp-"));
    made.push(temp);
    const tmp = process.env.TMPDIR;
    process.env.TMPDIR = temp;
    process.env.HEARTH_TEST_DATABASE_URL = `postgres://postgres@127.0.0.1:${pg.port}/postgres`;
    try {
      await expect(startPluginHearth({ plugins: broken })).rejects.toThrow('"nothing"');
    } finally {
      delete process.env.HEARTH_TEST_DATABASE_URL;
      if (tmp === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = tmp;
    }
    expect(await databases()).toEqual(before);
    expect(readdirSync(temp)).toEqual([]);
  });
});
