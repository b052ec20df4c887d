// PostgreSQL tables made from the sqliteTable definitions, so a table is
// defined once. They are fed to drizzle-kit's PostgreSQL generator
// (core/db/generate.ts) rather than turned into DDL here: drizzle-kit then
// diffs each owner's schema against its last snapshot and writes
// PostgreSQL's own ALTER statements when a table changes, where SQLite's
// migrations copy and rename the table.
//
// Columns keep SQLite's storage classes, so drizzle's SQLite mappers read
// the rows as they read SQLite's: text → text, integer (also timestamps and
// booleans) → bigint, real → double precision, blob → bytea, numeric →
// numeric. An integer primary key of one column is an identity column, as
// SQLite gives such a column the next rowid when none is given.
import { is, SQL } from "drizzle-orm";
import { bigint, customType, doublePrecision, foreignKey, index, numeric, pgTable, primaryKey, text, unique, uniqueIndex, type PgTableWithColumns } from "drizzle-orm/pg-core";
import { getTableConfig, SQLiteTable, type SQLiteColumn } from "drizzle-orm/sqlite-core";

const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({ dataType: () => "bytea" });

/** SQLite's storage class of a column: what drizzle's column type stores. */
export function storageClass(c: SQLiteColumn): "text" | "integer" | "real" | "blob" | "numeric" {
  const t = c.getSQLType().toLowerCase();
  if (t.startsWith("text")) return "text";
  if (t.startsWith("integer")) return "integer";
  if (t.startsWith("real")) return "real";
  if (t.startsWith("blob")) return "blob";
  if (t.startsWith("numeric")) return "numeric";
  throw new Error(`column ${c.name}: no PostgreSQL storage for SQLite type ${t}`);
}

/** A default as SQLite stores it: booleans as 0/1, JSON as its text. */
function storedDefault(c: SQLiteColumn): unknown {
  const d = c.default;
  if (is(d, SQL)) return d;
  return c.mapToDriverValue(d);
}

const converted = new WeakMap<SQLiteTable, PgTableWithColumns<any>>();

/** The PostgreSQL table of a sqliteTable (the same one each time, so foreign keys between tables find each other). */
export function pgTableOf(t: SQLiteTable): PgTableWithColumns<any> {
  const done = converted.get(t);
  if (done) return done;
  const cfg = getTableConfig(t);
  const single = cfg.columns.filter((c) => c.primary);
  const columns: Record<string, any> = {};
  for (const c of cfg.columns) {
    const kind = storageClass(c);
    let col: any =
      kind === "text" ? text(c.name) : kind === "integer" ? bigint(c.name, { mode: "number" }) : kind === "real" ? doublePrecision(c.name) : kind === "blob" ? bytea(c.name) : numeric(c.name);
    if (c.primary) col = col.primaryKey();
    if (c.primary && kind === "integer" && single.length === 1) col = col.generatedByDefaultAsIdentity();
    if (c.notNull && !c.primary) col = col.notNull();
    if (c.hasDefault && c.default !== undefined) col = col.default(storedDefault(c));
    if (c.isUnique) col = col.unique(c.uniqueName);
    columns[c.name] = col;
  }
  const table = pgTable(cfg.name, columns, (p) => {
    const at = (cols: SQLiteColumn[]) => cols.map((c) => p[c.name]) as [any, ...any[]];
    const out: any[] = [];
    for (const pk of cfg.primaryKeys) out.push(primaryKey({ name: pk.getName(), columns: at(pk.columns) }));
    for (const u of cfg.uniqueConstraints) out.push(unique(u.getName()).on(...at(u.columns)));
    for (const i of cfg.indexes) {
      const ic = i.config;
      const on = ic.columns.map((c) => (is(c, SQL) ? c : p[(c as SQLiteColumn).name])) as [any, ...any[]];
      let ix: any = (ic.unique ? uniqueIndex(ic.name) : index(ic.name)).on(...on);
      if (ic.where) ix = ix.where(ic.where);
      out.push(ix);
    }
    for (const fk of cfg.foreignKeys) {
      const ref = fk.reference();
      const target = pgTableOf(ref.foreignTable as SQLiteTable) as any;
      let f: any = foreignKey({ name: fk.getName(), columns: at(ref.columns), foreignColumns: ref.foreignColumns.map((c) => target[c.name]) as [any, ...any[]] });
      if (fk.onDelete) f = f.onDelete(fk.onDelete);
      if (fk.onUpdate) f = f.onUpdate(fk.onUpdate);
      out.push(f);
    }
    return out;
  });
  converted.set(t, table);
  return table;
}

/** The PostgreSQL tables of a schema module's exports (the sqliteTables among them), by export name. */
export function pgTablesOf(schema: Record<string, unknown>): Record<string, PgTableWithColumns<any>> {
  const out: Record<string, PgTableWithColumns<any>> = {};
  for (const [k, v] of Object.entries(schema)) if (is(v, SQLiteTable)) out[k] = pgTableOf(v);
  return out;
}
