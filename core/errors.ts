// One refusal shape for every surface (HTTP, MCP, CLI): DESIGN.md's error table.
export type ErrorKind =
  | "invalid_argument"
  | "unauthenticated"
  | "payment_required"
  | "forbidden"
  | "not_found"
  | "method_not_allowed"
  | "conflict"
  | "too_large"
  | "request_timeout"
  | "rate_limited"
  | "not_configured"
  | "upstream_failed"
  | "upstream_unavailable"
  | "upstream_timeout"
  | "storage_unavailable"
  | "internal";

const statusOf: Record<ErrorKind, number> = {
  invalid_argument: 400,
  unauthenticated: 401,
  payment_required: 402,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  too_large: 413,
  request_timeout: 408,
  rate_limited: 429,
  not_configured: 501,
  upstream_failed: 502,
  upstream_unavailable: 503,
  upstream_timeout: 504,
  storage_unavailable: 503,
  internal: 500,
};

/** Every kind of refusal, for documents that describe them (OpenAPI). */
export const errorKinds = () => Object.keys(statusOf) as ErrorKind[];

export interface ErrorBody {
  status: number;
  kind: ErrorKind;
  message: string;
  field?: string;
  retry: boolean;
  request_id?: string;
  [extra: string]: unknown;
}

export class HearthError extends Error {
  readonly status: number;
  readonly kind: ErrorKind;
  readonly field?: string;
  readonly retry: boolean;
  /** Extra members of the error body (candidates of a conflict, a payment challenge, ...). */
  readonly extra?: Record<string, unknown>;
  /** Response headers that belong with this refusal (Retry-After, WWW-Authenticate, ...). */
  readonly headers?: Record<string, string>;
  /** Members of an HTTP answer's body beside "error", for clients of a protocol that reads them there (x402 v1). */
  readonly envelope?: Record<string, unknown>;

  constructor(
    kind: ErrorKind,
    message: string,
    opts: { field?: string; retry?: boolean; extra?: Record<string, unknown>; headers?: Record<string, string>; envelope?: Record<string, unknown> } = {},
  ) {
    super(message);
    this.kind = kind;
    this.status = statusOf[kind];
    this.field = opts.field;
    this.retry = opts.retry ?? (kind.startsWith("upstream_") || kind === "rate_limited");
    this.extra = opts.extra;
    this.headers = opts.headers;
    this.envelope = opts.envelope;
  }

  body(requestId?: string): ErrorBody {
    const b: ErrorBody = { status: this.status, kind: this.kind, message: this.message, retry: this.retry };
    if (this.field) b.field = this.field;
    if (this.extra) Object.assign(b, this.extra);
    if (requestId) b.request_id = requestId;
    return b;
  }
}

export const invalid = (field: string, message: string) => new HearthError("invalid_argument", message, { field });
export const notFound = (message: string) => new HearthError("not_found", message);
export const forbidden = (message: string) => new HearthError("forbidden", message);
export const conflict = (message: string, extra?: Record<string, unknown>) => new HearthError("conflict", message, { extra });
export const tooLarge = (message: string, field?: string) => new HearthError("too_large", message, { field });
export const notConfigured = (message: string) => new HearthError("not_configured", message);
export const unauthenticated = (message: string) => new HearthError("unauthenticated", message);
export const upstream = (kind: "upstream_failed" | "upstream_unavailable" | "upstream_timeout", message: string) =>
  new HearthError(kind, message, { retry: true });

/** Bun's PostgreSQL client's codes for a database it cannot reach, or lost on the way. */
const PG_UNREACHABLE = new Set([
  "ERR_POSTGRES_CONNECTION_REFUSED",
  "ERR_POSTGRES_CONNECTION_FAILED",
  "ERR_POSTGRES_CONNECTION_CLOSED",
  "ERR_POSTGRES_CONNECTION_TIMEOUT",
  "ERR_POSTGRES_IDLE_TIMEOUT",
  "ERR_POSTGRES_LIFETIME_TIMEOUT",
  "ECONNREFUSED",
  "ECONNRESET",
]);

/**
 * The SQLSTATEs of a PostgreSQL server that is there but cannot serve: shutting
 * down or starting up (57P0x), a connection lost (class 08), out of connections.
 */
const pgGone = (state: string) => state.startsWith("08") || state === "57P01" || state === "57P02" || state === "57P03" || state === "53300";

