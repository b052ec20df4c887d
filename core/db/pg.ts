// The store on PostgreSQL (HEARTH_DATABASE_URL=postgres://…), through Bun's
// built-in client. Plugins keep drizzle's SQLite query builders: they run on
// drizzle's sqlite-proxy driver, whose callback gets the SQL the SQLite
// dialect wrote; core/db/pgsql.ts gives PostgreSQL's form of it and rows come
// back as SQLite would give them (int8 and numeric as numbers, booleans as
// 0/1, bytea as bytes), so drizzle's SQLite column mappers read them as they
// read SQLite's. Tables keep SQLite's storage classes (core/db/pgschema.ts).
//
// One write call is one transaction, as on SQLite: its queries run on one
// reserved connection between BEGIN and COMMIT (ROLLBACK when it throws),
// found through AsyncLocalStorage so nested calls join it; the connection is
// reserved and BEGIN sent with its first query, and a write whose one query
// is left to its end (Lastly) sends it with its audit entry as one statement,
// its own transaction, on the pool. Unlike SQLite's,
// write transactions run side by side, in this process and across
// instances: what must not interleave says so itself, with a unique
// constraint, a conditional update, or store.lock(key) on what it reads
// before it writes. How many run at once is bounded (half the pool), so
// reads made inside a write always find a connection. exclusive() still
// waits for the writes under way in this process and holds the next ones
// back while it runs. Reads run on the pool and see committed data only.
import { AsyncLocalStorage } from "node:async_hooks";
import type { Database } from "bun:sqlite";
import { SQL, type ReservedSQL } from "bun";
import { drizzle } from "drizzle-orm/sqlite-proxy";
import type { Db } from "../plugin.ts";
import { refuseNewer, type MigrationSet } from "./migrate.ts";
import { toPostgres } from "./pgsql.ts";
import { Gate, ownWriter, pgStandIns, runAfterCommit, type Lastly, type Store } from "./store.ts";

/** The advisory lock key for migrating (two instances starting at once migrate once). */
const MIGRATE_KEY = 0x4865617274680002n;

type Conn = SQL | ReservedSQL;
interface Tx {
  /** The write's own connection, once a statement needs it (see onConn); exclusive() reserves it at once. */
  conn: ReservedSQL | null;
  /** The connection being reserved, and what waits to be sent on it, in order. */
  reserving: Promise<unknown> | null;
  queued: { go: () => void; no: (e: unknown) => void }[];
  /** A statement of the write's own has been sent or queued: a last one is no longer its first. */
  sent: boolean;
  /** COMMIT answered: nothing is left to roll back. */
  ended: boolean;
  open: boolean;
  done: boolean;
  after: (() => void | Promise<void>)[];
  /** Statements sent with the COMMIT (sendWithCommit). */
  withCommit: { text: string; params: unknown[] }[];
  /** BEGIN's answer, once it is sent: a write's transaction begins with its first statement. */
  begun: Promise<unknown> | null;
  /** Answers waited on with the COMMIT, ahead of everything sent with it (settleAtCommit). */
  settle: Promise<unknown>[];
  /** While settleAtCommit starts a write's last statement: that statement is kept, not sent, if it is the write's first. */
  keep: boolean;
  /** The write's one statement, kept to be sent at its end, alone or as one statement with those sent with the COMMIT (see finish()). */
  kept: Kept | null;
}

/** A statement kept for the end of its write, with what its caller waits on. */
interface Kept {
  text: string;
  params: unknown[];
  method: Method;
  ok: (answer: { rows: any; changes?: number }) => void;
  no: (e: unknown) => void;
}
/** drizzle's, and "rows": every row, by position only (core/db/prepared.ts maps them itself). */
type Method = "run" | "all" | "values" | "get" | "rows";

// PostgreSQL type ids whose values SQLite would give as numbers.
const INT8 = 20;
const NUMERIC = 1700;
const BOOL = 16;

/** One value as SQLite gives it: drizzle's SQLite mappers expect numbers, 0/1 and bytes. */
function sqliteValue(v: unknown, type: number): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === "bigint") return Number(v);
  if (type === BOOL || typeof v === "boolean") return v ? 1 : 0;
  if ((type === NUMERIC || type === INT8) && typeof v === "string") return Number(v);
  return v;
}

