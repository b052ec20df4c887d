// Turns the SQL drizzle's SQLite dialect writes into SQL PostgreSQL runs with
// the same meaning. The query builders stay SQLite's (plugins define their
// tables once, with sqliteTable); what differs is rewritten here, token by
// token, never inside a string literal or a quoted name:
//
// - `?` placeholders become `$1`, `$2`, …
// - `null` standing for an omitted column in INSERT … VALUES becomes
//   `default` (SQLite has no DEFAULT there, so drizzle writes null; a
//   column drizzle knows a default for gets that value instead, so only
//   columns without one, such as an integer primary key, get here)
// - `like` becomes `ilike`: SQLite's LIKE ignores case
// - ORDER BY terms without NULLS FIRST/LAST get SQLite's order, where NULL
//   is the smallest value (first ascending, last descending)
// - casts to integer and real become bigint and double precision, SQLite's
//   sizes for them; a cast to blob takes the text's UTF-8 bytes
// - max(a, b) and min(a, b) become greatest and least, ifnull coalesce
// - `insert or ignore` becomes `insert … on conflict do nothing`
// - a SELECT holding skipLocked()'s condition (core/db/store.ts) ends with
//   `for update skip locked`

import { SKIP_LOCKED_MARK } from "./store.ts";

type Tok = { t: "str" | "id" | "word" | "param" | "num" | "punct" | "space"; s: string };

function tokenize(sql: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < sql.length) {
    const c = sql[i];
    if (c === "'" || c === '"' || c === "`") {
      let j = i + 1;
      for (;;) {
        if (j >= sql.length) break;
        if (sql[j] === c) {
          if (sql[j + 1] === c) j += 2;
          else break;
        } else j++;
      }
      const body = sql.slice(i, j + 1);
      out.push({ t: c === "'" ? "str" : "id", s: c === "`" ? `"${body.slice(1, -1).replace(/"/g, '""')}"` : body });
      i = j + 1;
    } else if (c === "?") {
      out.push({ t: "param", s: "?" });
      i++;
    } else if (/\s/.test(c)) {
      let j = i;
      while (j < sql.length && /\s/.test(sql[j])) j++;
      out.push({ t: "space", s: sql.slice(i, j) });
      i = j;
    } else if (/[A-Za-z_]/.test(c)) {
      let j = i;
      while (j < sql.length && /[A-Za-z0-9_$]/.test(sql[j])) j++;
      out.push({ t: "word", s: sql.slice(i, j) });
      i = j;
    } else if (/[0-9]/.test(c)) {
      let j = i;
      while (j < sql.length && /[0-9.eE]/.test(sql[j])) j++;
      out.push({ t: "num", s: sql.slice(i, j) });
      i = j;
    } else if (c === "-" && sql[i + 1] === "-") {
      let j = sql.indexOf("\n", i);
      if (j < 0) j = sql.length;
      out.push({ t: "space", s: " " });
      i = j;
    } else {
      // Two-character operators stay whole so `<=` is never read as `<` then `=`.
      const two = sql.slice(i, i + 2);
      if (["<=", ">=", "<>", "!=", "||", "::", "->"].includes(two)) {
        out.push({ t: "punct", s: sql[i + 2] === ">" && two === "->" ? "->>" : two });
        i += two === "->" && sql[i + 2] === ">" ? 3 : 2;
      } else {
        out.push({ t: "punct", s: c });
        i++;
      }
    }
  }
  return out;
}

const lower = (t: Tok | undefined) => (t && t.t === "word" ? t.s.toLowerCase() : "");

/** The index of the next token that is not space, from i on. */
function next(toks: Tok[], i: number): number {
  while (i < toks.length && toks[i].t === "space") i++;
  return i;
}
function prev(toks: Tok[], i: number): number {
  while (i >= 0 && toks[i].t === "space") i--;
  return i;
}

// Words that end an ORDER BY list at its own depth.
const ORDER_END = new Set(["limit", "offset", "for", "union", "except", "intersect", "returning", "on", "where", "group", "having", "window"]);

