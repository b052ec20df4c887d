import { expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Type as T } from "@sinclair/typebox";
import { createRuntime } from "../../core/instance.ts";
import { startHearth } from "../harness.ts";
import { buildRegistry, ManifestError, Registry } from "../../core/registry.ts";
import { definePlugin, read } from "../../core/plugin.ts";

const fixtures = join(import.meta.dir, "../fixtures");

test("every built-in plugin loads and names follow the spec", async () => {
  const reg = await buildRegistry({ pluginsDir: join(import.meta.dir, "../../plugins") });
  expect(reg.services()).toContain("notes");
  for (const m of reg.list()) {
    expect(m.path).toBe(`${m.service}/${m.name}`);
    expect(m.tool).toBe(`${m.service}_${m.name}`);
  }
});

test("a drop-in plugin folder needs no edit anywhere else", async () => {
  const reg = await buildRegistry({ pluginsDir: join(import.meta.dir, "../../plugins"), extra: join(fixtures, "plugins") });
  expect(reg.get("probe", "echo")?.tool).toBe("probe_echo");
});

test("a bad manifest stops start-up naming the file and the field", async () => {
  const err = await buildRegistry({ extra: join(fixtures, "bad") }).catch((e) => e);
  expect(err).toBeInstanceOf(ManifestError);
  expect(err.message).toContain(join(fixtures, "bad/badaccess/index.ts"));
  expect(err.message).toContain("methods.look.access");
});

test("manifest rules", () => {
  const ok = { name: "x", description: "d", methods: { m: read({ description: "d", args: T.Object({}), access: "public", run: () => 1 }) } };
  const dav = { type: "calendar", component: "VEVENT", displayName: "X", list: () => [], render: () => "", put: async () => ({ id: "", uid: "" }), remove: async () => {} };
  const cases: [unknown, string][] = [
    [{ ...ok, name: "Bad Name" }, "name"],
    [{ ...ok, description: "" }, "description"],
    [{ ...ok, needs: ["tele port"] }, "needs"],
    [{ ...ok, provides: { capabilities: { tele: "port" } } }, "provides.capabilities.tele"],
    [{ ...ok, provides: { views: [{ views: () => [] }] } }, "provides.views[0]"],
    [{ ...ok, methods: {} }, "methods"],
    [{ ...ok, methods: { m: { ...ok.methods.m, args: { type: "object" } } } }, "methods.m.args"],
    [{ ...ok, methods: { m: { ...ok.methods.m, price: -1 } } }, "methods.m.price"],
    [{ ...ok, methods: { m: { ...ok.methods.m, run: "no" } } }, "methods.m.run"],
    [{ ...ok, methods: { "Bad-Name": ok.methods.m } }, "methods.Bad-Name"],
    [{ ...ok, routes: [{ method: "GET", path: "/other/x", run: () => new Response() }] }, "routes[0].path"],
    [{ ...ok, routes: [{ method: "*", path: "/x/dav", run: () => new Response(), streams: "PUT" }] }, "routes[0].streams"],
    [{ ...ok, routes: [{ method: "GET", path: "/x/dav", run: () => new Response(), streams: ["PUT"] }] }, "routes[0].streams"],
    [{ ...ok, config: { lower: { default: "", description: "" } } }, "config.lower"],
    [{ ...ok, needs: ["call"], dav: { type: "folder" } }, "dav.type"],
    [{ ...ok, needs: ["call"], dav: { ...dav, component: "VJOURNAL" } }, "dav.component"],
    [{ ...ok, needs: ["call"], dav: { ...dav, put: "no" } }, "dav.put"],
    [{ ...ok, dav }, "needs"],
    [{ ...ok, needs: ["call"], requires: "files" }, "requires"],
    [{ ...ok, needs: ["call"], requires: ["Files"] }, "requires"],
    [{ ...ok, requires: ["files"] }, "needs"],
    [{ ...ok, card: { title: "X", method: "other", render: () => null } }, "card.method"],
    [{ ...ok, card: { title: "", method: "m", render: () => null } }, "card.title"],
    [{ ...ok, card: { title: "X", method: "m" } }, "card.render"],
    [{ ...ok, card: { title: "X", method: "m", render: () => null, choice: { arg: "nope", label: "L" } } }, "card.choice.arg"],
    [{ ...ok, cli: { Bad: { summary: "s", usage: "u", run: () => 0 } } }, "cli.Bad"],
    [{ ...ok, cli: { go: { summary: "s", usage: "u" } } }, "cli.go.run"],
    [{ ...ok, geocoder: { method: "other", arg: "q", read: () => null } }, "geocoder.method"],
    [{ ...ok, integration: { label: "L", settings: ["NOT_MINE"] } }, "integration.settings"],
  ];
  for (const [def, field] of cases) {
    const reg = new Registry();
    let caught: unknown;
    try {
      reg.add(def, "plugins/x/index.ts", { builtin: true, migrations: null });
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ManifestError);
    expect((caught as ManifestError).field).toBe(field);
  }
  const reg = new Registry();
  reg.add(definePlugin(ok), "plugins/x/index.ts", { builtin: true, migrations: null });
  expect(() => reg.add(definePlugin(ok), "elsewhere/x/index.ts", { builtin: false, migrations: null })).toThrow(/already provided/);
});

