// /openapi.json is a valid OpenAPI 3.1 document generated from the registry:
// every method is in it with its verb, arguments, access, price and refusals.
import { Validator } from "@seriousme/openapi-schema-validator";
import Ajv2020 from "ajv/dist/2020.js";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { startHearth, type Hearth } from "../harness.ts";

let h: Hearth;
let doc: any;
const pluginDir = join(import.meta.dir, "plugins");

beforeAll(async () => {
  // A drop-in plugin appears in the document with no other edit.
  h = await startHearth({ env: { HEARTH_PLUGINS: pluginDir, HEARTH_PUBLIC_URL: "https://hearth.example.org/" } });
  const res = await fetch(`${h.url}/openapi.json`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("application/json");
  doc = await res.json();
});

afterAll(async () => {
  await h?.stop();
});

test("validates against the OpenAPI 3.1 schema", async () => {
  const v = new Validator();
  const res = await v.validate(structuredClone(doc));
  if (!res.valid) console.log(JSON.stringify(res.errors, null, 2).slice(0, 3000));
  expect(res.valid).toBe(true);
  expect(v.version).toBe("3.1");
  expect(doc.openapi).toBe("3.1.0");
  expect(doc.servers).toEqual([{ url: "https://hearth.example.org" }]);
  // The validator is not lenient: a document missing its info is refused.
  const broken = structuredClone(doc);
  delete broken.info;
  expect((await new Validator().validate(broken)).valid).toBe(false);
});

test("every argument schema is valid JSON Schema 2020-12", () => {
  const ajv = new Ajv2020({ strict: false });
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const op of Object.values<any>(item)) {
      for (const p of op.parameters ?? []) expect(() => ajv.compile(p.schema ?? p.content["application/json"].schema), `${path} ${p.name}`).not.toThrow();
      if (op.requestBody) expect(() => ajv.compile(op.requestBody.content["application/json"].schema), path).not.toThrow();
    }
  }
});

test("every registered method is in it, with its verb, arguments, access and price", () => {
  const entries = h.rt.registry.list();
  expect(entries.length).toBeGreaterThan(50);
  expect(Object.keys(doc.paths).sort()).toEqual(entries.map((e) => `/api/v1/${e.path}`).sort());
  for (const e of entries) {
    const item = doc.paths[`/api/v1/${e.path}`];
    const verb = e.def.kind === "read" ? "get" : "post";
    expect(Object.keys(item), e.path).toEqual([verb]);
    const op = item[verb];
    expect(op.operationId).toBe(e.tool);
    expect(op.tags).toEqual([e.service]);
    expect(op["x-hearth-access"]).toBe(e.def.access);
    if (verb === "get") {
      const names = (op.parameters ?? []).map((p: any) => p.name);
      expect(names.sort(), e.path).toEqual([...e.argNames].sort());
      for (const p of op.parameters ?? []) expect(p.required, `${e.path} ${p.name}`).toBe(e.required.includes(p.name));
    } else {
      const schema = op.requestBody.content["application/json"].schema;
      expect(Object.keys(schema.properties ?? {}).sort(), e.path).toEqual([...e.argNames].sort());
      expect([...(schema.required ?? [])].sort()).toEqual([...e.required].sort());
      expect(op.responses["405"]).toEqual({ $ref: "#/components/responses/MethodNotAllowed" });
    }
    // Account methods need a token or a session; never a payment alone.
    if (e.def.access === "account") {
      expect(op.security).toEqual([{ bearer: [] }, { session: [], csrf: [] }]);
      expect(op.responses["401"]).toBeDefined();
    }
  }
  expect(doc.tags.map((t: any) => t.name)).toEqual(h.rt.registry.services());
});

test("a drop-in plugin's method: query parameters from TypeBox, its price, and x402 as a way to pay", () => {
  const op = doc.paths["/api/v1/sundial/hour"].get;
  expect(op.parameters).toEqual([
    { name: "lon", in: "query", required: true, description: "Degrees east.", schema: { type: "number", minimum: -180, maximum: 180, description: "Degrees east." } },
    { name: "marks", in: "query", required: false, schema: { type: "array", items: { type: "string" } }, style: "form", explode: true },
  ]);
  expect(op["x-hearth-price"]).toBe(2);
  expect(op.description).toContain("2 credits ($0.02) per call.");
  expect(op.security).toContainEqual({ x402: [] });
  expect(op.responses["402"]).toEqual({ $ref: "#/components/responses/PaymentRequired" });
});

test("the error schema, and bearer, session and x402 security schemes", () => {
  const err = doc.components.schemas.Error.properties.error;
  expect(err.required).toEqual(["status", "kind", "message", "retry"]);
  expect(err.properties.kind.enum).toContain("invalid_argument");
  expect(err.properties.kind.enum).toContain("not_configured");
  expect(doc.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" });
  expect(doc.components.securitySchemes.x402).toMatchObject({ type: "apiKey", in: "header", name: "PAYMENT-SIGNATURE" });
  expect(doc.components.securitySchemes.csrf).toMatchObject({ in: "header", name: "X-CSRF-Token" });
  // A free public method needs nothing.
  expect(doc.paths["/api/v1/prayer/qibla"].get.security[0]).toEqual({});
});

test("a refusal the document promises has the documented shape", async () => {
  const r = await h.call("notes/add", { title: "x", text: "y" }, { method: "GET" });
  expect(r.status).toBe(405);
  const ajv = new Ajv2020({ strict: false });
  expect(ajv.validate(doc.components.schemas.Error, r.body)).toBe(true);
});
