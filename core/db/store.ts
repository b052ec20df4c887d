// What callers see of the database, whichever holds it: embedded SQLite (the
// default, core/db/index.ts) or PostgreSQL (core/db/pg.ts). Both run one
// transaction per write call, routed by AsyncLocalStorage so nested calls
// join it, and hand out drizzle's SQLite query builders over either.
import type { Database } from "bun:sqlite";
import { sql } from "drizzle-orm";
import type { Db } from "../plugin.ts";

export interface Store {
  readonly kind: "sqlite" | "postgres";
  /** Queries of the write in progress (inside write()); outside one, each query commits on its own. */
  readonly wdb: Db;
  /** Reads of committed data. */
  readonly rdb: Db;
  /**
   * The bun:sqlite connections under wdb and rdb, for code that still speaks
   * SQLite directly. Only the SQLite store has them: on PostgreSQL any use
   * throws, naming what was asked for.
   */
  readonly writer: Database;
  readonly reader: Database;
  /**
   * Runs fn inside one write transaction; nested calls join the outer one.
   * `first`: ahead of the writes already waiting for their turn, for a small
   * write that must not wait behind a burst (a lease's renewal).
   */
  write<T>(fn: () => T | Promise<T>, o?: { first?: boolean }): Promise<T>;
  /** Runs fn once the write in progress has committed (never when it rolls back); outside a write, at once under the write lock. */
  onCommit(fn: () => void | Promise<void>): Promise<void>;
  /** True inside the async context of the write transaction now running. */
  inWrite(): boolean;
  /** Serialised access to the writer without a transaction of ours. */
  exclusive<T>(fn: () => T | Promise<T>): Promise<T>;
  /**
   * Inside a write: holds key until the transaction ends, waiting while
   * another holds it, for a write that reads, then writes what the read
   * decided. SQLite's writes run one at a time: there it costs nothing.
   */
  lock(key: string): Promise<void>;
  /**
   * PostgreSQL: inside a write, sends one statement (PostgreSQL's SQL, $n
   * parameters) just ahead of the transaction's COMMIT, in the same round
   * trip, for a statement whose answer nothing waits on (the call's audit
   * entry). False where it cannot (outside a write, or SQLite, whose
   * statements cost no round trip): the caller runs it itself.
   */
  sendWithCommit?(text: string, params: unknown[]): boolean;
  /**
   * PostgreSQL: inside a write, starts its last statement (Lastly), to be
   * waited on with the COMMIT: the COMMIT follows it without a round trip
   * between, or, the write's one statement, it goes as one statement with
   * those sent with the COMMIT; its failure is the write's. False where it
   * cannot (outside a write, SQLite): the caller runs and waits for it itself.
   */
  settleAtCommit?(last: Lastly<any, any>): boolean;
  /** SQLite: the WAL size past which it is drained. PostgreSQL keeps its own WAL: nothing to bound here. */
  limitWal(bytes: number): void;
  /** SQLite: copies the WAL into the database file and empties it (start-up's migrations wrote it). PostgreSQL: nothing. */
  foldWal(): void;
  /** True once close() has begun. */
  readonly closed: boolean;
  close(): void | Promise<void>;
}

/**
 * Turns for the PostgreSQL store: up to `max` shared holders at once (writes,
 * each its own transaction), or one exclusive holder alone. First come, first
 * served: an exclusive turn waits for the shared ones before it, and holds
 * back those after it.
 */
export class Gate {
  private shared = 0;
  private alone = false;
  private queue: { alone: boolean; go: () => void }[] = [];
  constructor(private readonly max: number) {}

  enter(alone: boolean): Promise<void> {
    if (this.queue.length === 0 && this.fits(alone)) {
      this.take(alone);
      return Promise.resolve();
    }
    return new Promise((go) => this.queue.push({ alone, go }));
  }

  leave(alone: boolean) {
    if (alone) this.alone = false;
    else this.shared--;
    while (this.queue.length && this.fits(this.queue[0].alone)) {
      const next = this.queue.shift()!;
      this.take(next.alone);
      next.go();
    }
  }

  private fits(alone: boolean): boolean {
    return !this.alone && (alone ? this.shared === 0 : this.shared < this.max);
  }

  private take(alone: boolean) {
    if (alone) this.alone = true;
    else this.shared++;
  }
}

