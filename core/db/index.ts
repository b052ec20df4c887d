// The store: one SQLite file in WAL mode with two connections. Writes go
// through one writer connection, one transaction per call, serialised by an
// async lock so an awaiting handler never interleaves with another write.
// Reads use a separate read-only connection and so see only committed data.
import { AsyncLocalStorage } from "node:async_hooks";
import { statSync } from "node:fs";
import { Database, type Statement } from "bun:sqlite";
import { drizzle } from "drizzle-orm/bun-sqlite";
import type { Db } from "../plugin.ts";
import { Lock, ownWriter, runAfterCommit, type Store as StoreApi } from "./store.ts";

export type { Store as StoreApi } from "./store.ts";

// Checkpoints copy the WAL into the database file and fsync it, which takes
// from milliseconds to over a hundred on a busy disk. Left to SQLite, the
// commit that crosses wal_autocheckpoint runs one on the event loop and every
// request in flight waits for it. The writer turns that off; this worker,
// with a connection of its own, checkpoints instead. PASSIVE: it copies what
// no reader still needs and never waits on, nor blocks, the writer or a reader.
//
// A checkpoint alone does not shorten the WAL: SQLite starts it again from
// the top only when a write begins with every frame already copied. Under
// writes that never pause, each checkpoint ends behind the commits made while
// it ran, so that moment never comes and the WAL grows without end (by
// megabytes a second under load). So a commit that leaves the WAL past
// WAL_LIMIT_BYTES has the store drain it: the store holds its write lock
// (writes wait their turn in the queue; reads go on), the worker copies the
// rest, and the next write rewinds the WAL. journal_size_limit then trims
// the file back to that size.
const CHECKPOINTER = `
const { Database } = require("bun:sqlite");
let db = null;
let timer = null;
self.onmessage = (e) => {
  if (e.data.file) {
    try {
      db = new Database(e.data.file);
      db.run("PRAGMA busy_timeout = 5000");
    } catch (err) {
      postMessage({ failed: String(err) });
      return;
    }
    postMessage({ ready: true });
    timer = setInterval(() => {
      try {
        db.query("PRAGMA wal_checkpoint(PASSIVE)").get();
      } catch {}
    }, e.data.everyMs);
  }
  // One checkpoint now, answered with the name it was asked under (caughtUp, drained).
  if (e.data.checkpoint) {
    try {
      db?.query("PRAGMA wal_checkpoint(PASSIVE)").get();
    } catch {}
    postMessage({ [e.data.checkpoint]: true });
  }
  if (e.data.close) {
    clearInterval(timer);
    try {
      db?.close();
    } catch {}
    // The store waits for this before closing its own connections, so the last to close is its writer.
    Atomics.store(e.data.close, 0, 1);
    Atomics.notify(e.data.close, 0);
    process.exit(0);
  }
};
`;
const CHECKPOINT_EVERY_MS = 250;
/**
 * The WAL's size past which writes pause for one checkpoint so it can start
 * again from the top. Each pause lasts a checkpoint's fsync; at this size they
 * come seconds apart even under writes as fast as the store takes them.
 */
export const WAL_LIMIT_BYTES = 64 << 20;
/** How often, at most, commits look at the WAL's size: a look is a system call, which costs a small write a few percent of its time. */
const WAL_LOOK_EVERY_MS = 10;
/** A drain that has not answered by then (the worker stuck or gone) lets writes go on. */
const DRAIN_GIVE_UP_MS = 2000;
/** The worker is a second JavaScript VM (~6 MB resident): it starts once the WAL holds this much, which a start's own few writes do not reach. */
const CHECKPOINTER_FROM_BYTES = 1 << 20;

function tune(db: Database, readonly: boolean) {
  db.run("PRAGMA busy_timeout = 5000");
  if (!readonly) {
    db.run("PRAGMA journal_mode = WAL");
    db.run("PRAGMA synchronous = NORMAL");
  }
  db.run("PRAGMA foreign_keys = ON");
  db.run("PRAGMA cache_size = -16000");
}

export class SqliteStore implements StoreApi {
  readonly kind = "sqlite";
  readonly writer: Database;
  readonly reader: Database;
  readonly wdb: Db;
  readonly rdb: Db;
  private queue = new Lock();
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
  /** The worker that checkpoints the WAL, started by the first commit after which the WAL is large (an instance that only reads needs none). */
  private checkpointer: Worker | null = null;
  private checkpointerFailed = false;
  /** The drain under way: writes are held until the worker has copied the WAL (see WAL_LIMIT_BYTES). */
  private draining: (() => void) | null = null;
  private drainAsked = false;
  private readonly walFile: string;
  private walLimit = WAL_LIMIT_BYTES;
  /** When a commit last looked at the WAL's size (performance.now()). */
  private walLooked = -Infinity;

  constructor(readonly file: string) {
    this.writer = new Database(file, { create: true, strict: true });
    tune(this.writer, false);
    this.writer.run("PRAGMA wal_autocheckpoint = 0");
    this.walFile = `${file}-wal`;
    this.limitWal(WAL_LIMIT_BYTES);
    this.reader = new Database(file, { readonly: true, strict: true });
    tune(this.reader, true);
    // Typed as the async database every caller writes against, so core code is checked as it would run on any store; awaiting bun-sqlite's sync results is harmless.
    this.wdb = drizzle({ client: this.writer }) as unknown as Db;
    this.tx = { begin: this.writer.prepare("BEGIN IMMEDIATE"), commit: this.writer.prepare("COMMIT"), rollback: this.writer.prepare("ROLLBACK") };
    this.rdb = drizzle({ client: this.reader }) as unknown as Db;
    ownWriter(this);
  }