/** Parameters as PostgreSQL takes them: booleans and dates as SQLite stores them would be bound already by drizzle's mappers; what raw SQL passes is made the same. */
function pgParam(v: unknown): unknown {
  if (typeof v === "boolean") return v ? 1 : 0;
  if (v instanceof Date) return v.getTime();
  return v;
}

/** A statement's rows by position, decoded as runOn's "rows" gives them; `params` are the runner's to change (fill() makes them anew each call). */
export type RowsRunner = (params: unknown[]) => Promise<unknown[][]>;

/** What the store's drizzle callback carries for core/db/prepared.ts: a runner for one statement's text, made once for it. */
export interface WithRows {
  rows(sqlText: string): RowsRunner;
}

/**
 * A runner for one statement, for a prepared query that runs it again and
 * again: its PostgreSQL text is made once, and each call only fills in its
 * parameters, runs it and decodes, in the rows Bun gave, the columns whose
 * values SQLite would give otherwise (int8 and numeric as numbers, booleans
 * as 0/1). Every other column's values are already SQLite's: Bun gives
 * bigints only for int8, booleans only for bool, and null for NULL.
 */
function rowsRunner(conn: Conn, sqlText: string): RowsRunner {
  if (/^\s*begin\b/i.test(sqlText)) return (params) => runOn(conn, sqlText, params, "rows") as Promise<never>;
  const text = toPostgres(sqlText);
  let seen: unknown = null;
  let decode: number[] = [];
  let types: number[] = [];
  const decoded = (res: unknown[][] & { columns?: { type: number }[]; statement?: { columns?: { type: number }[] } }) => {
    const columns = res.statement?.columns ?? res.columns ?? [];
    // The same statement answers with the same columns: which need decoding is worked out once for them.
    if (columns !== seen) {
      seen = columns;
      types = columns.map((c) => c.type);
      decode = [];
      types.forEach((t, i) => (t === INT8 || t === NUMERIC || t === BOOL) && decode.push(i));
    }
    if (decode.length)
      for (const r of res)
        for (const i of decode) r[i] = sqliteValue(r[i], types[i]);
    return res;
  };
  const failed = (e: unknown) => {
    throw withQuery(e, text);
  };
  return (params) => {
    for (let i = 0; i < params.length; i++) {
      const v = params[i];
      if (typeof v === "boolean" || v instanceof Date) params[i] = pgParam(v);
    }
    let q;
    try {
      q = conn.unsafe(text, params).values();
    } catch (e) {
      return Promise.reject(withQuery(e, text));
    }
    return (q as Promise<unknown[][]>).then(decoded, failed);
  };
}

/** The readers' drizzle callback, on the pool, carrying a runner maker for prepared queries (see WithRows). */
function callback(conn: Conn) {
  const run = (text: string, params: unknown[], method: Method) => runOn(conn, text, params, method);
  return Object.assign(run, { rows: (sqlText: string) => rowsRunner(conn, sqlText) } satisfies WithRows);
}

/** Runs one statement and answers in the shape drizzle's sqlite-proxy driver reads. */
export function runOn(conn: Conn, sqlText: string, params: unknown[], method: Method): Promise<{ rows: any; changes?: number }> {
  // drizzle's db.transaction() sends BEGIN through here: inside a write it would end the call's transaction early, and on the pool its statements would go to different connections.
  if (/^\s*begin\b/i.test(sqlText)) return Promise.reject(new Error("a transaction within a call: each write call is already one transaction (store.write)"));
  return runPg(conn, toPostgres(sqlText), params.map(pgParam), method);
}

/** runOn for a statement already in PostgreSQL's form, its parameters bound as PostgreSQL takes them. */
async function runPg(conn: Conn, text: string, params: unknown[], method: Method): Promise<{ rows: any; changes?: number }> {
  let res: any;
  try {
    res = await conn.unsafe(text, params).values();
  } catch (e) {
    throw withQuery(e, text);
  }
  if (method === "run") return { rows: [], changes: res.count ?? 0 };
  const columns: { name: string; type: number }[] = res.statement?.columns ?? res.columns ?? [];
  if (method === "rows") return { rows: (res as unknown[][]).map((r) => r.map((v, i) => sqliteValue(v, columns[i]?.type ?? 0))) };
  const rows = (res as unknown[][]).map((r) => {
    const row: any = r.map((v, i) => sqliteValue(v, columns[i]?.type ?? 0));
    // Rows are arrays, as the builders read them by position; a raw db.all(sql`…`) reads them by name, as bun:sqlite gives them.
    for (let i = 0; i < columns.length; i++) if (!(columns[i].name in row)) Object.defineProperty(row, columns[i].name, { value: row[i], enumerable: false });
    return row;
  });
  if (method === "get") return { rows: rows[0] };
  return { rows };
}