test("method classes: checked at start, derived where unsaid, and every built-in that sends outside says so", async () => {
  const m = read({ description: "d", args: T.Object({}), access: "public", run: () => 1 });
  const cases: [Record<string, unknown>, string][] = [
    [{ outbound: "yes" }, "methods.m.outbound"],
    [{ untrusted: 1 }, "methods.m.untrusted"],
    [{ kind: "write", costs: false, price: 3 }, "methods.m.costs"],
    [{ kind: "write", costs: false, price: () => 1 }, "methods.m.costs"],
    [{ destructive: true }, "methods.m.destructive"],
  ];
  for (const [extra, field] of cases) {
    const caught = (() => {
      try {
        new Registry().add({ name: "x", description: "d", methods: { m: { ...m, ...extra } } }, "plugins/x/index.ts", { builtin: false, migrations: null });
      } catch (e) {
        return e;
      }
    })();
    expect(caught).toBeInstanceOf(ManifestError);
    expect((caught as ManifestError).field).toBe(field);
  }
  const reg = new Registry();
  reg.add({ name: "x", description: "d", methods: { m: { ...m, price: 2 }, n: { ...m, untrusted: true } } }, "plugins/x/index.ts", { builtin: false, migrations: null });
  expect(reg.get("x", "m")!.classes).toEqual({ destructive: false, outbound: false, untrusted: false, costs: true });
  expect(reg.get("x", "n")!.classes).toEqual({ destructive: false, outbound: false, untrusted: true, costs: false });

  const built = await buildRegistry({ pluginsDir: join(import.meta.dir, "../../plugins") });
  const having = (k: "outbound" | "untrusted" | "destructive") => built.list().filter((e) => e.classes[k]).map((e) => e.path);
  expect(having("outbound")).toEqual([
    "apps/build", "apps/create", "apps/edit", "apps/fork", "apps/run", "blog/create", "blog/update", "chat/send",
    "docs/write", "mail/send", "sms/send", "sms/verify", "wallet/pay", "web/fetch",
  ]);
  for (const p of ["mail/inbox", "mail/search", "web/fetch", "news/read", "social/list", "chat/messages", "recall/search", "sms/history", "blog/read", "apps/read"])
    expect(having("untrusted")).toContain(p);
  for (const p of ["notes/delete", "notes/add", "files/delete", "events/delete", "docs/write"]) expect(having("destructive")).toContain(p);
  expect(built.get("wallet", "pay")!.classes.costs).toBe(true);
  expect(built.get("notes", "list")!.classes).toEqual({ destructive: false, outbound: false, untrusted: false, costs: false });
});