  /**
   * Runs fn inside one write transaction: everything fn wrote commits
   * together, or nothing does. Nested calls (ctx.call from a write) join the
   * outer transaction.
   */
  async write<T>(fn: () => T | Promise<T>, o: { first?: boolean } = {}): Promise<T> {
    if (this.inWrite()) return await fn();
    return this.queue.run(() => {
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
            // Once the worker failed, or while a drain is asked for, the WAL's size decides nothing: no stat then.
            // Under a stream of commits one look per WAL_LOOK_EVERY_MS is enough (the WAL passes its limit by what
            // that many milliseconds write) and spares each commit a system call.
            const t = performance.now();
            if (!this.checkpointerFailed && !this.drainAsked && t - this.walLooked >= WAL_LOOK_EVERY_MS) {
              this.walLooked = t;
              const wal = statSync(this.walFile, { throwIfNoEntry: false })?.size ?? 0;
              if (!this.checkpointer && wal >= CHECKPOINTER_FROM_BYTES) this.checkpointer = this.startCheckpointer();
              else if (wal > this.walLimit && this.checkpointer) this.drain(this.checkpointer);
            }
          } catch (e) {
            if (this.writer.inTransaction) this.tx.rollback.run();
            throw e;
          }
          await runAfterCommit(this.afterCommit);
          return out;
        } finally {
          this.afterCommit = [];
          this.current = null;
        }
      });
    }, o.first);
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

  /** Writes run one at a time here (and across processes, BEGIN IMMEDIATE): whatever a write read stays as it was until it commits. */
  lock(_key: string): Promise<void> {
    if (!this.inWrite()) return Promise.reject(new Error("store.lock: only inside a write transaction"));
    return Promise.resolve();
  }

  /** Serialised access to the writer without a transaction of ours (for work that manages its own). */
  exclusive<T>(fn: () => T | Promise<T>): Promise<T> {
    if (this.inWrite()) return Promise.resolve(fn());
    return this.queue.run(() => {
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

  /**
   * Copies the WAL into the database file and empties it, on the writer, at
   * once. For start-up: a new data folder's migrations leave the WAL past the
   * size at which the checkpoint worker (a second JavaScript VM, ~4 MB) is
   * started, which an idle instance then kept for nothing.
   */
  foldWal() {
    try {
      this.writer.query("PRAGMA wal_checkpoint(TRUNCATE)").get();
    } catch {
      // Only a saving: a data folder that cannot be written (read-only, a full disk) still starts and serves reads.
    }
  }

  /** Sets the size past which the WAL is drained and to which its file is trimmed (WAL_LIMIT_BYTES unless changed). */
  limitWal(bytes: number) {
    this.walLimit = bytes;
    this.writer.run(`PRAGMA journal_size_limit = ${bytes}`);
  }

  private startCheckpointer(): Worker {
    const url = URL.createObjectURL(new Blob([CHECKPOINTER], { type: "application/javascript" }));
    const w = new Worker(url);
    // Bun's workers can be unreferenced, so this one never keeps a finished command alive.
    (w as unknown as { unref(): void }).unref();
    // Without the worker SQLite checkpoints as it did, on the commit that crosses its threshold: slower, but the WAL stays bounded.
    const fallBack = () => {
      URL.revokeObjectURL(url);
      this.checkpointerFailed = true;
      try {
        this.writer.run("PRAGMA wal_autocheckpoint = 1000");
      } catch {}
    };
    // The worker loads its script after this returns: the URL is released once it has answered.
    w.onmessage = (e) => {
      if (e.data?.failed) fallBack();
      else if (e.data?.caughtUp) this.drainHeld(w);
      else if (e.data?.drained) this.draining?.();
      else URL.revokeObjectURL(url);
    };
    w.onerror = () => {
      this.draining?.();
      fallBack();
    };
    w.postMessage({ file: this.writer.filename, everyMs: CHECKPOINT_EVERY_MS });
    return w;
  }

  /**
   * Has the worker copy the whole WAL with the write lock held, so the next
   * write starts it again from the top. It first copies what it can with
   * writes going on, so what is left for the pause is only what they added
   * meanwhile.
   */
  private drain(w: Worker) {
    if (this.drainAsked) return;
    this.drainAsked = true;
    w.postMessage({ checkpoint: "caughtUp" });
  }

  private drainHeld(w: Worker) {
    // Closed meanwhile: the worker is gone and there is nothing left to drain.
    if (this.checkpointer !== w) return;
    // The lock alone: nothing here writes, so it needs none of exclusive()'s bookkeeping for nested writes.
    void this.queue.run(
      () =>
        new Promise<void>((resolve) => {
          const giveUp = setTimeout(() => this.draining?.(), DRAIN_GIVE_UP_MS);
          giveUp.unref();
          this.draining = () => {
            clearTimeout(giveUp);
            this.draining = null;
            this.drainAsked = false;
            resolve();
          };
          w.postMessage({ checkpoint: "drained" });
        }),
    );
  }

  /** Set once close() has begun: timers outliving the instance look here before touching the store. */
  closed = false;

  close() {
    this.closed = true;
    // The checkpointer's connection closes first: then the writer is the last, and closing it checkpoints and removes the WAL.
    if (this.checkpointer && !this.checkpointerFailed) {
      const done = new Int32Array(new SharedArrayBuffer(4));
      this.checkpointer.postMessage({ close: done });
      Atomics.wait(done, 0, 0, 5000);
    }
    this.checkpointer = null;
    for (const s of Object.values(this.tx)) s.finalize();
    this.reader.close();
    this.writer.close();
  }
}

/** The store callers are handed (either kind); `new Store(file)` opens the SQLite one. */
export type Store = StoreApi;
export const Store = SqliteStore;
