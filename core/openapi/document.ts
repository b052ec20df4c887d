// The OpenAPI 3.1 document, built from the registry on each request so a
// drop-in plugin appears in it with no other edit. Argument schemas are the
// methods' own TypeBox schemas (JSON Schema 2020-12, which OpenAPI 3.1 uses).
import { Kind, type TSchema } from "@sinclair/typebox";
import pkg from "../../package.json";
import { errorKinds } from "../errors.ts";
import type { MethodEntry } from "../registry.ts";
import type { Runtime } from "../runtime.ts";
import { listedPrice } from "./price.ts";

type Json = Record<string, unknown>;

/** A schema as plain JSON: TypeBox keeps its markers in symbols, which JSON drops. */
function plain(schema: TSchema): Json {
  return JSON.parse(JSON.stringify(schema)) as Json;
}

const ref = (name: string) => ({ $ref: `#/components/responses/${name}` });

/** Refusals every method may answer with, and those that depend on its access, price and kind. */
function responses(entry: MethodEntry, price: number | null): Json {
  const out: Json = {
    "200": {
      description: "The call ran; the answer is in `result`.",
      content: { "application/json": { schema: { $ref: "#/components/schemas/Result" } } },
    },
    "400": ref("InvalidArgument"),
    "404": ref("NotFound"),
    "429": ref("RateLimited"),
    "500": ref("Internal"),
  };
  if (entry.def.access === "account") {
    out["401"] = ref("Unauthenticated");
    out["403"] = ref("Forbidden");
  } else out["403"] = ref("Forbidden");
  if (price !== 0) out["402"] = ref("PaymentRequired");
  if (entry.def.kind === "write") out["405"] = ref("MethodNotAllowed");
  if (entry.def.openWorld) for (const s of ["502", "503", "504"]) out[s] = ref("Upstream");
  out["501"] = ref("NotConfigured");
  return out;
}

/** Who may call: account methods need a token or a session; priced public ones take a payment instead; free public ones need nothing. */
function security(entry: MethodEntry, price: number | null): Json[] {
  if (entry.def.access === "account") return [{ bearer: [] }, { session: [], csrf: [] }];
  if (price === 0) return [{}, { bearer: [] }, { session: [], csrf: [] }];
  return [{ bearer: [] }, { session: [], csrf: [] }, { x402: [] }];
}

function priceText(price: number | null): string {
  if (price === 0) return "Free.";
  if (price === null) return "Price depends on the arguments; a refusal for payment states it.";
  return `${price} credit${price === 1 ? "" : "s"} ($${(price / 100).toFixed(2)}) per call.`;
}

/** Query parameters for a read: arrays as a repeated key (or a comma list), objects as JSON. */
function queryParameters(entry: MethodEntry): Json[] {
  const props = (entry.def.args.properties ?? {}) as Record<string, TSchema>;
  return Object.entries(props).map(([name, s]) => {
    const schema = plain(s);
    const p: Json = { name, in: "query", required: entry.required.includes(name) };
    if (typeof s.description === "string") p.description = s.description;
    if (s[Kind] === "Object" || s[Kind] === "Record") p.content = { "application/json": { schema } };
    else {
      p.schema = schema;
      if (s[Kind] === "Array") Object.assign(p, { style: "form", explode: true });
    }
    return p;
  });
}

/** The first sentence, cut at a word when it is long (lists show summaries on one line). */
function summaryOf(description: string): string {
  const first = description.split(/(?<=\.)\s/)[0];
  if (first.length <= 120) return first;
  return `${first.slice(0, 118).replace(/[\s,;:(]+\S*$/, "")}…`;
}

function operation(rt: Runtime, entry: MethodEntry): [string, Json] {
  const price = listedPrice(rt, entry);
  const d = entry.def;
  const op: Json = {
    operationId: entry.tool,
    tags: [entry.service],
    summary: summaryOf(d.description),
    description: `${d.description}\n\n${d.access === "account" ? "Needs an account." : "Public."} ${priceText(price)}${
      d.kind === "read" ? " Also answers POST with the arguments as a JSON body." : ""
    }`,
    security: security(entry, price),
    responses: responses(entry, price),
    "x-hearth-access": d.access,
    "x-hearth-price": price,
    "x-hearth-tool": entry.tool,
  };
  for (const [k, on] of Object.entries(entry.classes)) if (on) op[`x-hearth-${k}`] = true;
  if (d.kind === "read") {
    const params = queryParameters(entry);
    if (params.length) op.parameters = params;
    return ["get", op];
  }
  op.requestBody = { required: true, content: { "application/json": { schema: entry.schema } } };
  return ["post", op];
}

