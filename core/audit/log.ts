// Writes the log. A call that changed something or was charged is kept in its
// own transaction (dispatch calls `within`), so no write commits without its
// entry and no rolled-back one leaves an entry claiming it happened. Every
// other call (reads, refusals: nothing changed) is held in memory and written
// in batches, once a second or every 500 entries and when the instance stops,
// so a read pays for making its row and a push onto an array, not for a
// database write.
import { lt, sql } from "drizzle-orm";
import type { Statement } from "bun:sqlite";
import type { Call } from "../call.ts";
import { isPg } from "../db/store.ts";
import { HearthError } from "../errors.ts";
import type { Caller } from "../plugin.ts";
import { paymentOf } from "../pay/x402.ts";
import type { Runtime } from "../runtime.ts";
import { storedArgs } from "./preview.ts";
import { auditKinds, auditLog } from "./schema.ts";


/** What dispatch knows when a call ends. */
export interface Ended {
  call: Call;
  surface: string;
  service: string;
  method: string;
  args: unknown;
  error?: unknown;
  at: number;
}

const BATCH = 500;
const DAY_MS = 86_400_000;
const EVERY_MS = 1000;

const UNPAID = { payer: null, amount: null } as const;

function payerOf(caller: Caller): { readonly payer: string | null; readonly amount: string | null } {
  const p = paymentOf(caller);
  // Most calls pay nothing: one answer shared by them all rather than an object made for each.
  if (!p) return UNPAID;
  const inner = (p.payload.payload ?? {}) as { authorization?: { from?: unknown; value?: unknown } };
  const a = inner.authorization;
  const receipt = p.receipt as { payer?: string } | undefined;
  return { payer: receipt?.payer ?? (typeof a?.from === "string" ? a.from : null), amount: p.receipt && a?.value !== undefined ? String(a.value) : null };
}

/**
 * Appends an entry's values, in the order of FIELDS_WIDTH's, to `out`. Arguments as
 * most calls send them (see storedArgs) keep their JSON as the preview; when that
 * JSON is also their canonical form (keys in order) no hash is stored: it is the
 * SHA-256 of that same text, which a reader takes (read.ts), so a write neither
 * takes it nor stores it. Flat arguments sent in another key order are hashed
 * from their keys sorted, without walking them twice.
 */
function pushEntry(out: unknown[], e: Ended): void {
  const { call } = e;
  const caller = call.caller;
  const err = e.error;
  const refusal = err === undefined ? null : err instanceof HearthError ? err : null;
  const pay = payerOf(caller);
  const credential = caller.via === "token" ? (caller.tokenId ?? null) : caller.via === "payment" || pay.payer ? pay.payer : null;
  const ok = err === undefined;
  const stored = storedArgs(e.args);
  out.push(
    e.at,
    call.id,
    caller.account?.id ?? null,
    caller.via,
    credential,
    caller.via === "token" ? (caller.tokenName ?? null) : caller.via === "session" ? "session" : null,
    e.surface,
    e.service,
    e.method,
    stored.args,
    stored.argsHash,
    // Credits are charged only when the call succeeded: a failed call's plan is released, not committed.
    ok && caller.via !== "payment" && !pay.amount ? call.price : 0,
    ok ? pay.amount : null,
    ok ? "ok" : (refusal?.kind ?? "internal"),
    ok ? 200 : (refusal?.status ?? 500),
    call.approvedBy ? `person:${call.approvedBy}` : ok ? "policy" : refusal && (refusal.status === 401 || refusal.status === 403 || refusal.status === 402) ? "nobody" : "policy",
  );
}

/**
 * What an entry says, one value for each, in this order (see pushEntry): at,
 * call_id, account, via, credential, credential_name, surface, service,
 * method, args, args_hash, credits, paid, outcome, status, approved (the
 * columns of the view audit_entries).
 */
const FIELDS_WIDTH = 16;
/** Where in an entry's values its kind's are (audit_kinds' columns, in order). */
const KIND_AT = [3, 4, 5, 6, 7, 8, 13, 14, 15];
/** Where in an entry's values each of a row's values is, but its kind (see ROW). */
const ROW_FROM = [0, 1, 2, -1, 9, 10, 11, 12];

const ROW = "at, call_id, account, kind, args, args_hash, credits, paid";
/** audit_kinds' columns as drizzle names them, in KIND's order. */
const KIND_COLUMNS = ["via", "credential", "credentialName", "surface", "service", "method", "outcome", "status", "approved"];
const KIND = "via, credential, credential_name, surface, service, method, outcome, status, approved";
/** Values a row of audit_log has, one for each of ROW. */
const WIDTH = 8;
/** Kinds kept in memory: past this many the map starts again (each is found in the table, or made anew, on its next entry). */
const KINDS_KEPT = 10_000;

