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

const sha256 = (text: string) => Bun.SHA256.hash(text, "hex") as string;

/**
 * The preview and the hash as the log stores them. Arguments as most calls
 * send them (one level of short strings, numbers, booleans and nulls, no
 * field named like a secret) preview as their own JSON, serialised once with
 * nothing copied, where the two functions above would each walk and copy
 * them. When that JSON is also their canonical JSON (keys in order) no hash
 * is stored: it is the SHA-256 of the preview, which a reader takes (read.ts).
 */
export function storedArgs(args: unknown): { args: string; argsHash: string | null } {
  const flat = flatJson(args ?? {});
  if (flat === null) return { args: previewArgs(args), argsHash: hashArgs(args) };
  return { args: flat.preview, argsHash: flat.canonical === flat.preview ? null : sha256(flat.canonical) };
}

/** The preview and the hash of an entry as a reader sees them, the hash always there. */
export function argsEntry(args: unknown): { args: string; argsHash: string } {
  const stored = storedArgs(args);
  return { args: stored.args, argsHash: stored.argsHash ?? sha256(stored.args) };
}

/**
 * Flat, plain arguments (see argsEntry) in any key order: their own JSON is
 * their preview, and their canonical JSON that of the same keys sorted
 * (the same string when they came sorted). A client sends a note's title
 * before its text, so most writes come unsorted; walked and copied by the
 * two functions above, they cost the log several times this. Null for any other.
 */
export function flatJson(v: unknown): { preview: string; canonical: string } | null {
  if (typeof v !== "object" || v === null || Array.isArray(v) || Object.getPrototypeOf(v) !== Object.prototype) return null;
  let last: string | null = null;
  let sorted = true;
  for (const k in v) {
    if (!Object.hasOwn(v, k) || SECRET.test(k)) return null;
    if (last !== null && !(last < k)) sorted = false;
    const x = (v as Record<string, unknown>)[k];
    const t = typeof x;
    if (t === "string" ? (x as string).length > MAX_STRING : !(t === "number" || t === "boolean" || x === null)) return null;
    last = k;
  }
  const preview = JSON.stringify(v);
  if (sorted) return { preview, canonical: preview };
  // As canonical() makes it: the keys set in sorted order on a new object.
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v).sort()) out[k] = (v as Record<string, unknown>)[k];
  return { preview, canonical: JSON.stringify(out) };
}
