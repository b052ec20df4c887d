// Argument validation and query-string coercion, both driven by the method's schema.
import { Kind, type TSchema } from "@sinclair/typebox";
import { Value, ValueErrorType, type ValueError } from "@sinclair/typebox/value";
import { invalid, type HearthError } from "./errors.ts";
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

/** Where the first lone UTF-16 surrogate of `s` is, or -1 when it is well-formed text. */
function loneSurrogateAt(s: string): number {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    if (c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        i++;
        continue;
      }
    }
    return i;
  }
  return -1;
}

function notText(path: string, s: string, what = path): HearthError {
  const at = loneSurrogateAt(s);
  const unit = s.charCodeAt(at).toString(16).toUpperCase();
  return invalid(path, `${what} is not well-formed text: it holds a lone surrogate (U+${unit}) at character ${at + 1}; a character past U+FFFF is sent as a surrogate pair or as UTF-8`);
}

/**
 * Refuses a string, at any depth of a JSON value, that is not well-formed
 * Unicode: a lone UTF-16 surrogate (which JSON's "\ud800" carries) has no
 * UTF-8 form, so a provider's URL could not be made of it and storing it
 * would change it. The field named is the path to it ("stops[2].name").
 */
export function checkText(value: unknown, name: string): void {
  if (typeof value === "string") {
    if (!value.isWellFormed()) throw notText(name, value);
    return;
  }
  if (value === null || typeof value !== "object") return;
  // Depth first, in the order the value was written, so the first bad string is the one named.
  const stack: [unknown, string][] = [[value, name]];
  while (stack.length) {
    const [v, path] = stack.pop()!;
    if (typeof v === "string") {
      if (!v.isWellFormed()) throw notText(path, v);
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${path}[${i}]`]);
    } else if (v !== null && typeof v === "object") {
      const entries = Object.entries(v);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, c] = entries[i];
        if (!k.isWellFormed()) throw notText(path, k, `a name in ${path}`);
        stack.push([c, `${path}.${k}`]);
      }
    }
  }
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
  // Before the schema's rules: a pattern, a format or a default never sees text that is not text.
  for (const k in args) checkText(args[k], k);
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
  let replaced = false;
  (typeof query === "string" ? new URLSearchParams(`?${query}`) : query).forEach((value, name) => {
    if (value.includes("\ufffd") || name.includes("\ufffd")) replaced = true;
    const seen = out.get(name);
    if (seen) seen.push(value);
    else out.set(name, [value]);
  });
  if (replaced && typeof query === "string") checkQueryUtf8(query);
  return out;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * URLSearchParams reads bytes that are not UTF-8 ("%ED%A0%80", a lone
 * surrogate's bytes; "%FF") as U+FFFD, which would change what was sent
 * without a word: such a value is refused, naming it. Looked at only when
 * a U+FFFD came out, which a query sending one as it is also gives.
 */
function checkQueryUtf8(query: string): void {
  for (const part of query.split("&")) {
    const eq = part.indexOf("=");
    const rawName = eq < 0 ? part : part.slice(0, eq);
    const name = utf8OfPercent(rawName);
    if (name === null) throw invalid("query", "a name in the query string is not UTF-8 text once its %-escapes are decoded");
    if (eq >= 0 && utf8OfPercent(part.slice(eq + 1)) === null)
      throw invalid(name, `${name} is not UTF-8 text once its %-escapes are decoded (a lone surrogate's or another invalid byte sequence); send text as UTF-8`);
  }
}

/** A query piece's text as URLSearchParams decodes it ("+" a space, "%XX" a byte), or null when those bytes are not UTF-8. */
function utf8OfPercent(raw: string): string | null {
  const bytes: number[] = [];
  const hex = (c: number) => (c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x41 && c <= 0x46 ? c - 0x37 : c >= 0x61 && c <= 0x66 ? c - 0x57 : -1);
  const enc = new TextEncoder();
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c === 0x25 && i + 2 < raw.length && hex(raw.charCodeAt(i + 1)) >= 0 && hex(raw.charCodeAt(i + 2)) >= 0) {
      bytes.push(hex(raw.charCodeAt(i + 1)) * 16 + hex(raw.charCodeAt(i + 2)));
      i += 2;
    } else if (c === 0x2b) bytes.push(0x20);
    else if (c < 0x80) bytes.push(c);
    else {
      const cp = raw.codePointAt(i)!;
      if (cp > 0xffff) i++;
      bytes.push(...enc.encode(String.fromCodePoint(cp)));
    }
  }
  try {
    return strictUtf8.decode(new Uint8Array(bytes));
  } catch {
    return null;
  }
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
