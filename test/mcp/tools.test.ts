// tools/list is the registry, exactly, and every inputSchema is a JSON Schema
// that a real validator accepts and that agrees with what dispatch enforces.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import Ajv2020 from "ajv/dist/2020.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
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
  expect(names.sort()).toEqual(h.rt.registry.list().map((e) => `${e.service}_${e.name}`).sort());
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
