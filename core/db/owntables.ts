// What a plugin's migrations may touch: only the tables it declares. The
// statements drizzle-kit writes for SQLite (tables, indexes, the
// copy-and-rename that changes a column) are read for every table they name,
// so a migration cannot read, change or drop another plugin's or the core's
// tables (accounts, tokens, the migration record itself). Plugin code runs in
// the server's process, so this guards against mistakes and name clashes
// between plugins written apart; it is not a sandbox for hostile code.
import type { Database } from "bun:sqlite";
import type { MigrationSet } from "./migrate.ts";

export interface TableProblem {
  tag: string;
  /** The table or statement refused. */
  name: string;
  reason: string;
}

const IDENT = String.raw`(?:\x60[^\x60]+\x60|"[^"]+"|\[[^\]]+\]|[A-Za-z_][A-Za-z0-9_$]*)`;
const QUALIFIED = `${IDENT}(?:\\s*\\.\\s*${IDENT})?`;
const unquote = (s: string) => s.replace(/^[\x60"[]|[\x60"\]]$/g, "");

/** The statements of one migration file, without comments or the text of string literals. */
export function statementsOf(text: string): string[] {
  return text
    .split("--> statement-breakpoint")
    .map((s) =>
      s
        .replace(/'(?:[^']|'')*'/g, "''")
        .replace(/--[^\n]*/g, " ")
        .replace(/\/\*[\s\S]*?\*\//g, " ")
        .trim(),
    )
    .flatMap((s) => s.split(";"))
    .map((s) => s.trim())
    .filter(Boolean);
}

// The statements a plugin's migrations may hold: what drizzle-kit generates.
const ALLOWED = [
  /^CREATE\s+TABLE\s+(?!IF\b)/i,
  /^CREATE\s+(?:UNIQUE\s+)?INDEX\s/i,
  /^DROP\s+(?:TABLE|INDEX)\s/i,
  /^ALTER\s+TABLE\s/i,
  /^INSERT\s+INTO\s/i,
  /^UPDATE\s/i,
  /^DELETE\s+FROM\s/i,
  /^PRAGMA\s+(?:defer_)?foreign_keys\s*=\s*(?:ON|OFF|0|1|true|false)$/i,
];

// Every place SQLite reads a table name. ON is followed by a table only in CREATE INDEX.
const TABLE_AFTER = new RegExp(`\\b(?:FROM|JOIN|INTO|UPDATE|TABLE(?:\\s+IF\\s+(?:NOT\\s+)?EXISTS)?|RENAME\\s+TO)\\s+(${QUALIFIED})`, "gi");
// A foreign key may name a table its migration creates further on: SQLite checks it only when rows are written.
const REFERENCED = new RegExp(`\\bREFERENCES\\s+(${QUALIFIED})`, "gi");
const INDEX_ON = new RegExp(`^CREATE\\s+(?:UNIQUE\\s+)?INDEX\\s+(?:IF\\s+NOT\\s+EXISTS\\s+)?${QUALIFIED}\\s+ON\\s+(${QUALIFIED})`, "i");
const CREATED = new RegExp(`^CREATE\\s+TABLE\\s+(${QUALIFIED})|\\bRENAME\\s+TO\\s+(${QUALIFIED})`, "gi");
const INDEX_MADE = new RegExp(`^CREATE\\s+(?:UNIQUE\\s+)?INDEX\\s+(?:IF\\s+NOT\\s+EXISTS\\s+)?(${QUALIFIED})`, "i");
const INDEX_DROPPED = new RegExp(`^DROP\\s+INDEX\\s+(?:IF\\s+EXISTS\\s+)?(${QUALIFIED})`, "i");
// Words that follow UPDATE in a foreign key's "ON UPDATE no action", or FROM in an INSERT … SELECT.
const KEYWORDS = new Set(["select", "values", "set", "where", "default", "no", "cascade", "restrict"]);

