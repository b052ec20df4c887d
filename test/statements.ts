// Counts the SQL statements a store runs, on either store, for tests that
// hold a request to a number of them: on SQLite every run of a statement
// (bun:sqlite's Statement, and Database.run for BEGIN and COMMIT); on
// PostgreSQL every text sent on the pool or a reserved connection, as a string
// or as a tag.
import { Database, type Statement } from "bun:sqlite";
import type { Store } from "../core/db/store.ts";

export interface StatementLog {
  /** The statements run since the last start(), in order. */
  readonly seen: string[];
  start(): void;
  stop(): string[];
  /** Puts back what was wrapped. */
  restore(): void;
}

let on = false;
const seen: string[] = [];
const note = (text: unknown) => {
  if (on) seen.push(String(text).replace(/\s+/g, " ").trim());
};

// bun:sqlite gives each statement its own get, all, run and values: they are wrapped as each is prepared,
// so this module is imported before the store opens (statements prepared once at start count too).
for (const m of ["prepare", "query"] as const) {
  const orig = Database.prototype[m] as (...a: unknown[]) => Statement;
  (Database.prototype as any)[m] = function (this: Database, ...args: unknown[]) {
    const stmt = orig.apply(this, args);
    const text = String(args[0]);
    for (const k of ["get", "all", "run", "values", "iterate"] as const) {
      const f = (stmt as any)[k];
      if (typeof f !== "function" || f.counted) continue;
      const g = function (this: unknown, ...a: unknown[]) {
        note(text);
        return f.apply(this, a);
      };
      (g as any).counted = true;
      (stmt as any)[k] = g;
    }
    return stmt;
  };
}
const dbRun = Database.prototype.run;
Database.prototype.run = function (this: Database, ...args: Parameters<typeof dbRun>) {
  note(args[0]);
  return dbRun.apply(this, args);
} as typeof dbRun;

export function statementLog(store: Store): StatementLog {
  const undo: (() => void)[] = [];
  if (store.kind !== "sqlite") {
    const sql = (store as unknown as { sql: any }).sql;
    const unsafe = sql.unsafe;
    sql.unsafe = (text: string, params?: unknown[]) => {
      note(text);
      return unsafe.call(sql, text, params);
    };
    const reserve = sql.reserve;
    sql.reserve = async () => {
      const conn = await reserve.call(sql);
      const cu = conn.unsafe;
      conn.unsafe = (text: string, params?: unknown[]) => {
        note(text);
        return cu.call(conn, text, params);
      };
      // A write's BEGIN and COMMIT are the connection called as a tag (core/db/pg.ts), counted here.
      return new Proxy(conn, {
        apply(target, self, args) {
          note((args[0] as string[]).join("?"));
          return Reflect.apply(target, self, args);
        },
      });
    };
    undo.push(() => {
      sql.unsafe = unsafe;
      sql.reserve = reserve;
    });
  }
  return {
    seen,
    start() {
      seen.length = 0;
      on = true;
    },
    stop() {
      on = false;
      return [...seen];
    },
    restore() {
      for (const u of undo.reverse()) u();
    },
  };
}

/**
 * A call's own statements, without those identifying its caller: the token,
 * its OAuth grant and its credential's policy are looked up again only when
 * the instance may not keep them (on PostgreSQL, while its listening
 * connection is not yet or no longer heard, which a busy machine can make
 * happen at any moment), and those lookups are not the call's work.
 */
export const ownStatements = (statements: string[]) =>
  statements.filter((q) => !q.startsWith('select "tokens".') && !q.startsWith('select "grant" from "oauth_access"') && !q.startsWith('select "policy" from "credential_policies"'));
