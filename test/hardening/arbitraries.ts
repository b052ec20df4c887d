// fast-check arbitraries derived from a method's TypeBox schema alone, so a
// test over the whole registry needs no knowledge of any one method: values
// the schema accepts, values at its edges, and arguments it must refuse (each
// tagged with the argument that makes it wrong).
import { Kind, type TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import fc, { type Arbitrary } from "fast-check";

type S = Record<string | symbol, any>;
type Args = Record<string, unknown>;

/** Strings that break naive code: controls, bidi overrides, joiners, lone surrogates, markup, traversal, SQL. */
export const NASTY_STRINGS = [
  "\u0000",
  "\u202eevil\u202c",
  "👩‍👩‍👧‍👦",
  "\ud800",
  "e\u0301\u0301\u0301",
  "\u200b\ufeff",
  "<script>alert(1)</script>",
  "<img src=x onerror=alert(1)>",
  "../../../../etc/passwd",
  "..\\..\\windows\\win.ini",
  "' OR 1=1 --",
  '"; DROP TABLE notes; --',
  "%00%2e%2e%2f",
  "NaN",
  "Infinity",
  "-0",
  "1e999",
  "0x1f",
  "null",
  "undefined",
  "{}",
  "[object Object]",
  " ",
  "\n\r\t",
  "ﷺ ﷽",
  "𝕳𝖊𝖆𝖗𝖙𝖍",
];

const NAN_LIKE = ["NaN", "Infinity", "-Infinity", "1e999", "abc", "12abc", "", " ", "0x10", "1,5", "١٢"];
const HUGE = [1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, -Number.MAX_SAFE_INTEGER - 2, 2 ** 63, 5e-324];
const LOOPBACK_URLS = ["http://127.0.0.1:9/x", "http://localhost:9/feed.xml", "http://[::1]:9/", "file:///etc/passwd", "javascript:alert(1)", "http://169.254.169.254/latest/meta-data/"];

const kindOf = (s: S): string => s[Kind] ?? s.type ?? "Unknown";
const looksLikeUrl = (name: string) => /url|href|link|feed|endpoint|site/i.test(name);

function stringArb(s: S, name: string): Arbitrary<string> {
  const min = s.minLength ?? 0;
  const max = s.maxLength ?? Math.max(min, 200);
  const fits = (v: string) => v.length >= min && v.length <= max && (!s.pattern || new RegExp(s.pattern).test(v));
  if (s.pattern) return fc.stringMatching(new RegExp(s.pattern)).filter(fits);
  const options: Arbitrary<string>[] = [fc.string({ minLength: min, maxLength: Math.min(max, min + 40) }), fc.string({ unit: "grapheme", minLength: min, maxLength: Math.min(max, min + 20) })];
  const nasty = NASTY_STRINGS.filter(fits);
  if (nasty.length) options.push(fc.constantFrom(...nasty));
  if (looksLikeUrl(name)) options.push(fc.constantFrom(...LOOPBACK_URLS.filter(fits).concat("x".repeat(Math.max(1, min)))));
  return fc.oneof(...options).filter(fits);
}

function numberArb(s: S): Arbitrary<number> {
  const integer = kindOf(s) === "Integer" || s.type === "integer";
  const lo = typeof s.minimum === "number" ? s.minimum : typeof s.exclusiveMinimum === "number" ? s.exclusiveMinimum + (integer ? 1 : 1e-9) : undefined;
  const hi = typeof s.maximum === "number" ? s.maximum : typeof s.exclusiveMaximum === "number" ? s.exclusiveMaximum - (integer ? 1 : 1e-9) : undefined;
  if (integer) return fc.integer({ min: lo ?? -1_000_000, max: hi ?? 1_000_000 });
  return fc.double({ min: lo ?? -1e6, max: hi ?? 1e6, noNaN: true, noDefaultInfinity: true });
}

/** Values the schema accepts. */
export function validValue(schema: TSchema, name = ""): Arbitrary<unknown> {
  const s = schema as S;
  if ("const" in s) return fc.constant(s.const);
  if (Array.isArray(s.anyOf)) return fc.oneof(...s.anyOf.map((o: TSchema) => validValue(o, name)));
  switch (kindOf(s)) {
    case "String":
      return stringArb(s, name);
    case "Number":
    case "Integer":
      return numberArb(s);
    case "Boolean":
      return fc.boolean();
    case "Array":
      return fc.array(validValue(s.items, name), { minLength: s.minItems ?? 0, maxLength: Math.min(s.maxItems ?? 5, (s.minItems ?? 0) + 5) });
    case "Object":
      return validArgs(schema);
    case "Record":
      return fc.dictionary(fc.string({ minLength: 1, maxLength: 10 }), fc.oneof(fc.string(), fc.integer(), fc.boolean()), { maxKeys: 4 });
    default:
      return fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null));
  }
}