function names(stmt: string, re: RegExp): string[] {
  const out: string[] = [];
  for (const m of stmt.matchAll(new RegExp(re.source, re.flags.includes("g") ? re.flags : re.flags + "g")))
    for (const g of m.slice(1)) if (g) out.push(unquote(g.trim()));
  return out;
}

/**
 * Checks a plugin's migrations against the tables it declares. A table may be
 * named only when it is declared (or is drizzle-kit's `__new_<table>` copy of
 * one) and an earlier statement of these migrations created it, so a table
 * that already belongs to someone else makes the CREATE fail rather than be
 * dropped, read or taken over. Indexes may be made only on those tables, and
 * dropped only when these migrations made them.
 */
export function checkOwnTables(set: MigrationSet, declared: string[]): TableProblem | null {
  const mine = new Set(declared.flatMap((t) => [t.toLowerCase(), `__new_${t.toLowerCase()}`]));
  const created = new Set<string>();
  const indexes = new Set<string>();
  const madeBy = new Set<string>();
  for (const e of [...set.journal.entries].sort((a, b) => a.idx - b.idx)) {
    const tag = e.tag;
    const statements = statementsOf(set.sql[tag] ?? "");
    for (const s of statements) for (const n of names(s, CREATED)) madeBy.add(n.toLowerCase());
    for (const s of statements) {
      if (!ALLOWED.some((re) => re.test(s)))
        return { tag, name: s.split(/\s+/).slice(0, 3).join(" "), reason: "is not allowed: only tables and indexes may be created, changed or dropped" };
      // What this statement makes may be named by it (RENAME TO) and by those after it.
      for (const n of names(s, CREATED)) created.add(n.toLowerCase());
      const tables = [...names(s, TABLE_AFTER), ...names(s, INDEX_ON)].filter((n) => !KEYWORDS.has(n.toLowerCase()));
      for (const t of tables) {
        const name = unquote(t.split(".").pop()!.trim());
        if (t.includes(".") || !mine.has(name.toLowerCase())) return { tag, name, reason: "is not one of the tables the plugin declares" };
        if (!created.has(name.toLowerCase())) return { tag, name, reason: "is named before these migrations create it" };
      }
      for (const t of names(s, REFERENCED)) {
        const name = unquote(t.split(".").pop()!.trim());
        if (t.includes(".") || !mine.has(name.toLowerCase())) return { tag, name, reason: "is not one of the tables the plugin declares" };
        if (!madeBy.has(name.toLowerCase())) return { tag, name, reason: "is named before these migrations create it" };
      }
      for (const i of names(s, INDEX_DROPPED)) if (!indexes.has(i.toLowerCase())) return { tag, name: i, reason: "is an index these migrations did not make" };
      for (const n of names(s, INDEX_MADE)) indexes.add(n.toLowerCase());
    }
  }
  return null;
}

/**
 * Against the database as it is: a migration about to run names no table or
 * view that exists here and is not the plugin's, wherever the name stands (a
 * join, a subquery, a list after FROM). A column sharing such a name is
 * refused too; rename the column.
 */
export function checkAgainstDatabase(db: Database, tag: string, text: string, declared: string[]): TableProblem | null {
  const names = db.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')").all();
  return checkAgainstTables(
    [...names.map((r) => r.name), "sqlite_master", "sqlite_schema", "sqlite_temp_master", "sqlite_temp_schema", "sqlite_sequence"],
    tag,
    text,
    declared,
  );
}

/** checkAgainstDatabase with the database's tables and views already listed (PostgreSQL's come from information_schema). */
export function checkAgainstTables(tables: string[], tag: string, text: string, declared: string[]): TableProblem | null {
  const mine = new Set(declared.flatMap((t) => [t.toLowerCase(), `__new_${t.toLowerCase()}`]));
  const others = new Set(tables.map((n) => n.toLowerCase()).filter((n) => !mine.has(n)));
  for (const s of statementsOf(text))
    for (const m of s.matchAll(new RegExp(IDENT, "g"))) {
      const name = unquote(m[0]);
      if (others.has(name.toLowerCase())) return { tag, name, reason: "is not one of the tables the plugin declares" };
    }
  return null;
}