/**
 * A disk that is full or read-only, or a database out of reach, is the
 * machine's trouble, not a bug: the caller is told the call was not made and
 * may be retried once it is fixed. SQLite's codes, PostgreSQL's and the file
 * system's, looked for along the cause chain (the ORM wraps what the driver throws).
 */
function storageFault(e: unknown): HearthError | null {
  for (let x = e, depth = 0; x && typeof x === "object" && depth < 5; x = (x as { cause?: unknown }).cause, depth++) {
    const code = String((x as { code?: unknown }).code ?? "");
    const state = code.startsWith("ERR_POSTGRES") ? String((x as { errno?: unknown }).errno ?? "") : "";
    if (PG_UNREACHABLE.has(code) || pgGone(state))
      return new HearthError("storage_unavailable", "the instance cannot reach its database just now; send the call again shortly", { retry: true });
    if (state === "53100")
      return new HearthError("storage_unavailable", "the instance's database has no room left on its disk: nothing was written; reads still work", { retry: true });
    if (state === "25006")
      return new HearthError("storage_unavailable", "the instance's database is read-only just now: nothing was written; reads still work", { retry: true });
    if (code === "SQLITE_FULL" || code === "ENOSPC" || code === "EDQUOT")
      return new HearthError("storage_unavailable", "the instance's disk is full: nothing was written; reads still work", { retry: true });
    if (code.startsWith("SQLITE_READONLY") || code === "EROFS")
      return new HearthError("storage_unavailable", "the instance's data folder is read-only: nothing was written; reads still work", { retry: true });
    if (code === "EACCES" || code === "EPERM")
      return new HearthError("storage_unavailable", "the instance may not write to its data folder (permission denied): nothing was written", { retry: true });
    if (code.startsWith("SQLITE_IOERR") || code === "EIO")
      return new HearthError("storage_unavailable", "the instance could not write to its disk: nothing was written", { retry: true });
  }
  return null;
}

/**
 * What two writes at once can meet in the database, never a bug of the
 * caller's nor the instance's: a value another write took first (a unique
 * key: 409, naming the table and columns, never the rows' values), or, on
 * PostgreSQL, a transaction the database chose to end so another could go on
 * (deadlock, serialization failure: 503, safe to send again, since nothing
 * of it was written). Both stores' codes, along the cause chain.
 */
function concurrencyFault(e: unknown): HearthError | null {
  for (let x = e, depth = 0; x && typeof x === "object" && depth < 5; x = (x as { cause?: unknown }).cause, depth++) {
    const err = x as { code?: unknown; errno?: unknown; message?: unknown; table?: unknown; detail?: unknown };
    const code = String(err.code ?? "");
    const state = String(err.errno ?? "");
    if (code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY") {
      // "UNIQUE constraint failed: t.a, t.b"
      const taken = /constraint failed: (.+)$/.exec(String(err.message ?? ""))?.[1]?.trim();
      return taken ? takenBy(taken.split(/,\s*/)) : takenBy([]);
    }
    if (code.startsWith("ERR_POSTGRES") && state === "23505") {
      // "Key (a, b)=(…) already exists."
      const cols = /^Key \(([^)]*)\)=/.exec(String(err.detail ?? ""))?.[1];
      const table = typeof err.table === "string" ? err.table : "";
      return takenBy(cols ? cols.split(/,\s*/).map((c) => (table ? `${table}.${c}` : c)) : table ? [table] : []);
    }
    if (code.startsWith("ERR_POSTGRES") && (state === "40P01" || state === "40001"))
      return new HearthError("storage_unavailable", "the write met another one under way and was undone: nothing was written; send it again", { retry: true });
    // Several instances on one SQLite file: another held the write lock past busy_timeout.
    if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"))
      return new HearthError("storage_unavailable", "the database was busy with another write for too long: nothing was written; send it again", { retry: true });
  }
  return null;
}

function takenBy(columns: string[]): HearthError {
  const what = columns.join(", ");
  return new HearthError("conflict", what ? `already taken: another write recorded the same ${what} first; nothing was written` : "already taken by another write; nothing was written", {
    extra: what ? { taken: columns } : undefined,
  });
}

/** Anything thrown that is not a HearthError becomes a 500 without its stack. */
export function asHearthError(e: unknown): HearthError {
  if (e instanceof HearthError) return e;
  return storageFault(e) ?? concurrencyFault(e) ?? new HearthError("internal", "internal error");
}