/**
 * COMMIT, with the statements to send ahead of it sent first on the same
 * connection without waiting between them; `settle`, the answers of
 * statements sent earlier and not yet waited on (BEGIN's, a Lastly's), are
 * waited on only once the COMMIT is on its way. One that fails fails the write,
 * as if it had been awaited: PostgreSQL ends a transaction one of whose
 * statements failed with a rollback, whatever COMMIT then asks.
 *
 * BEGIN and COMMIT are sent as the connection's tagged statements, prepared
 * as the others are: Bun's client sends a string without parameters as a
 * simple query, and sends a simple query only once what is ahead of it has
 * answered, so COMMIT took one more round trip of its own with the write's
 * row locks held (and BEGIN one before the first statement).
 */
async function commit(conn: ReservedSQL, ahead: Tx["withCommit"], settle: Tx["settle"]): Promise<void> {
  // A query is sent when it is first waited on: each is, in order, before COMMIT is made.
  const sent = ahead.map((q) => {
    const p = conn.unsafe(q.text, q.params);
    p.catch(() => {});
    return { p, text: q.text };
  });
  const committed = conn`COMMIT`;
  committed.catch(() => {});
  // A statement sent before these and answered only now: its failure, not theirs in the transaction it aborted, is the write's.
  for (const answer of settle)
    try {
      await answer;
    } catch (e) {
      await committed.catch(() => {});
      throw e;
    }
  for (const { p, text } of sent)
    try {
      await p;
    } catch (e) {
      await committed.catch(() => {});
      throw withQuery(e, text);
    }
  await committed;
}

/** Sends BEGIN ahead of a write's first statement, not waiting for its answer: the connection runs statements in order (see commit()). */
function begin(tx: Tx) {
  if (tx.begun || !tx.open) return;
  tx.begun = tx.conn!`BEGIN`;
  tx.begun.catch(() => {});
}

/**
 * The texts of statements folded into one (a write's few shapes, made again
 * and again), by the first's text, then the others' (most often one, the
 * audit entry's); "" for parts that cannot be. Both keys are texts made
 * once (toPostgres keeps its own), so a lookup builds no string.
 */
const foldedTexts = new Map<string, Map<string, string>>();

/**
 * One WITH that runs them all, its parameters the first's, then each
 * other's in turn: for a statement that gives its rows back (a read, or a
 * write with RETURNING) and others that each change rows. Null otherwise.
 */
function foldedText(kept: Kept, others: Tx["withCommit"]): string | null {
  const key = others.length === 1 ? others[0].text : others.map((q) => q.text).join("\u0000");
  let byOthers = foldedTexts.get(kept.text);
  if (!byOthers) {
    // Bounded: a write's shapes are few, but a statement's text may carry its values.
    if (foldedTexts.size >= 1000) foldedTexts.clear();
    foldedTexts.set(kept.text, (byOthers = new Map()));
  }
  let text = byOthers.get(key);
  if (text === undefined) {
    const gives = /^\s*select\b/i.test(kept.text) || (/^\s*(insert|update|delete)\b/i.test(kept.text) && /\breturning\b/i.test(kept.text));
    const changes = others.every((q) => /^\s*(insert|update|delete)\b/i.test(q.text) && !/\breturning\b/i.test(q.text));
    text = "";
    if (gives && changes) {
      // A statement's text fixes how many parameters it takes.
      let at = kept.params.length;
      text = `WITH w AS (${kept.text})`;
      others.forEach((q, i) => {
        const from = at;
        text += `, c${i} AS (${q.text.replace(/\$(\d+)/g, (_, n) => `$${Number(n) + from}`)})`;
        at += q.params.length;
      });
      text += " SELECT * FROM w";
    }
    byOthers.set(key, text);
  }
  return text || null;
}

function withQuery(e: unknown, text: string): Error {
  const err = e instanceof Error ? e : new Error(String(e));
  (err as Error & { query?: string }).query = text;
  return err;
}