const SQLITE_INSERT = `INSERT INTO audit_log (${ROW}) VALUES`;
/** Rows one SQLite statement inserts: 124 rows of 8 values (992) stay under the oldest limit SQLite builds keep on parameters (999). */
const ROWS_PER_INSERT = 124;
/**
 * Columns a statement binds once when every row of it holds one value in
 * each (see sqliteInsert), as whole groups: the account, the kind, the
 * arguments, the cost. Grouped so the statements a log needs stay few (16
 * kinds of full statement, each prepared once), whatever mix of calls a
 * batch holds: binding a string costs SQLite's copy of it.
 */
const SHARED_GROUPS = [[2], [3], [4, 5], [6, 7]].map((cols) => cols.reduce((m, c) => m | (1 << c), 0));
/** Prepared SQLite inserts kept at once: more than the 123 partial and 16 full ones the log makes, a bound should that change. */
const STATEMENTS_KEPT = 160;

/**
 * The text of an insert of `n` rows whose columns marked in `shared` (a bit
 * for each, in ROW's order) hold one value in every row: that value is
 * bound once, as ?1, ?2, ..., and each row names it by number; every other
 * column takes a parameter of its own in each row, after them, row by row.
 */
function sqliteInsert(n: number, shared: number): string {
  const place: string[] = [];
  let k = 0;
  for (let c = 0; c < WIDTH; c++) if (shared & (1 << c)) place[c] = `?${++k}`;
  const rows: string[] = [];
  for (let j = 0; j < n; j++) {
    const cells: string[] = [];
    for (let c = 0; c < WIDTH; c++) cells.push(shared & (1 << c) ? place[c] : `?${++k}`);
    rows.push(`(${cells.join(", ")})`);
  }
  return `${SQLITE_INSERT} ${rows.join(", ")}`;
}

const PG_INSERT = `INSERT INTO audit_log (${ROW}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`;
/**
 * A batch as one statement whose text never changes (so it is parsed and
 * planned once per connection): the rows as one JSON array of arrays, in
 * ROW's order. Read as jsonb, parsed once: as json, each of a row's ->>
 * parsed the row's text again.
 */
const pgInsertMany = (rows: unknown[][]) =>
  sql`INSERT INTO audit_log (${sql.raw(ROW)}) SELECT (r->>0)::bigint, r->>1, r->>2, (r->>3)::bigint, r->>4, r->>5, (r->>6)::bigint, r->>7
    FROM jsonb_array_elements(${JSON.stringify(rows.map((r) => r.map(wellFormed)))}::text::jsonb) WITH ORDINALITY AS e(r, n) ORDER BY n`;
/** Text as the database stores it: half a surrogate pair (a preview cut mid-character) is U+FFFD, as a parameter's UTF-8 gives it, where JSON's escape for it is refused. */
const wellFormed = (v: unknown) => (typeof v === "string" ? v.toWellFormed() : v);
/** The rows of values `width` to a row, each its own array. */
const rowsOf = (values: unknown[], width: number): unknown[][] => {
  const out: unknown[][] = [];
  for (let at = 0; at < values.length; at += width) out.push(values.slice(at, at + width));
  return out;
};
/** A kind's values as one string, for the map of kinds: null apart from any text. */
const kindKey = (v: unknown[], at: number) => {
  let key = "";
  for (const k of KIND_AT) key += v[at + k] === null ? "\u0001\u0000" : `${v[at + k]}\u0000`;
  return key;
};

/** An entry as a caller outside dispatch gives it (core/settings/people.ts), each value by the name drizzle gives it. */
export interface Recorded {
  at: number;
  callId: string;
  account: string | null;
  via: string;
  credential: string | null;
  credentialName: string | null;
  surface: string;
  service: string;
  method: string;
  args: string;
  argsHash: string | null;
  credits: number;
  paid: string | null;
  outcome: string;
  status: number;
  approved: string;
}
const RECORDED: (keyof Recorded)[] = ["at", "callId", "account", "via", "credential", "credentialName", "surface", "service", "method", "args", "argsHash", "credits", "paid", "outcome", "status", "approved"];