function translate(sql: string): string {
  const toks = tokenize(sql);
  // insert or ignore/replace: drizzle's builders write on conflict themselves; raw SQL may still say it.
  const first = next(toks, 0);
  let conflictTail = "";
  if (lower(toks[first]) === "insert") {
    const or = next(toks, first + 1);
    if (lower(toks[or]) === "or") {
      const what = next(toks, or + 1);
      if (lower(toks[what]) === "ignore") conflictTail = " on conflict do nothing";
      else if (lower(toks[what]) === "replace") throw new Error("INSERT OR REPLACE has no PostgreSQL form without the conflict target: use onConflictDoUpdate");
      for (let k = or; k <= what; k++) toks[k] = { t: "space", s: "" };
    }
  }
  let n = 0;
  let depth = 0;
  // Depths at which an INSERT's VALUES tuples sit (depth of the tuple's contents).
  let inValues = -1;
  const orderTerms: { depth: number; items: number[] }[] = [];
  const out: Tok[] = toks;
  for (let i = 0; i < toks.length; i++) {
    const tok = toks[i];
    if (tok.t === "param") tok.s = `$${++n}`;
    else if (tok.t === "punct" && tok.s === "(") depth++;
    else if (tok.t === "punct" && tok.s === ")") {
      // An ORDER BY list inside these parentheses ends here.
      while (orderTerms.length && orderTerms[orderTerms.length - 1].depth === depth) closeOrder(toks, orderTerms.pop()!, i);
      depth--;
    } else if (tok.t === "word") {
      const w = tok.s.toLowerCase();
      // A word at the level of the VALUES keyword (on conflict, returning) ends its tuples.
      if (depth === inValues - 1) inValues = -1;
      if (w === "values" && lower(toks[prev(toks, i - 1)]) !== "default") inValues = depth + 1;
      if (w === "null" && inValues === depth) {
        const before = toks[prev(toks, i - 1)];
        const after = toks[next(toks, i + 1)];
        if (before?.t === "punct" && (before.s === "(" || before.s === ",") && after?.t === "punct" && (after.s === ")" || after.s === ",")) tok.s = "default";
      }
      if (w === "like" && lower(toks[prev(toks, i - 1)]) !== "i") tok.s = "ilike";
      if (w === "as") {
        const j = next(toks, i + 1);
        const typ = lower(toks[j]);
        const cast = typ === "integer" || typ === "real" || typ === "blob" ? castAt(toks, i, depth) : -1;
        if (cast >= 0 && typ === "integer") toks[j].s = "bigint";
        else if (cast >= 0 && typ === "real") toks[j].s = "double precision";
        else if (cast >= 0 && typ === "blob") {
          // Text as bytes: PostgreSQL's cast to bytea would read backslashes as escapes.
          toks[cast].s = "convert_to";
          tok.s = ",";
          toks[j].s = "'UTF8'";
        }
      }
      // SQLite's max(a, b) and min(a, b) of several arguments are PostgreSQL's greatest and least; ifnull is coalesce.
      if ((w === "max" || w === "min") && toks[next(toks, i + 1)]?.s === "(" && hasTopLevelComma(toks, next(toks, i + 1))) tok.s = w === "max" ? "greatest" : "least";
      if (w === "ifnull" && toks[next(toks, i + 1)]?.s === "(") tok.s = "coalesce";
      if (w === "by" && lower(toks[prev(toks, i - 1)]) === "order") {
        orderTerms.push({ depth, items: [] });
      } else if (ORDER_END.has(w) && orderTerms.length && orderTerms[orderTerms.length - 1].depth === depth) closeOrder(toks, orderTerms.pop()!, i);
    }
    if (tok.t === "punct" && tok.s === "," && orderTerms.length && orderTerms[orderTerms.length - 1].depth === depth) orderTerms[orderTerms.length - 1].items.push(i);
  }
  while (orderTerms.length) closeOrder(toks, orderTerms.pop()!, toks.length);
  unqualifyConflictTarget(toks);
  lockSkipping(toks);
  return out.map((t) => t.s).join("") + conflictTail;
}