/** A bun:sqlite connection's stand-in: the PostgreSQL store has none, and any use says so. */
function noSqlite(what: string, store: PgStore): Database {
  const stand = new Proxy({} as Database, {
    get(_t, prop) {
      if (typeof prop === "symbol") return undefined;
      throw new Error(`store.${what}.${prop}: the PostgreSQL store has no SQLite connection; use store.${what === "writer" ? "wdb" : "rdb"} (drizzle)`);
    },
  });
  pgStandIns.set(stand, store);
  return stand;
}


export class PgStore implements Store {
  readonly kind = "postgres";
  readonly sql: SQL;
  readonly wdb: Db;
  readonly rdb: Db;
  readonly writer = noSqlite("writer", this);
  readonly reader = noSqlite("reader", this);
  /** Writes under way side by side (shared), and exclusive() (alone). */
  private gate: Gate;
  /** The write or exclusive section of this async context, with its connection; `done` once it has ended, for work it left running. */
  private inTx = new AsyncLocalStorage<Tx>();
  /** The owners and tags migrate() has seen applied, for the synchronous check at start (see isMigrated). */
  private applied = new Map<string, Set<string>>();

  constructor(readonly url: string, opts: { max?: number } = {}) {
    const max = opts.max ?? 10;
    this.sql = new SQL({ url, max, bigint: true, onnotice: () => {} } as ConstructorParameters<typeof SQL>[0]);
    this.gate = new Gate(Math.max(1, Math.floor(max / 2)));
    // A writer's statements go through runWrite (BEGIN ahead of the first, a last one kept for the write's end): its prepared queries ask it each call.
    this.wdb = drizzle((text, params, method) => this.runWrite(text, params, method)) as unknown as Db;
    this.rdb = drizzle(callback(this.sql)) as unknown as Db;
    ownWriter(this);
  }

  private active(): Tx | undefined {
    const tx = this.inTx.getStore();
    return tx && !tx.done ? tx : undefined;
  }

  /**
   * A writer's statement: on the write's connection inside a write, BEGIN
   * sent ahead of the first (a write in a transaction); on the pool (its own
   * transaction) outside one. A last statement that would be the write's
   * first is kept for its end (settleAtCommit).
   */
  private runWrite(text: string, params: unknown[], method: Method) {
    const tx = this.active();
    if (!tx) return runOn(this.sql, text, params, method);
    if (tx.keep && !tx.sent && !tx.kept && !/^\s*begin\b/i.test(text)) {
      const kept = { text: toPostgres(text), params: params.map(pgParam), method } as Kept;
      tx.kept = kept;
      return new Promise<{ rows: any; changes?: number }>((ok, no) => {
        kept.ok = ok;
        kept.no = no;
      });
    }
    return this.onConn(tx, () => {
      begin(tx);
      return runOn(tx.conn!, text, params, method);
    });
  }

  /**
   * Sends on the write's own connection, reserving it first if none is yet:
   * a write whose one statement goes at its end as one statement (finish())
   * runs it on the pool and reserves none. What is sent while the
   * reservation is under way waits for it and goes out in order.
   */
  private onConn<R>(tx: Tx, send: () => Promise<R>): Promise<R> {
    tx.sent = true;
    if (tx.conn) return send();
    return new Promise<R>((ok, no) => {
      tx.queued.push({
        go: () => {
          try {
            send().then(ok, no);
          } catch (e) {
            no(e);
          }
        },
        no,
      });
      tx.reserving ??= this.sql.reserve().then(
        (conn) => {
          tx.conn = conn;
          const queued = tx.queued;
          tx.queued = [];
          for (const q of queued) q.go();
        },
        (e) => {
          tx.reserving = null;
          const queued = tx.queued;
          tx.queued = [];
          for (const q of queued) q.no(e);
        },
      );
    });
  }

