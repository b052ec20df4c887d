// Argument validation and query-string coercion, both driven by the method's schema.
import { Kind, type TSchema } from "@sinclair/typebox";
import { Value, ValueErrorType, type ValueError } from "@sinclair/typebox/value";
import { invalid } from "./errors.ts";
import type { MethodEntry } from "./registry.ts";

/** How deep a JSON value may nest: far past any real data, and shallow enough that whatever walks it (stringify, validators) keeps its stack. */
export const MAX_JSON_DEPTH = 100;

/** Whether a JSON value nests deeper than `max` levels, found without recursion (a scalar is 0 deep, `[]` 1). */
export function nestsDeeper(value: unknown, max = MAX_JSON_DEPTH): boolean {
  if (value === null || typeof value !== "object") return false;
  const stack: [object, number][] = [[value, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (depth > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (child !== null && typeof child === "object") stack.push([child, depth + 1]);
  }
  return false;
}

/** Refuses a value nested past MAX_JSON_DEPTH, naming the field it came in. */
export function checkDepth(value: unknown, name: string): void {
  if (nestsDeeper(value)) throw invalid(name, `${name} is nested more than ${MAX_JSON_DEPTH} levels deep`);
}

/** Whether a string anywhere in a JSON value holds U+0000, which PostgreSQL's text cannot store (nor JSON text carry into it). */
function holdsNul(value: unknown): boolean {
  if (typeof value === "string") return value.includes("\0");
  if (value === null || typeof value !== "object") return false;
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === "string") {
      if (v.includes("\0")) return true;
    } else if (v !== null && typeof v === "object") {
      if (Array.isArray(v)) stack.push(...v);
      else for (const [k, c] of Object.entries(v)) stack.push(k, c);
    }
  }
  return false;
}

function field(e: ValueError): string {
  return e.path.replace(/^\//, "").split("/")[0] || "body";
}

function describe(e: ValueError, name: string): string {
  const s = e.schema as Record<string, unknown>;
  const got = (v: unknown) => {
    const t = typeof v === "string" && v.length > 40 ? `${v.length} characters` : String(JSON.stringify(v));
    return t.length > 60 ? `${t.slice(0, 60)}…` : t;
  };
  switch (e.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return `${name} is required`;
    case ValueErrorType.String:
      return `${name} must be a string`;
    case ValueErrorType.Number:
    case ValueErrorType.Integer:
      return `${name} must be ${e.type === ValueErrorType.Integer ? "a whole number" : "a number"} (got ${got(e.value)})`;
    case ValueErrorType.Boolean:
      return `${name} must be true or false (got ${got(e.value)})`;
    case ValueErrorType.Array:
      return `${name} must be a list`;
    case ValueErrorType.Object:
      return `${name} must be an object`;
    case ValueErrorType.StringMinLength:
      return s.minLength === 1 ? `${name} must not be empty` : `${name} must be at least ${s.minLength} characters (got ${String(e.value).length})`;
    case ValueErrorType.StringMaxLength:
      return `${name} must be at most ${s.maxLength} characters (got ${String(e.value).length})`;
    case ValueErrorType.StringPattern:
    case ValueErrorType.StringFormat:
      return `${name} is not in the expected form${s.description ? ` (${s.description})` : ""} (got ${got(e.value)})`;
    case ValueErrorType.NumberMinimum:
    case ValueErrorType.IntegerMinimum:
      return `${name} must be at least ${s.minimum} (got ${got(e.value)})`;
    case ValueErrorType.NumberMaximum:
    case ValueErrorType.IntegerMaximum:
      return `${name} must be at most ${s.maximum} (got ${got(e.value)})`;
    case ValueErrorType.NumberExclusiveMinimum:
      return `${name} must be greater than ${s.exclusiveMinimum} (got ${got(e.value)})`;
    case ValueErrorType.ArrayMinItems:
      return `${name} needs at least ${s.minItems} item(s)`;
    case ValueErrorType.ArrayMaxItems:
      return `${name} takes at most ${s.maxItems} item(s)`;
    case ValueErrorType.Union:
    case ValueErrorType.Literal: {
      const options = ((s.anyOf as TSchema[] | undefined) ?? [s]).map((o) => (o as { const?: unknown }).const).filter((v) => v !== undefined);
      return options.length ? `${name} must be one of ${options.map((o) => JSON.stringify(o)).join(", ")} (got ${got(e.value)})` : `${name}: ${e.message}`;
    }
    default:
      return `${name}: ${e.message}`;
  }
}

export function hasDefaults(schema: TSchema): boolean {
  return Object.values((schema as { properties?: Record<string, TSchema> }).properties ?? {}).some((p) => "default" in p);
}

/** Rejects unknown arguments by name, fills schema defaults, and checks every rule. */
export function validateArgs(entry: MethodEntry, args: Record<string, unknown>): Record<string, unknown> {
  for (const k in args) {
    if (!entry.argNames.includes(k))
      throw invalid(k, `unknown argument "${k}": ${entry.path} takes ${entry.argNames.length ? entry.argNames.join(", ") : "no arguments"}`);
  }
  for (const k in args) checkDepth(args[k], k);
  // undefined and null both mean "not given" for an optional argument.
  for (const k in args) if (args[k] === undefined || (args[k] === null && !entry.required.includes(k))) delete args[k];
  const filled = entry.withDefaults ? (Value.Default(entry.def.args, args) as Record<string, unknown>) : args;
  if (!entry.check.Check(filled)) {
    const e = entry.check.Errors(filled).First()!;
    const f = field(e);
    throw invalid(f, describe(e, f));
  }
  // Refused on either store (once the schema holds), so an argument means the same wherever the instance keeps its data.
  for (const k in filled) if (holdsNul(filled[k])) throw invalid(k, `${k} may not contain the NUL character (U+0000)`);
  return filled;
}

/** Turns query-string values (the query's text without "?", or parsed) into the types the schema asks for. */
export function coerceQuery(entry: MethodEntry, query: string | URLSearchParams): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const props = entry.def.args.properties as Record<string, TSchema>;
  for (const [key, values] of queryValues(query)) {
    const schema = props[key];
    out[key] = schema ? coerceValue(schema, values, key) : values[values.length - 1];
  }
  return out;
}