/**
 * A write's answer made from its last statement, not yet run: a handler
 * returns lastly(() => statement, shape) where it would await the statement
 * and shape its rows. On PostgreSQL the statement, the call's audit entry
 * and the COMMIT then go out together, or as one statement when it is the
 * write's only one: a row it locks is held only while PostgreSQL runs them,
 * not through a round trip to this process and back (what bounds how often
 * one row can be written). The statement must be the handler's last, made
 * on ctx.db, and its failure the call's (nothing catches it); shape only
 * shapes the rows, after the commit. Elsewhere the statement is run and
 * waited on where the handler returns.
 */
export class Lastly<R = unknown, T = unknown> {
  private answer: Promise<R> | null = null;
  constructor(
    private readonly statement: () => R | PromiseLike<R>,
    private readonly shape: (rows: R) => T,
  ) {}
  /**
   * Runs the statement, once, and asks for its answer at once: a drizzle
   * query is sent only when waited on, and each time it is; SQLite's
   * prepared ones answer at once, with rows.
   */
  start(): Promise<R> {
    if (this.answer) return this.answer;
    this.answer = new Promise<R>((ok, no) => {
      const made = this.statement();
      if (typeof (made as PromiseLike<R> | null)?.then === "function") (made as PromiseLike<R>).then(ok, no);
      else ok(made as R);
    });
    // Waited on later (with the COMMIT, or by the call): a failure before then is not one nobody handles.
    this.answer.catch(() => {});
    return this.answer;
  }
  async settle(): Promise<T> {
    return this.shape(await this.start());
  }
}

export const lastly = <R, T>(statement: () => R | PromiseLike<R>, shape: (rows: R) => T): Lastly<R, T> => new Lastly(statement, shape);

/** Queues async work one after another: the write lock of the SQLite store. `first` goes ahead of the work waiting. */
export class Lock {
  private busy = false;
  private waiting: (() => void)[] = [];
  run<T>(fn: () => Promise<T>, first = false): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const go = () => {
        Promise.resolve()
          .then(fn)
          .then(resolve, reject)
          .finally(() => {
            const next = this.waiting.shift();
            if (next) next();
            else this.busy = false;
          });
      };
      if (!this.busy) {
        this.busy = true;
        go();
      } else if (first) this.waiting.unshift(go);
      else this.waiting.push(go);
    });
  }
}

/**
 * Runs what a write left for after its commit, in order. The write has
 * committed and stands: what was left cannot undo it, so a failure is only its own.
 */
export async function runAfterCommit(work: (() => void | Promise<void>)[]): Promise<void> {
  for (const after of work) await Promise.resolve().then(after).catch(() => {});
}

/**
 * Each store's writer (wdb) with its store, for helpers handed only the
 * writer (a plugin's ctx.db in a write) that must hold a key of the core's
 * own through store.lock, whichever plugin calls them (the credits ledger).
 */
const writers = new WeakMap<object, Store>();
const handles = new WeakMap<object, Store["kind"]>();
export function ownWriter(store: Store): void {
  writers.set(store.wdb, store);
  handles.set(store.wdb, store.kind);
  handles.set(store.rdb, store.kind);
}
/** The store whose writer db is, or undefined for any other handle (a reader, a wrapper). */
export const storeOfWriter = (db: object): Store | undefined => writers.get(db);

/**
 * Which database a plugin's ctx.db (either store's reader or writer) speaks
 * to, for a plugin that reaches an index only one of them has (an FTS5 table
 * on SQLite, where PostgreSQL's planner picks its own from the same query);
 * null for any other handle.
 */
export const storeKind = (db: object): Store["kind"] | null => handles.get(db) ?? null;

/** The text of skipLocked's condition, which core/db/pgsql.ts looks for. */
export const SKIP_LOCKED_MARK = "'hearth:for update skip locked'";

/**
 * A condition, always true, that makes the SELECT holding it take the rows
 * it returns FOR UPDATE SKIP LOCKED on PostgreSQL (core/db/pgsql.ts adds the
 * clause at the end of that SELECT): writers claiming at once each get rows
 * no other holds, instead of the same ones. On SQLite, whose writes run one
 * at a time, it is only true. Drizzle's SQLite builders cannot say it.
 */
export const skipLocked = () => sql.raw(`${SKIP_LOCKED_MARK} is not null`);

/** Whether a store is the PostgreSQL one; asked without loading that store's code, which an instance on SQLite never needs. */
export const isPg = (s: Store): boolean => s.kind === "postgres";

/**
 * The PostgreSQL store's stand-in connections (what it hands out as store.writer,
 * for applyMigrations), each with its store: kept here so the migrations code can
 * ask without loading the PostgreSQL store's code.
 */
export const pgStandIns = new WeakMap<object, Store>();