  /**
   * Ends a write that ran. Its one statement, kept for now (settleAtCommit),
   * with the statements to send with its COMMIT (the audit entry), when
   * each of them changes rows and the first gives its rows back or is a
   * read: one statement of its own, PostgreSQL's one transaction, its parts
   * as a WITH, each run whether or not its rows are read. It is what a write
   * that keeps an entry can send least of (bench/pgshape.ts): no BEGIN, no
   * COMMIT, no connection reserved, and a row it writes locked only while
   * it runs. Otherwise BEGIN, what was kept, and the COMMIT with what goes
   * with it. BEGIN's answer is waited on with the COMMIT, not before it: a
   * write whose statements PostgreSQL ran at once would otherwise hold
   * their rows through the round trip that brings it.
   */
  private async finish(tx: Tx): Promise<void> {
    const kept = tx.kept;
    tx.kept = null;
    const folded = kept && !tx.sent ? foldedText(kept, tx.withCommit) : null;
    if (kept && folded) {
      const params = kept.params;
      for (const q of tx.withCommit) params.push(...q.params);
      tx.withCommit = [];
      // One statement is its own transaction: on the pool, no connection reserved for it.
      runPg(this.sql, folded, params, kept.method).then(kept.ok, kept.no);
      for (const answer of tx.settle) await answer;
      tx.ended = true;
      return;
    }
    if (!kept && !tx.sent && tx.withCommit.length === 0) {
      for (const answer of tx.settle) await answer;
      tx.ended = true;
      return;
    }
    await this.onConn(tx, () => {
      begin(tx);
      if (kept) runPg(tx.conn!, kept.text, kept.params, kept.method).then(kept.ok, kept.no);
      return commit(tx.conn!, tx.withCommit, [tx.begun!, ...tx.settle]);
    });
    tx.ended = true;
  }

  inWrite(): boolean {
    return this.active() !== undefined;
  }

  async write<T>(fn: () => T | Promise<T>): Promise<T> {
    if (this.inWrite()) return await fn();
    return this.held(true, fn);
  }

  exclusive<T>(fn: () => T | Promise<T>): Promise<T> {
    if (this.inWrite()) return Promise.resolve(fn());
    return this.held(false, fn);
  }

  /**
   * Inside a write: waits until no other transaction holds key, and holds it
   * until this one ends (a transaction-scoped advisory lock), for a handler
   * that reads, then writes what the read decided.
   */
  async lock(key: string): Promise<void> {
    const tx = this.active();
    if (!tx?.open) throw new Error("store.lock: only inside a write transaction");
    await this.onConn(tx, () => {
      begin(tx);
      return runOn(tx.conn!, "select pg_advisory_xact_lock(hashtextextended(?, 0))", [key], "run");
    });
  }

  /**
   * Runs fn on a reserved connection: in a transaction when `tx`, side by
   * side with other writes; else alone (exclusive). What the write left for
   * after its commit runs once its connection and its turn are given back,
   * so that work may write in turn.
   */
  private async held<T>(tx: boolean, fn: () => T | Promise<T>): Promise<T> {
    const state: Tx = {
      conn: null,
      reserving: null,
      queued: [],
      sent: false,
      ended: false,
      open: false,
      done: false,
      after: [],
      withCommit: [],
      begun: null,
      settle: [],
      keep: false,
      kept: null,
    };
    let out: T;
    await this.gate.enter(!tx);
    try {
      if (!tx) state.conn = await this.sql.reserve();
      try {
        out = await this.inTx.run(state, async () => {
          if (!tx) return await fn();
          state.open = true;
          try {
            const out = await fn();
            await this.finish(state);
            return out;
          } catch (e) {
            state.after = [];
            throw e;
          } finally {
            state.open = false;
          }
        });
      } finally {
        state.done = true;
        // A reservation under way lands first, and what it sent is rolled back unless it committed.
        if (state.reserving) await state.reserving.catch(() => {});
        if (state.conn) {
          if (state.begun && !state.ended) await state.conn.unsafe("ROLLBACK").catch(() => {});
          state.conn.release();
        }
      }
    } finally {
      this.gate.leave(!tx);
    }
    if (state.after.length) await this.inTx.run(state, () => runAfterCommit(state.after));
    return out;
  }

  /**
   * A write's row locks are held until its COMMIT: a statement awaited just
   * before it keeps the next writer of a hot row waiting through one more
   * round trip (and through whatever this process does before it sends the
   * COMMIT). Sent together, the statement and the COMMIT take one.
   */
  sendWithCommit(text: string, params: unknown[]): boolean {
    const tx = this.active();
    if (!tx?.open) return false;
    tx.withCommit.push({ text, params: params.map(pgParam) });
    return true;
  }

  settleAtCommit(last: Lastly<any, any>): boolean {
    const tx = this.active();
    if (!tx?.open) return false;
    tx.keep = true;
    try {
      tx.settle.push(last.start());
    } finally {
      tx.keep = false;
    }
    return true;
  }

