// What the log keeps of a call's arguments: enough to recognise the call,
// never a secret. Strings are cut short, fields named like a secret are
// masked, bytes are replaced by their size; beside it, a SHA-256 of the whole
// arguments in canonical JSON (keys sorted) proves what was sent without
// keeping it.
const SECRET = /pass(word|phrase)?|token|secret|key|auth|credential|cookie|signature|private|mnemonic|seed|otp|pin$/i;
const MAX_STRING = 80;
const MAX_ITEMS = 20;
const MAX_DEPTH = 4;

function shown(v: unknown, depth: number): unknown {
  if (typeof v === "string") return v.length > MAX_STRING ? `${v.slice(0, MAX_STRING)}… (${v.length} chars)` : v;
  if (v === null || typeof v !== "object") return typeof v === "bigint" ? String(v) : v;
  if (v instanceof Uint8Array || v instanceof ArrayBuffer) return `(${v.byteLength} bytes)`;
  if (v instanceof Blob) return `(${v.size} bytes)`;
  if (depth >= MAX_DEPTH) return Array.isArray(v) ? `(${v.length} items)` : "(…)";
  if (Array.isArray(v)) {
    const out = v.slice(0, MAX_ITEMS).map((x) => shown(x, depth + 1));
    if (v.length > MAX_ITEMS) out.push(`(${v.length - MAX_ITEMS} more)`);
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) out[k] = SECRET.test(k) && x !== null && x !== undefined && x !== "" ? "(hidden)" : shown(x, depth + 1);
  return out;
}

/** The redacted preview of arguments, as JSON. */
export function previewArgs(args: unknown): string {
  return JSON.stringify(shown(args ?? {}, 0)) ?? "{}";
}

/** Deeper than this, a value is refused by validation anyway: the hash names its depth rather than recursing into it. */
const MAX_CANONICAL_DEPTH = 256;

function canonical(v: unknown, depth = 0): unknown {
  if (v === null || typeof v !== "object") return typeof v === "bigint" ? String(v) : v;
  if (v instanceof Uint8Array) return { bytes: Buffer.from(v).toString("base64") };
  if (v instanceof ArrayBuffer) return { bytes: Buffer.from(v).toString("base64") };
  if (depth >= MAX_CANONICAL_DEPTH) return `(nested deeper than ${MAX_CANONICAL_DEPTH})`;
  if (Array.isArray(v)) return v.map((x) => canonical(x, depth + 1));
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v as object).sort()) out[k] = canonical((v as Record<string, unknown>)[k], depth + 1);
  return out;
}

/** SHA-256 (hex) of the arguments' canonical JSON. */
export function hashArgs(args: unknown): string {
  return Bun.SHA256.hash(JSON.stringify(canonical(args ?? {})) ?? "", "hex") as string;
}

/**
 * The preview and the hash at once. Arguments as most calls send them (one
 * level of short strings, numbers, booleans and nulls, no field named like a
 * secret, keys already in sorted order) preview as their own JSON, which is
 * also their canonical JSON: serialised once, with nothing copied, where the
 * two functions above would each walk and copy them.
 */
export function argsEntry(args: unknown): { args: string; argsHash: string } {
  const json = plainJson(args ?? {});
  if (json === null) return { args: previewArgs(args), argsHash: hashArgs(args) };
  return { args: json, argsHash: Bun.SHA256.hash(json, "hex") as string };
}

/** The JSON of flat, plain arguments whose preview and canonical form are themselves; null for any other. */
export function plainJson(v: unknown): string | null {
  if (typeof v !== "object" || v === null || Array.isArray(v) || Object.getPrototypeOf(v) !== Object.prototype) return null;
  let last: string | null = null;
  for (const k in v) {
    if (!Object.hasOwn(v, k) || (last !== null && !(last < k)) || SECRET.test(k)) return null;
    const x = (v as Record<string, unknown>)[k];
    const t = typeof x;
    if (t === "string" ? (x as string).length > MAX_STRING : !(t === "number" || t === "boolean" || x === null)) return null;
    last = k;
  }
  return JSON.stringify(v);
}