/** `on conflict ("t"."a", "t"."b")`: PostgreSQL takes the target's columns by their bare names. */
function unqualifyConflictTarget(toks: Tok[]) {
  for (let i = 0; i < toks.length; i++) {
    if (lower(toks[i]) !== "conflict" || lower(toks[prev(toks, i - 1)]) !== "on") continue;
    let j = next(toks, i + 1);
    if (toks[j]?.s !== "(") continue;
    for (let d = 0; j < toks.length; j++) {
      if (toks[j].s === "(") d++;
      else if (toks[j].s === ")" && --d === 0) break;
      else if (toks[j].t === "id" && toks[j + 1]?.s === "." && toks[j + 2]?.t === "id") toks[j] = toks[j + 1] = { t: "space", s: "" };
    }
  }
}

/**
 * Ends each SELECT that holds skipLocked()'s condition with `for update skip
 * locked`: the SELECT is the nearest one before the mark at its depth or
 * outside it, and it ends at the parenthesis closing it or with the statement.
 */
function lockSkipping(toks: Tok[]) {
  const depth: number[] = [];
  for (let i = 0, d = 0; i < toks.length; i++) {
    if (toks[i].t === "punct" && toks[i].s === ")") d--;
    depth.push(d);
    if (toks[i].t === "punct" && toks[i].s === "(") d++;
  }
  for (let m = 0; m < toks.length; m++) {
    if (toks[m].t !== "str" || toks[m].s !== SKIP_LOCKED_MARK) continue;
    let top = depth[m];
    let sel = -1;
    for (let k = m - 1; k >= 0; k--) {
      top = Math.min(top, depth[k]);
      if (lower(toks[k]) === "select" && depth[k] <= top) {
        sel = k;
        break;
      }
    }
    if (sel < 0) throw new Error("skipLocked() belongs in the WHERE of a SELECT");
    let end = m + 1;
    while (end < toks.length && depth[end] >= depth[sel]) end++;
    // `end` is the parenthesis closing the SELECT, or the statement's end.
    const last = prev(toks, end - 1);
    toks[last] = { ...toks[last], s: `${toks[last].s} for update skip locked` };
  }
}

/** For `as integer` inside cast( … ) (the AS of a cast, not a column alias): the index of its `cast`, else -1. */
function castAt(toks: Tok[], asAt: number, depth: number): number {
  let d = depth;
  for (let k = asAt - 1; k >= 0; k--) {
    const t = toks[k];
    if (t.t === "punct" && t.s === ")") d++;
    else if (t.t === "punct" && t.s === "(") {
      if (d === depth) {
        const c = prev(toks, k - 1);
        return lower(toks[c]) === "cast" ? c : -1;
      }
      d--;
    }
  }
  return -1;
}

/** Whether the parenthesis at `open` holds more than one argument. */
function hasTopLevelComma(toks: Tok[], open: number): boolean {
  let d = 0;
  for (let k = open; k < toks.length; k++) {
    const s = toks[k].t === "punct" ? toks[k].s : "";
    if (s === "(") d++;
    else if (s === ")" && --d === 0) return false;
    else if (s === "," && d === 1) return true;
  }
  return false;
}

/**
 * Gives each ORDER BY term that does not say where NULLs go SQLite's place
 * for them. `items` are the commas between terms; the list ends before `end`.
 */
function closeOrder(toks: Tok[], order: { items: number[] }, end: number) {
  const ends = [...order.items, end];
  for (const e of ends) {
    const last = prev(toks, e - 1);
    if (last < 0) continue;
    const lw = lower(toks[last]);
    if (lw === "first" || lw === "last") continue;
    const desc = lw === "desc";
    toks[last] = { ...toks[last], s: `${toks[last].s} nulls ${desc ? "last" : "first"}` };
  }
}

const cache = new Map<string, string>();

/** The PostgreSQL text of a statement drizzle's SQLite dialect wrote; translations are kept, since a process runs the same few hundred statements. */
export function toPostgres(sql: string): string {
  let out = cache.get(sql);
  if (out === undefined) {
    out = translate(sql);
    if (cache.size > 5000) cache.clear();
    cache.set(sql, out);
  }
  return out;
}
