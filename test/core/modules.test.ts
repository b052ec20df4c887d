// one store: how core modules are wired; starts no instance of the pass's store
// Core modules declare what they bring; wiring them refuses a requirement no
// listed module meets and a name two modules claim, and an instance serves
// what the modules it was wired with declare, and nothing it was not.
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { listen } from "../../core/http/serve.ts";
import { coreWiring, loadRegistry } from "../../core/instance.ts";
import { defineModule, wire, WiringError } from "../../core/module.ts";
import { Store } from "../../core/db/index.ts";
import { blobBackend, makeBlobs } from "../../core/blobs.ts";
import { readMigrations } from "../../core/db/migrate.ts";
import { Runtime } from "../../core/runtime.ts";
import { storeModule } from "../../core/capabilities.ts";
import { authModule } from "../../core/auth/module.ts";

test("a module requiring one that is not wired, or two modules claiming one name, are refused by name", () => {
  const a = defineModule({ name: "a", requires: ["b"], provides: { capabilities: { x: () => 1 } } });
  expect(() => wire([a])).toThrow(new WiringError('core module "a" requires "b", which is not wired'));
  const b = defineModule({ name: "b", provides: { capabilities: { x: () => 2 } } });
  expect(() => wire([a, b])).toThrow(new WiringError('core modules "a" and "b" both provide the capability "x"'));
  const c = defineModule({ name: "c", provides: { cli: { go: { summary: "", usage: "", run: async () => 0 } } } });
  expect(() => wire([c, { ...c, name: "d" }])).toThrow(/"c" and "d" both provide the command "go"/);
  expect(() => wire([c, c])).toThrow(/listed twice/);
  expect([...wire([{ ...a, requires: [] }, c]).cli.keys()]).toEqual(["go"]);
});

test("the core's modules wire cleanly, and every capability a built-in plugin needs is provided", async () => {
  const { registry } = await loadRegistry();
  const provided = new Set([...coreWiring.capabilities.keys(), ...[...registry.plugins.values()].flatMap((p) => Object.keys(p.def.provides?.capabilities ?? {}))]);
  for (const p of registry.plugins.values()) for (const n of p.def.needs ?? []) expect(`${p.def.name}: ${n} ${provided.has(n)}`).toBe(`${p.def.name}: ${n} true`);
});

// An instance wired with the store and accounts alone, and no plugins: its pages and routes are those modules' own.
const dir = mkdtempSync(join(tmpdir(), "hearth-modules-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("an instance serves the routes of the modules it was wired with, and no others", async () => {
  mkdirSync(join(dir, "no-plugins"));
  const { registry, config } = await loadRegistry({ env: { HEARTH_DATA: dir, HEARTH_LOG: "off" }, pluginsDir: join(dir, "no-plugins") });
  const store = new Store(join(dir, "hearth.db"));
  const wiring = wire([storeModule, authModule]);
  const rt = new Runtime({ registry, config, dataDir: dir, store, blobs: makeBlobs(blobBackend(config, dir), store, config), wiring, coreMigrations: readMigrations(join(import.meta.dir, "../../core/db/migrations")) });
  rt.migrate();
  const app = listen(rt, { port: 0, hostname: "127.0.0.1" });
  try {
    expect((await fetch(`${app.url}/signin`)).status).toBe(200);
    // Payments and MCP were not wired: no price list, no /mcp.
    expect((await fetch(`${app.url}/api/v1/prices`)).status).toBe(404);
    expect((await fetch(`${app.url}/mcp`, { method: "POST", body: "{}" })).status).toBe(404);
  } finally {
    await app.stop();
    await rt.stop();
  }
});