test("a plugin needing a capability that neither the core nor a plugin provides stops start-up, naming it", async () => {
  const dir = mkdtempSync(join(tmpdir(), "hearth-needs-"));
  try {
    const write = (name: string, text: string) => {
      mkdirSync(join(dir, "plugins", name), { recursive: true });
      writeFileSync(join(dir, "plugins", name, "index.ts"), text);
    };
    const method = `methods: { m: read({ description: "d", args: T.Object({}), access: "public", run: (_a, ctx) => ctx.tele.port() }) }`;
    write("asker", `import { definePlugin, read, T } from "hearth";\nexport default definePlugin({ name: "asker", description: "d", needs: ["tele"], ${method} });\n`);
    const env = { HEARTH_DATA: join(dir, "data"), HEARTH_LOG: "off", HEARTH_PLUGINS: join(dir, "plugins") };
    const err = await createRuntime({ env }).catch((e) => e);
    expect(err).toBeInstanceOf(ManifestError);
    expect(err.field).toBe("needs");
    expect(err.message).toContain('plugin "asker" needs unknown capability "tele"');
    // Once another plugin provides it, the same manifest loads and the capability reaches its ctx.
    write("giver", `import { definePlugin, read, T } from "hearth";\nexport default definePlugin({ name: "giver", description: "d", provides: { capabilities: { tele: (s) => ({ port: () => s.service }) } }, methods: { m: read({ description: "d", args: T.Object({}), access: "public", run: () => 1 }) } });\n`);
    const h = await startHearth({ env: { HEARTH_PLUGINS: env.HEARTH_PLUGINS } });
    try {
      const r = await h.call("asker/m");
      expect(r.status).toBe(200);
      expect(r.body.result).toBe("asker");
    } finally {
      await h.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a CLI command may not take a service's name nor one another plugin adds", async () => {
  const { mkdtempSync, mkdirSync, writeFileSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const root = mkdtempSync(join(tmpdir(), "hearth-cli-names-"));
  const plugin = (name: string, command: string) => {
    mkdirSync(join(root, name));
    writeFileSync(
      join(root, name, "index.ts"),
      `import { definePlugin, read, T } from "hearth";\nexport default definePlugin({ name: "${name}", description: "x", cli: { "${command}": { summary: "s", usage: "hearth ${command}", run: () => 0 } }, methods: { one: read({ description: "x", args: T.Object({}), access: "public", run: () => 1 }) } });\n`,
    );
  };
  try {
    plugin("alpha", "notes");
    const named = await buildRegistry({ pluginsDir: join(import.meta.dir, "../../plugins"), extra: root }).catch((e) => e);
    expect(named.message).toContain('plugin "alpha" adds the command "notes", which is a service\'s name');
    rmSync(join(root, "alpha"), { recursive: true });
    plugin("gamma", "go");
    plugin("delta", "go");
    const twice = await buildRegistry({ extra: root }).catch((e) => e);
    expect(twice.message).toContain('plugin "gamma" adds the command "go", which plugin "delta" adds too');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("a drop-in may not take the name of a core module's tables (dav, oauth)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "hearth-reserved-"));
  try {
    mkdirSync(join(dir, "plugins", "dav"), { recursive: true });
    writeFileSync(
      join(dir, "plugins", "dav", "index.ts"),
      `import { definePlugin, read, T } from "hearth";\nexport default definePlugin({ name: "dav", description: "d", methods: { m: read({ description: "d", args: T.Object({}), access: "public", run: () => 1 }) } });\n`,
    );
    const err = await createRuntime({ env: { HEARTH_DATA: join(dir, "data"), HEARTH_LOG: "off", HEARTH_PLUGINS: join(dir, "plugins") } }).catch((e) => e);
    expect(err).toBeInstanceOf(ManifestError);
    expect(err.message).toContain(`"dav" names the core's own tables and records`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