  onCommit(fn: () => void | Promise<void>): Promise<void> {
    const tx = this.active();
    if (!tx) return this.exclusive(fn);
    if (tx.open) {
      tx.after.push(fn);
      return Promise.resolve();
    }
    return Promise.resolve().then(fn);
  }

  limitWal(_bytes: number) {}
  foldWal() {}

  /**
   * Applies each owner's PostgreSQL migrations not yet applied, in order,
   * each in a transaction, holding an advisory lock for the whole run so
   * instances starting together migrate once: the second finds them applied.
   */
  async migrate(sets: { owner: string; set: MigrationSet; check?: (tag: string, text: string, tables: string[]) => void }[]): Promise<number> {
    const conn = await this.sql.reserve();
    let applied = 0;
    try {
      await conn.unsafe(`SELECT pg_advisory_lock(${MIGRATE_KEY})`);
      await conn.unsafe(
        "CREATE TABLE IF NOT EXISTS hearth_migrations (owner TEXT NOT NULL, tag TEXT NOT NULL, hash TEXT NOT NULL, applied BIGINT NOT NULL, PRIMARY KEY (owner, tag))",
      );
      for (const { owner, set, check } of sets) {
        const done = new Set(((await conn.unsafe("SELECT tag FROM hearth_migrations WHERE owner = $1", [owner])) as { tag: string }[]).map((r) => r.tag));
        refuseNewer(owner, done, set.journal.entries);
        for (const e of [...set.journal.entries].sort((a, b) => a.idx - b.idx)) {
          if (done.has(e.tag)) continue;
          const text = set.sql[e.tag];
          if (text === undefined) throw new Error(`migration ${owner}/${e.tag} is in the journal but its SQL is missing`);
          if (check) {
            const tables = (await conn.unsafe("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema()")) as { name: string }[];
            check(e.tag, text, tables.map((t) => t.name));
          }
          await conn.unsafe("BEGIN");
          try {
            for (const s of splitStatements(text))
              try {
                await conn.unsafe(s);
              } catch (err) {
                throw new Error(`migration ${owner}/${e.tag} failed: ${(err as Error).message}`);
              }
            await conn.unsafe("INSERT INTO hearth_migrations (owner, tag, hash, applied) VALUES ($1, $2, $3, $4)", [
              owner,
              e.tag,
              new Bun.CryptoHasher("sha256").update(text).digest("hex"),
              Date.now(),
            ]);
            await conn.unsafe("COMMIT");
          } catch (err) {
            await conn.unsafe("ROLLBACK").catch(() => {});
            throw err;
          }
          done.add(e.tag);
          applied++;
        }
        this.applied.set(owner, done);
      }
    } finally {
      await conn.unsafe(`SELECT pg_advisory_unlock(${MIGRATE_KEY})`).catch(() => {});
      conn.release();
    }
    return applied;
  }

  /**
   * Refuses a database whose text does not sort as SQLite's does (byte order,
   * PostgreSQL's "C" collation): lists ordered by a name or a title would
   * come back in another order than on SQLite, and cursors over them skip or
   * repeat. The collation is the database's, fixed when it is created.
   */
  async checkCollation(): Promise<void> {
    const [row] = (await this.sql.unsafe(`SELECT ('a' < 'B') AS folds, current_database() AS name`)) as { folds: boolean; name: string }[];
    if (row.folds)
      throw new Error(
        `HEARTH_DATABASE_URL: the database "${row.name}" sorts text by a language's rules; Hearth needs byte order, as SQLite sorts: create it with CREATE DATABASE ${row.name} TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'`,
      );
  }

  /** The tags migrate() found or made applied for this owner (empty before it ran). */
  migrated(owner: string): Set<string> {
    return this.applied.get(owner) ?? new Set();
  }

  /** Closes the pool, letting queries under way finish for up to 5 seconds. The runtime does not await it, so it never rejects. */
  closed = false;

  async close() {
    this.closed = true;
    await this.sql.close({ timeout: 5 }).catch(() => {});
  }
}

/** The statements of a migration file, as the SQLite store splits them. */
export function splitStatements(text: string): string[] {
  return text
    .split("--> statement-breakpoint")
    .map((s) => s.trim())
    .filter((s) => s.replace(/--.*$/gm, "").trim().length > 0);
}

/** Whether a store is the PostgreSQL one, for code that must choose (migrations, the full-text index). */
