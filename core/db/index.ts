// The store: one SQLite file in WAL mode with two connections. Writes go
// through one writer connection, one transaction per call, serialised by an
// async lock so an awaiting handler never interleaves with another write.
// Reads use a separate read-only connection and so see only committed data.
import { AsyncLocalStorage } from "node:async_hooks";
import { Database, type Statement } from "bun:sqlite";
import { drizzle } from "drizzle-orm/bun-sqlite";
import type { Db } from "../plugin.ts";

class Lock {
  private tail: Promise<void> = Promise.resolve();
  run<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.tail.then(fn, fn);
    this.tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}

function tune(db: Database, readonly: boolean) {
  db.run("PRAGMA busy_timeout = 5000");
  if (!readonly) {
    db.run("PRAGMA journal_mode = WAL");
    db.run("PRAGMA synchronous = NORMAL");
  }
  db.run("PRAGMA foreign_keys = ON");
  db.run("PRAGMA cache_size = -16000");
}

export class Store {
  readonly writer: Database;
  readonly reader: Database;
  readonly wdb: Db;
  readonly rdb: Db;
  private lock = new Lock();
  /** The writer's transaction statements, prepared once: every write runs them. */
  private tx: { begin: Statement; commit: Statement; rollback: Statement };
  /**
   * Marks the async context of the write in progress, so nested calls join it.
   * Each write gets its own token and only the current one counts: a timer or
   * callback created inside a write inherits the context but runs after it
   * has ended, and must then take the lock like anyone else.
   */
  private inTx = new AsyncLocalStorage<object>();
  private current: object | null = null;
  /** Work the write in progress left for after its commit; dropped with a rollback. */
  private afterCommit: (() => void | Promise<void>)[] = [];

  constructor(readonly file: string) {
    this.writer = new Database(file, { create: true, strict: true });
    tune(this.writer, false);
    this.reader = new Database(file, { readonly: true, strict: true });
    tune(this.reader, true);
    this.wdb = drizzle({ client: this.writer });
    this.tx = { begin: this.writer.prepare("BEGIN IMMEDIATE"), commit: this.writer.prepare("COMMIT"), rollback: this.writer.prepare("ROLLBACK") };
    this.rdb = drizzle({ client: this.reader });
  }

  /**
   * Runs fn inside one write transaction: everything fn wrote commits
   * together, or nothing does. Nested calls (ctx.call from a write) join the
   * outer transaction.
   */
  async write<T>(fn: () => T | Promise<T>): Promise<T> {
    if (this.inWrite()) return await fn();
    return this.lock.run(() => {
      const token = {};
      return this.inTx.run(token, async () => {
        this.current = token;
        this.afterCommit = [];
        try {
          this.tx.begin.run();
          let out: T;
          try {
            out = await fn();
            this.tx.commit.run();
          } catch (e) {
            if (this.writer.inTransaction) this.tx.rollback.run();
            throw e;
          }
          // The write has committed and stands: what was left for after it cannot undo it, so its failure is only its own.
          for (const after of this.afterCommit) await Promise.resolve().then(after).catch(() => {});
          return out;
        } finally {
          this.afterCommit = [];
          this.current = null;
        }
      });
    });
  }

  /**
   * Runs `fn` once the write in progress has committed, still holding the
   * lock so no other write comes between; never when it rolls back. Outside
   * a write, it runs at once under the lock. For what must not happen to
   * data a rollback would bring back (removing a file its row names). It
   * reads and touches files only: the transaction is over, so it must not
   * write, and a failure is its own to report.
   */
  onCommit(fn: () => void | Promise<void>): Promise<void> {
    if (!this.inWrite()) return this.exclusive(fn);
    if (this.writer.inTransaction) {
      this.afterCommit.push(fn);
      return Promise.resolve();
    }
    // Holding the lock with no transaction open (exclusive): nothing to wait for.
    return Promise.resolve().then(fn);
  }

  /** True inside the async context of the write transaction now running. */
  inWrite(): boolean {
    const token = this.inTx.getStore();
    return token !== undefined && token === this.current;
  }

  /** Serialised access to the writer without a transaction of ours (for work that manages its own). */
  exclusive<T>(fn: () => T | Promise<T>): Promise<T> {
    if (this.inWrite()) return Promise.resolve(fn());
    return this.lock.run(() => {
      const token = {};
      return this.inTx.run(token, async () => {
        this.current = token;
        try {
          return await fn();
        } finally {
          this.current = null;
        }
      });
    });
  }

  close() {
    for (const s of Object.values(this.tx)) s.finalize();
    this.reader.close();
    this.writer.close();
  }
}
