// one store: tools/list and its schemas against dispatch's checks, which refuse before the store is reached; tool calls run on both stores in test/mcp/parity.test.ts
// tools/list is the registry, exactly, and every inputSchema is a JSON Schema
// that a real validator accepts and that agrees with what dispatch enforces.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import Ajv2020 from "ajv/dist/2020.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startHearth, type Hearth } from "../harness.ts";
import { minimalArgs } from "./args.ts";
import { rpc } from "./client.ts";

let h: Hearth;
let tools: Tool[];

beforeAll(async () => {
  h = await startHearth();
  const r = await rpc(h.url, "tools/list");
  expect(r.status).toBe(200);
  tools = r.body.result.tools;
});
afterAll(() => h.stop());

test("tools/list holds exactly the registered methods, once each, named <service>_<method>", () => {
  const names = tools.map((t) => t.name);
  expect(new Set(names).size).toBe(names.length);
  expect(names.sort()).toEqual(
    h.rt.registry
      .list()
      .map((e) => `${e.service}_${e.name}`)
      .sort(),
  );
  for (const t of tools) expect(t.name).toMatch(/^[a-z][a-z0-9]*_[a-z][a-z0-9_]*$/);
});

test("every inputSchema is a valid JSON Schema (2020-12) of an object", () => {
  const ajv = new Ajv2020({ strictSchema: true, strictTypes: false, strictRequired: false, validateFormats: false, allErrors: true });
  for (const t of tools) {
    const ok = ajv.validateSchema(t.inputSchema);
    if (!ok) throw new Error(`${t.name}: ${ajv.errorsText(ajv.errors)}`);
    expect(() => ajv.compile(t.inputSchema)).not.toThrow();
    expect(t.inputSchema.type).toBe("object");
  }
});

test("each schema accepts and refuses what dispatch's validation accepts and refuses", () => {
  const ajv = new Ajv2020({ strict: false, validateFormats: false, useDefaults: true });
  for (const t of tools) {
    const entry = h.rt.registry.list().find((e) => e.tool === t.name)!;
    const validate = ajv.compile(t.inputSchema);
    const minimal = minimalArgs(entry.def.args);
    const candidates: Record<string, unknown>[] = [{}, minimal, { ...minimal, not_an_argument: 1 }];
    for (const args of candidates) {
      // As validateArgs: unknown names first, then the schema with its defaults filled in.
      const byDispatch = Object.keys(args).every((k) => entry.argNames.includes(k)) && entry.check.Check(Value.Default(entry.def.args, structuredClone(args)));
      const bySchema = validate(structuredClone(args));
      if (byDispatch !== bySchema) throw new Error(`${t.name} with ${JSON.stringify(args)}: dispatch says ${byDispatch}, the JSON Schema says ${bySchema}`);
    }
    expect(validate({ ...minimal, not_an_argument: 1 })).toBe(false);
  }
});

test("every tool states its price and access in the description and _meta", () => {
  for (const t of tools) {
    expect(t.description).toMatch(/Price: /);
    expect(t._meta?.price).toBeDefined();
    expect(["public", "account"]).toContain(t._meta?.access as string);
    expect(typeof t.annotations?.readOnlyHint).toBe("boolean");
    expect(typeof t.annotations?.destructiveHint).toBe("boolean");
    expect(typeof t.annotations?.openWorldHint).toBe("boolean");
  }
});

test("an instance's price overrides and metering switch show in the tools", async () => {
  const file = join(mkdtempSync(join(tmpdir(), "hearth-prices-")), "prices.json");
  writeFileSync(file, JSON.stringify({ "notes/get": 3 }));
  const priced = await startHearth({ env: { HEARTH_PRICES: file } });
  const free = await startHearth({ env: { HEARTH_METERING: "off", HEARTH_PLUGINS: join(import.meta.dir, "plugins") } });
  try {
    const get = ((await rpc(priced.url, "tools/list")).body.result.tools as Tool[]).find((t) => t.name === "notes_get")!;
    expect(get._meta?.price).toEqual({ credits: 3, usd: 0.03 });
    expect(get.description).toContain("Price: 3 credits ($0.03) per call.");
    const echo = ((await rpc(free.url, "tools/list")).body.result.tools as Tool[]).find((t) => t.name === "tally_echo")!;
    expect(echo._meta?.price).toEqual({ credits: 0, usd: 0 });
    expect(echo.description).toContain("Price: free.");
  } finally {
    await priced.stop();
    await free.stop();
  }
});