export class AuditLog {
  /** The values of the entries held for the next batch, WIDTH to an entry (pushEntry). */
  private held: unknown[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;
  private flushing: Promise<void> = Promise.resolve();

  private pruned = 0;

  constructor(private readonly rt: Runtime) {}

  /**
   * Removes entries older than HEARTH_AUDIT_DAYS (0 keeps them all); run at
   * most once a day, with a batch. By id, as the log has no index on the
   * time: every entry below the first one young enough to keep goes (ids
   * are given in the order entries are written, so that is the old ones; a
   * read's entry held a moment longer than a write's after it goes a day
   * later). The newest entry always stays, old or not: SQLite counts the
   * next id from it, so an emptied log would give its ids again (the table
   * refuses its removal too, migrations/0001_no_time_index.sql).
   */
  async prune(now = this.rt.clock.now().getTime()): Promise<number> {
    this.pruned = now;
    const days = Number(this.rt.config.HEARTH_AUDIT_DAYS ?? "90");
    if (!(days > 0)) return 0;
    const keepFrom = sql`coalesce((SELECT id FROM audit_log WHERE at >= ${now - days * DAY_MS} ORDER BY id LIMIT 1), (SELECT max(id) FROM audit_log))`;
    const gone = await this.rt.store.write(() => this.rt.store.wdb.delete(auditLog).where(lt(auditLog.id, keepFrom)).run());
    return (gone as { changes?: number }).changes ?? 0;
  }

  /** Prepared inserts on the writer, by the number of rows they take (1 to ROWS_PER_INSERT) and the columns they bind once (see sqliteInsert). */
  private statements = new Map<number, Statement>();
  /** The parameters one statement is given, reused from batch to batch. */
  private params: unknown[] = [];
  /** Kinds known to be in the table (committed), by kindKey. */
  private kinds = new Map<string, number>();
  private insertKind: Statement | null = null;

  /**
   * The id of the kind of the entry whose values start at `at`: from the
   * map, else made in the write transaction in progress. A kind made there
   * is remembered once that transaction commits (rolled back, its row is
   * gone, and so would be the entries naming it). Two instances on one
   * database may each make the same kind: two rows saying the same.
   */
  private kindOf(v: unknown[], at: number, made: Map<string, number>): number | Promise<number> {
    const key = kindKey(v, at);
    const known = this.kinds.get(key) ?? made.get(key);
    if (known !== undefined) return known;
    const values = KIND_AT.map((k) => v[at + k]);
    const store = this.rt.store;
    const remember = (id: number) => {
      made.set(key, id);
      void store.onCommit(() => {
        if (this.kinds.size >= KINDS_KEPT) this.kinds.clear();
        this.kinds.set(key, id);
      });
      return id;
    };
    if (isPg(store))
      return (async () => {
        const [row] = await store.wdb.insert(auditKinds).values(Object.fromEntries(KIND_COLUMNS.map((c, i) => [c, values[i]])) as typeof auditKinds.$inferInsert).returning({ id: auditKinds.id }).all();
        return remember(Number(row.id));
      })();
    this.insertKind ??= store.writer.prepare(`INSERT INTO audit_kinds (${KIND}) VALUES (${KIND_AT.map(() => "?").join(", ")}) RETURNING id`);
    return remember((this.insertKind.get(...(values as [string])) as { id: number }).id);
  }

  /**
   * Inserts entries (FIELDS_WIDTH values each, in its order) in the write transaction in
   * progress, as rows naming their kinds. On SQLite through prepared
   * statements on the writer (the transaction's own connection): a query
   * builder costs more per row than the insert itself, and a statement
   * taking many rows at once costs less per row than one run for each (one
   * crossing into SQLite, one walk down each index, for ROWS_PER_INSERT
   * rows). Columns holding one value in every row of a full statement (the
   * account, the kind: most of a batch comes from a few clients) have it
   * bound once (SHARED_GROUPS).
   */
  private async insert(entries: unknown[]): Promise<void> {
    const store = this.rt.store;
    const count = entries.length / FIELDS_WIDTH;
    // Its own array: on PostgreSQL a batch and a write's entry may be made at once, each awaiting a kind.
    const rows: unknown[] = [];
    const made = new Map<string, number>();
    let kind = 0;
    for (let at = 0, prev = -1; at < entries.length; prev = at, at += FIELDS_WIDTH) {
      // Most entries are of their neighbour's kind: it is found by comparing their values, without a key.
      let same = prev >= 0;
      for (let i = 0; same && i < KIND_AT.length; i++) same = entries[at + KIND_AT[i]] === entries[prev + KIND_AT[i]];
      if (!same) {
        const k = this.kindOf(entries, at, made);
        kind = typeof k === "number" ? k : await k;
      }
      for (const from of ROW_FROM) rows.push(from < 0 ? kind : entries[at + from]);
    }
    if (isPg(store)) {
      // One entry of a write, the call's own: sent with its COMMIT rather than in a round trip of its own.
      if (count === 1 && store.sendWithCommit?.(PG_INSERT, rows)) return;
      const all = rowsOf(rows, WIDTH);
      for (let i = 0; i < all.length; i += BATCH) await store.wdb.run(pgInsertMany(all.slice(i, i + BATCH)));
      return;
    }
    this.insertSqlite(rows, count);
  }

  private insertSqlite(rows: unknown[], count: number): void {
    const { params } = this;
    for (let i = 0; i < count; i += ROWS_PER_INSERT) {
      const n = Math.min(ROWS_PER_INSERT, count - i);
      const from = i * WIDTH;
      const to = from + n * WIDTH;
      // The last, shorter statement of a batch binds every value: its size changes from batch to batch, and so would its statement.
      let shared = 0;
      if (n === ROWS_PER_INSERT) {
        let same = 0;
        for (let c = 0; c < WIDTH; c++) {
          const v = rows[from + c];
          let all = true;
          for (let at = from + c + WIDTH; all && at < to; at += WIDTH) all = rows[at] === v;
          if (all) same |= 1 << c;
        }
        for (const g of SHARED_GROUPS) if ((same & g) === g) shared |= g;
      }
      params.length = 0;
      for (let c = 0; c < WIDTH; c++) if (shared & (1 << c)) params.push(rows[from + c]);
      for (let at = from; at < to; at += WIDTH) for (let c = 0; c < WIDTH; c++) if (!(shared & (1 << c))) params.push(rows[at + c]);
      const key = n * (1 << WIDTH) + shared;
      let st = this.statements.get(key);
      if (!st) {
        if (this.statements.size >= STATEMENTS_KEPT) {
          const [oldest, old] = this.statements.entries().next().value!;
          old.finalize();
          this.statements.delete(oldest);
        }
        this.statements.set(key, (st = this.rt.store.writer.prepare(sqliteInsert(n, shared))));
      }
      try {
        st.run(...(params as [string]));
      } finally {
        params.length = 0;
      }
    }
  }

  /** Kept now, in the write transaction in progress: it commits, or rolls back, with the call's own writes. */
  async within(e: Ended): Promise<void> {
    const entry: unknown[] = [];
    pushEntry(entry, e);
    await this.insert(entry);
  }

  /** Entries a caller outside dispatch makes (core/settings/people.ts), kept now in the write transaction in progress. */
  async record(entries: Recorded[]): Promise<void> {
    const values: unknown[] = [];
    for (const e of entries) for (const f of RECORDED) values.push(e[f]);
    await this.insert(values);
  }

  /**
   * Kept in the next batch. The entry's values are taken now, pushed onto
   * one array the batch shares: what is held until then is those few values,
   * not the call and its arguments (kept alive through a collection or two,
   * they cost more than taking them), nor an object for each entry.
   */
  later(e: Ended): void {
    const held = this.held;
    const length = held.length;
    try {
      pushEntry(held, e);
    } catch (err) {
      held.length = length;
      this.rt.log.error("audit log entry not made", { service: e.service, method: e.method, error: err instanceof Error ? err.message : String(err) });
      return;
    }
    if (held.length >= BATCH * FIELDS_WIDTH) void this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), EVERY_MS);
      (this.timer as { unref?: () => void }).unref?.();
    }
  }

  /** Writes what is held; resolves once it (and any batch before it) is written. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer), (this.timer = null);
    const rows = this.held;
    this.held = [];
    const done = this.flushing.then(async () => {
      if (!rows.length || this.rt.store.closed) return;
      try {
        await this.rt.store.write(() => this.insert(rows));
      } catch {
        // One entry the store refuses does not take the rest of its batch with it.
        let lost = 0;
        let error = "";
        for (const row of rowsOf(rows, FIELDS_WIDTH)) {
          try {
            await this.rt.store.write(() => this.insert(row));
          } catch (e) {
            lost++;
            error = e instanceof Error ? e.message : String(e);
          }
        }
        if (lost) this.rt.log.error("audit log entries not written", { count: lost, error });
      }
      try {
        if (this.rt.clock.now().getTime() - this.pruned >= DAY_MS) await this.prune();
      } catch (e) {
        this.rt.log.error("audit log not pruned", { error: e instanceof Error ? e.message : String(e) });
      }
    });
    this.flushing = done;
    return done;
  }
}
