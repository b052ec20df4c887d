// Reading an account's own log: filters, pages (newest first, by id), and the
// rows streamed for an export, a page at a time so a long log is never held
// in memory whole.
import { and, desc, eq, gte, lt, ne, type SQL } from "drizzle-orm";
import { invalid } from "../errors.ts";
import type { Runtime } from "../runtime.ts";
import { auditKinds, auditLog } from "./schema.ts";

/** An entry whole: its row, and its kind's values (the view audit_entries shows the same). */
const ENTRY = {
  id: auditLog.id,
  at: auditLog.at,
  callId: auditLog.callId,
  account: auditLog.account,
  via: auditKinds.via,
  credential: auditKinds.credential,
  credentialName: auditKinds.credentialName,
  surface: auditKinds.surface,
  service: auditKinds.service,
  method: auditKinds.method,
  args: auditLog.args,
  argsHash: auditLog.argsHash,
  credits: auditLog.credits,
  paid: auditLog.paid,
  outcome: auditKinds.outcome,
  status: auditKinds.status,
  approved: auditKinds.approved,
};

export type AuditEntry = { [K in keyof typeof ENTRY]: (typeof ENTRY)[K]["_"]["data"] | ((typeof ENTRY)[K]["_"]["notNull"] extends true ? never : null) } & { argsHash: string };

export interface AuditFilter {
  credential?: string;
  /** "service" or "service/method". */
  method?: string;
  /** "ok", "refused" (any error), or an error kind. */
  outcome?: string;
  /** Inclusive, ms. */
  from?: number;
  /** Exclusive, ms. */
  to?: number;
  /** Entries with ids below this one: the next page. */
  before?: number;
}

const day = (v: string, field: string, end: boolean): number => {
  const t = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(v) ? `${v}T00:00:00Z` : v);
  if (Number.isNaN(t)) throw invalid(field, `${field} must be a date (YYYY-MM-DD) or a date and time (got "${v}")`);
  return /^\d{4}-\d{2}-\d{2}$/.test(v) && end ? t + 86_400_000 : t;
};

/** The filter a query string asks for; a date that is none is a 400 naming it. */
export function filterOf(q: URLSearchParams): AuditFilter {
  const f: AuditFilter = {};
  const s = (k: string) => q.get(k)?.trim() || undefined;
  f.credential = s("credential");
  f.method = s("method");
  f.outcome = s("outcome");
  const from = s("from");
  const to = s("to");
  if (from) f.from = day(from, "from", false);
  if (to) f.to = day(to, "to", true);
  const before = s("before");
  if (before) {
    f.before = Number(before);
    if (!Number.isInteger(f.before) || f.before < 1) throw invalid("before", `before must be an entry id (got "${before}")`);
  }
  return f;
}

function where(account: string, f: AuditFilter): SQL | undefined {
  const c: (SQL | undefined)[] = [eq(auditLog.account, account)];
  if (f.credential) c.push(f.credential === "session" ? eq(auditKinds.via, "session") : eq(auditKinds.credential, f.credential));
  if (f.method) {
    const [service, method] = f.method.split("/");
    c.push(eq(auditKinds.service, service));
    if (method) c.push(eq(auditKinds.method, method));
  }
  if (f.outcome === "refused") c.push(ne(auditKinds.outcome, "ok"));
  else if (f.outcome) c.push(eq(auditKinds.outcome, f.outcome));
  if (f.from !== undefined) c.push(gte(auditLog.at, f.from));
  if (f.to !== undefined) c.push(lt(auditLog.at, f.to));
  if (f.before !== undefined) c.push(lt(auditLog.id, f.before));
  return and(...c);
}

/** One page of the account's entries, newest first. */
export async function readLog(rt: Runtime, account: string, f: AuditFilter, limit = 50): Promise<AuditEntry[]> {
  // Entries still held for the next batch are written first, so a page shows every call made before it was asked for.
  await rt.audit?.flush();
  const rows = await rt.store.rdb.select(ENTRY).from(auditLog).innerJoin(auditKinds, eq(auditKinds.id, auditLog.kind)).where(where(account, f)).orderBy(desc(auditLog.id)).limit(limit).all();
  // A hash left null is that of the preview, which is then the arguments' canonical JSON (core/audit/log.ts).
  for (const r of rows) r.argsHash ??= Bun.SHA256.hash(r.args, "hex") as string;
  return rows as AuditEntry[];
}

/** Every entry the filter selects, newest first, a page at a time. */
export async function* eachEntry(rt: Runtime, account: string, f: AuditFilter): AsyncGenerator<AuditEntry> {
  let before = f.before;
  for (;;) {
    const rows = await readLog(rt, account, { ...f, before }, 500);
    for (const r of rows) yield r;
    if (rows.length < 500) return;
    before = rows[rows.length - 1].id;
  }
}

/** The last few calls of each of these credentials. */
export async function lastCalls(rt: Runtime, account: string, credential: string, n = 3): Promise<AuditEntry[]> {
  return readLog(rt, account, { credential }, n);
}

