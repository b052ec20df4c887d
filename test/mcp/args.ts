// The smallest arguments a method's schema accepts, derived from the schema
// alone so that a test over the whole registry needs no per-method knowledge.
import { Kind, type TSchema } from "@sinclair/typebox";

const FORMATS: Record<string, string> = {
  "date-time": "2026-03-01T12:00:00Z",
  date: "2026-03-01",
  time: "12:00:00Z",
  email: "x@example.com",
  uri: "http://127.0.0.1:9/x",
  url: "http://127.0.0.1:9/x",
  uuid: "00000000-0000-4000-8000-000000000000",
};

export function minimalValue(s: TSchema): unknown {
  const schema = s as Record<string | symbol, any>;
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (Array.isArray(schema.anyOf)) return minimalValue(schema.anyOf[0]);
  switch (schema[Kind] ?? schema.type) {
    case "String":
    case "string": {
      if (schema.format && FORMATS[schema.format]) return FORMATS[schema.format];
      return "x".repeat(Math.max(1, schema.minLength ?? 1));
    }
    case "Number":
    case "Integer":
    case "number":
    case "integer": {
      if (typeof schema.minimum === "number") return schema.minimum;
      if (typeof schema.exclusiveMinimum === "number") return schema.exclusiveMinimum + 1;
      return typeof schema.maximum === "number" ? Math.min(0, schema.maximum) : 0;
    }
    case "Boolean":
    case "boolean":
      return false;
    case "Array":
    case "array":
      return Array.from({ length: schema.minItems ?? 0 }, () => minimalValue(schema.items));
    case "Object":
    case "object":
      return minimalArgs(s);
    default:
      return "x";
  }
}

export function minimalArgs(schema: TSchema): Record<string, unknown> {
  const props = ((schema as any).properties ?? {}) as Record<string, TSchema>;
  const out: Record<string, unknown> = {};
  for (const name of ((schema as any).required ?? []) as string[]) out[name] = minimalValue(props[name]);
  return out;
}