const errorResponse = (description: string, kinds: string[]): Json => ({
  description: `${description} (${kinds.join(", ")})`,
  content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
});

export function openapiDocument(rt: Runtime, baseUrl: string): Json {
  const paths: Json = {};
  for (const entry of rt.registry.list()) {
    const [verb, op] = operation(rt, entry);
    paths[`/api/v1/${entry.path}`] = { [verb]: op };
  }
  const tags = rt.registry.services().map((name) => ({ name, description: rt.registry.plugins.get(name)!.def.description }));
  return {
    openapi: "3.1.0",
    info: {
      title: "Hearth",
      version: pkg.version,
      summary: "Personal services, public information and text tools behind one API.",
      description:
        "Every method is one call: GET with the arguments in the query string for reads, POST with a JSON body for writes. A success is `{\"result\": …}`; every refusal is `{\"error\": {…}}` with the status, a kind, a message naming the field, and whether to retry. Each method is also an MCP tool named `<service>_<method>` at /mcp.",
      license: { name: pkg.license, identifier: pkg.license },
    },
    servers: [{ url: baseUrl }],
    tags,
    paths,
    components: {
      schemas: {
        Result: { type: "object", required: ["result"], properties: { result: { description: "The method's answer." } } },
        Error: {
          type: "object",
          required: ["error"],
          properties: {
            error: {
              type: "object",
              required: ["status", "kind", "message", "retry"],
              properties: {
                status: { type: "integer", minimum: 400, maximum: 599 },
                kind: { type: "string", enum: errorKinds() },
                message: { type: "string", description: "What was refused and why, naming the field." },
                field: { type: "string", description: "The argument at fault, for invalid_argument." },
                retry: { type: "boolean", description: "Whether the same call may succeed later." },
                request_id: { type: "string", description: "For internal errors: the id the instance's log holds." },
              },
              additionalProperties: true,
            },
          },
        },
      },
      responses: {
        InvalidArgument: errorResponse("An argument is wrong; `field` names it", ["invalid_argument"]),
        Unauthenticated: errorResponse("No caller: send a token", ["unauthenticated"]),
        PaymentRequired: {
          ...errorResponse(
            "Metered and unpaid; the error states the price. Where the instance takes x402, PAYMENT-REQUIRED carries the v2 challenge (also in the error) and the body's top level the v1 one (x402Version, accepts) for v1 clients",
            ["payment_required"],
          ),
          headers: { "PAYMENT-REQUIRED": { description: "The x402 v2 payment challenge, base64 JSON, when the instance takes x402.", schema: { type: "string" } } },
        },
        Forbidden: errorResponse("Out of the token's scope, a session POST (or a session call that costs credits) without X-CSRF-Token, or a payment alone on an account method", ["forbidden"]),
        NotFound: errorResponse("No such method or record", ["not_found"]),
        MethodNotAllowed: errorResponse("A write called with GET", ["method_not_allowed"]),
        RateLimited: {
          ...errorResponse("Too many calls; wait for Retry-After", ["rate_limited"]),
          headers: { "Retry-After": { description: "Seconds to wait.", schema: { type: "integer" } } },
        },
        NotConfigured: errorResponse("The instance lacks what this needs; the message names the setting", ["not_configured"]),
        Upstream: errorResponse("A provider failed, is unavailable or timed out; retry later", ["upstream_failed", "upstream_unavailable", "upstream_timeout"]),
        Internal: errorResponse("A fault in the instance; the request id is in its log", ["internal"]),
      },
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "A token made at /token, optionally scoped to named services." },
        session: { type: "apiKey", in: "cookie", name: "hearth_session", description: "A browser sign-in. Reads work with the cookie alone." },
        csrf: { type: "apiKey", in: "header", name: "X-CSRF-Token", description: "The session's CSRF token (from GET /session), needed on every POST resting on the session cookie, and on any call resting on it that costs credits." },
        x402: {
          type: "apiKey",
          in: "header",
          name: "PAYMENT-SIGNATURE",
          description: "An x402 payment for one call, without an account: call once, read the 402 challenge, sign it, and send the payment in this header (X-PAYMENT is also accepted).",
        },
      },
    },
  };
}