/** Values exactly at the schema's edges: shortest and longest strings, bounds, huge numbers where nothing caps them. */
export function boundaryValues(schema: TSchema, name = ""): unknown[] {
  const s = schema as S;
  if ("const" in s) return [s.const];
  if (Array.isArray(s.anyOf)) return s.anyOf.flatMap((o: TSchema) => boundaryValues(o, name));
  const ok = (v: unknown) => Value.Check(schema, v);
  switch (kindOf(s)) {
    case "String": {
      const min = s.minLength ?? 0;
      const out = ["x".repeat(min), "é".repeat(min), "x".repeat(s.maxLength ?? 100_000), "👍".repeat(Math.floor((s.maxLength ?? 2000) / 2)), ...NASTY_STRINGS];
      if (looksLikeUrl(name)) out.push(...LOOPBACK_URLS);
      return out.filter(ok);
    }
    case "Number":
    case "Integer": {
      const b = [s.minimum, s.maximum, s.exclusiveMinimum, s.exclusiveMaximum].filter((v) => typeof v === "number");
      return [...b, ...b.map((v: number) => v + 1), ...b.map((v: number) => v - 1), ...b.map((v: number) => v + 0.5), 0, -0, -1, 1, ...HUGE].filter(ok);
    }
    case "Boolean":
      return [true, false];
    case "Array":
      return [[], Array.from({ length: s.maxItems ?? 1000 }, () => fc.sample(validValue(s.items, name), { numRuns: 1, seed: 7 })[0])].filter(ok);
    default:
      return [];
  }
}

/** Wrong values for one argument, each paired with what makes it wrong. */
export function wrongValues(schema: TSchema): [string, unknown][] {
  const s = schema as S;
  const nested = { nested: { deeper: ["x"] } };
  const out: [string, unknown][] = [
    ["a nested object", nested],
    ["a list", ["x", 1]],
    ["null", null],
  ];
  switch (kindOf(s)) {
    case "String":
      out.push(["a number", 12345], ["a boolean", true]);
      if (s.maxLength !== undefined) out.push(["one character over", "x".repeat(s.maxLength + 1)], ["oversize", "y".repeat(s.maxLength * 10 + 100)]);
      if ((s.minLength ?? 0) > 0) out.push(["one character short", "x".repeat(s.minLength - 1)]);
      if (s.pattern) out.push(...NASTY_STRINGS.map((v): [string, unknown] => [`off-pattern ${JSON.stringify(v)}`, v]));
      break;
    case "Number":
    case "Integer":
      out.push(...NAN_LIKE.map((v): [string, unknown] => [`the string ${JSON.stringify(v)}`, v]), ...HUGE.map((v): [string, unknown] => [`huge ${v}`, v]), ["a boolean", true]);
      if (kindOf(s) === "Integer") out.push(["a fraction", 1.5]);
      if (typeof s.minimum === "number") out.push(["below the minimum", s.minimum - 1]);
      if (typeof s.maximum === "number") out.push(["above the maximum", s.maximum + 1]);
      break;
    case "Boolean":
      out.push(["the string \"maybe\"", "maybe"], ["the number 2", 2]);
      break;
    case "Array":
      out.push(["a string", "not,a,list"], ["an object", { 0: "x" }]);
      if (s.maxItems !== undefined) out.push(["too many items", Array.from({ length: s.maxItems + 1 }, () => "x")]);
      break;
    case "Object":
    case "Record":
      out.push(["a string", "{not json"], ["a number", 7]);
      break;
  }
  if ("const" in s || Array.isArray(s.anyOf)) out.push(["not one of the choices", "not-a-choice"], ["a number", 7]);
  return out;
}

export function validArgs(schema: TSchema): Arbitrary<Args> {
  const s = schema as S;
  const props = (s.properties ?? {}) as Record<string, TSchema>;
  const required = new Set<string>(s.required ?? []);
  const model: Record<string, Arbitrary<unknown>> = {};
  for (const [name, p] of Object.entries(props)) model[name] = validValue(p, name);
  return fc.record(model, { requiredKeys: [...required].filter((k) => k in model) }) as Arbitrary<Args>;
}

export interface InvalidCase {
  args: Args;
  /** The argument that makes the call wrong, which the refusal must name. */
  field: string;
  why: string;
}

/** Valid arguments with exactly one thing wrong: a missing required argument, a wrong value, or an unknown extra. */
export function invalidCases(schema: TSchema, base: Args): InvalidCase[] {
  const s = schema as S;
  const props = (s.properties ?? {}) as Record<string, TSchema>;
  const out: InvalidCase[] = [];
  // An argument with a default is not required of the caller, whatever the schema's own list says.
  const required = new Set<string>(((s.required ?? []) as string[]).filter((n) => !("default" in props[n])));
  for (const name of required) {
    const args = { ...base };
    delete args[name];
    out.push({ args, field: name, why: "missing" });
  }
  for (const [name, p] of Object.entries(props)) {
    for (const [why, v] of wrongValues(p)) {
      // null means "not given" for an optional argument, which is no error.
      if (v === null && !required.has(name)) continue;
      out.push({ args: { ...base, [name]: v }, field: name, why });
    }
  }
  out.push({ args: { ...base, zz_unknown: "x" }, field: "zz_unknown", why: "an unknown argument" });
  // Keep only what the schema itself refuses: a union may accept a "wrong" type.
  return out.filter((c) => {
    const filled = Value.Default(schema, structuredClone(c.args)) as Args;
    if (c.field === "zz_unknown") return true;
    return !Value.Check(schema, filled);
  });
}