/**
 * A query's values by name, names in the order they first appear, as
 * URLSearchParams reads them. Text with nothing to decode (printable ASCII
 * without "%" or "+", most queries) is split as it stands, which costs a
 * fraction of URLSearchParams' calls into the engine; any other is read by it.
 */
export function queryValues(query: string | URLSearchParams): Map<string, string[]> {
  const out = new Map<string, string[]>();
  if (typeof query === "string" && undecoded(query)) {
    for (let i = 0; i < query.length; ) {
      let end = query.indexOf("&", i);
      if (end < 0) end = query.length;
      if (end > i) {
        const eq = query.indexOf("=", i);
        const name = eq < 0 || eq > end ? query.slice(i, end) : query.slice(i, eq);
        const value = eq < 0 || eq > end ? "" : query.slice(eq + 1, end);
        const seen = out.get(name);
        if (seen) seen.push(value);
        else out.set(name, [value]);
      }
      i = end + 1;
    }
    return out;
  }
  // URLSearchParams drops one leading "?" of the text it is given, which a URL's query keeps.
  (typeof query === "string" ? new URLSearchParams(`?${query}`) : query).forEach((value, name) => {
    const seen = out.get(name);
    if (seen) seen.push(value);
    else out.set(name, [value]);
  });
  return out;
}

/** Whether a query's text reads as it stands: printable ASCII with no "%" or "+" to decode. */
const undecoded = (query: string) => printableAscii(query, 0) && !query.includes("%") && !query.includes("+");

/** Whether every character of `s` from `from` on is printable ASCII (so never whitespace). */
export function printableAscii(s: string, from: number): boolean {
  for (let i = from; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

export function coerceValue(schema: TSchema, values: string[], key: string): unknown {
  const kind = schema[Kind];
  if (kind === "Array") {
    const list = values.length === 1 ? values[0].split(",").map((v) => v.trim()).filter((v) => v !== "") : values;
    const items = (schema as unknown as { items: TSchema }).items;
    return list.map((v) => coerceValue(items, [v], key));
  }
  if (values.length > 1) throw invalid(key, `${key} was given ${values.length} times; give it once`);
  const v = values[0];
  switch (kind) {
    case "Number":
    case "Integer": {
      if (v.trim() === "") return v;
      const n = Number(v);
      return Number.isFinite(n) ? n : v;
    }
    case "Boolean": {
      const l = v.toLowerCase();
      if (l === "true" || l === "1" || l === "yes" || l === "") return true;
      if (l === "false" || l === "0" || l === "no") return false;
      return v;
    }
    case "Object":
    case "Record":
      try {
        return JSON.parse(v);
      } catch {
        throw invalid(key, `${key} must be a JSON object`);
      }
    default:
      return v;
  }
}
