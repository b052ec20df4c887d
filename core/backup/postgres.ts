// The database half of a backup on PostgreSQL, through PostgreSQL's own
// client programs: pg_dump writes the schema Hearth lives in as one custom-
// format dump (from one snapshot, so it is consistent while the server keeps
// writing), which pg_restore reads; a restore turns it into SQL with
// pg_restore and runs that with psql in one transaction, after dropping the
// schema, so the database ends up holding exactly the dump or is left as it was.
import { readdirSync } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { SQL } from "bun";
import { HearthError } from "../errors.ts";

/** Where a PostgreSQL program is: on PATH, else in Debian's versioned folder (newest first). */
export function pgBin(name: string): string | null {
  const onPath = Bun.which(name);
  if (onPath) return onPath;
  try {
    for (const v of readdirSync("/usr/lib/postgresql").sort().reverse()) {
      const p = Bun.which(name, { PATH: `/usr/lib/postgresql/${v}/bin` });
      if (p) return p;
    }
  } catch {}
  return null;
}

function tool(name: string): string {
  const p = pgBin(name);
  if (!p) throw new HearthError("not_configured", `${name} is missing: backup and restore on PostgreSQL need its client programs (apt-get install postgresql-client)`);
  return p;
}

/** pg_dump, pg_restore and psql, or a not_configured error naming the one missing, before any work is done. */
export function pgTools() {
  return { dump: tool("pg_dump"), restore: tool("pg_restore"), psql: tool("psql") };
}

/** The URL for libpq without its password, which goes in the environment: a command line is readable by every user of the machine. */
function connection(url: string): { target: string; env: Record<string, string> } {
  const u = new URL(url);
  const password = decodeURIComponent(u.password);
  u.password = "";
  return { target: u.toString(), env: password ? { PGPASSWORD: password } : {} };
}

async function run(cmd: string[], url: string): Promise<{ ok: boolean; err: string }> {
  const { env } = connection(url);
  const p = Bun.spawn(cmd, { env: { ...process.env, ...env, PGOPTIONS: "-c client_min_messages=warning" }, stdin: "ignore", stdout: "ignore", stderr: "pipe" });
  const [err, code] = await Promise.all([new Response(p.stderr).text(), p.exited]);
  return { ok: code === 0, err: err.trim() };
}

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** The schema Hearth's tables live in (the connection's current one) and how many tables, views and sequences it holds. */
export async function inspect(url: string): Promise<{ schema: string; relations: number }> {
  const sql = new SQL({ url, max: 1, onnotice: () => {} } as ConstructorParameters<typeof SQL>[0]);
  try {
    const [row] = (await sql.unsafe(
      "SELECT current_schema() AS schema, (SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f'))::int AS relations",
    )) as { schema: string | null; relations: number }[];
    if (!row.schema) throw new HearthError("not_configured", "the database has no current schema (check the search_path of HEARTH_DATABASE_URL's role)");
    return { schema: row.schema, relations: Number(row.relations) };
  } catch (e) {
    if (e instanceof HearthError) throw e;
    throw new HearthError("storage_unavailable", `cannot reach the database HEARTH_DATABASE_URL names: ${(e as Error).message}`);
  } finally {
    await sql.close().catch(() => {});
  }
}

/**
 * Dumps `schema` to `file` in pg_dump's custom format, without owners or
 * grants, so it loads under any role. Unlogged tables (the instances' shared
 * scratch state: rate buckets, holds, claims) keep their definitions and
 * leave their rows behind, which a crash would empty too.
 */
export async function dumpSchema(url: string, schema: string, file: string): Promise<void> {
  const r = await run([tool("pg_dump"), "--format=custom", "--no-owner", "--no-privileges", "--no-unlogged-table-data", `--schema=${ident(schema)}`, `--file=${file}`, connection(url).target], url);
  if (!r.ok) throw new Error(`pg_dump failed: ${r.err}`);
}

/** Turns a dump into the SQL that loads it, reading it whole: a damaged dump is found here, before the database is touched. */
export async function dumpToSql(dump: string, file: string): Promise<void> {
  const p = Bun.spawn([tool("pg_restore"), "--no-owner", "--no-privileges", `--file=${file}`, dump], { stdin: "ignore", stdout: "ignore", stderr: "pipe" });
  const [err, code] = await Promise.all([new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new HearthError("invalid_argument", `the backup's database dump cannot be read: the backup is damaged (${err.trim()})`, { field: "file" });
  await withOptionalIndexes(file);
}

/** An index on pg_trgm's operator classes, as pg_restore writes it: one line. */
const TRIGRAM_INDEX = /^CREATE INDEX .*\bgin_trgm_ops\b.*;$/;

/**
 * pg_trgm's indexes (contacts/find's) live in the dumped schema, but the
 * extension they need is not dumped with it, and the schema's replacement
 * drops it: each such index is made to add the extension first, and to be
 * skipped with a notice where it cannot be added, as the migration that made
 * it does, so the restore never fails for want of an index that only speeds a
 * search. Lines inside COPY data are rows, never statements, and are left as
 * they are.
 */
async function withOptionalIndexes(file: string): Promise<void> {
  const out = `${file}.indexes`;
  const writer = Bun.file(out).writer();
  let inCopy = false;
  let changed = false;
  let rest = "";
  const line = (l: string) => {
    if (inCopy) inCopy = l !== "\\.";
    else if (/^COPY .* FROM stdin;$/.test(l)) inCopy = true;
    else if (TRIGRAM_INDEX.test(l) && !l.includes("$$")) {
      changed = true;
      // pg_restore's SQL empties the search path, so the extension is put in the schema of the index's table.
      const schema = /\bON (?:ONLY )?((?:"[^"]+"|\w+))\./.exec(l)?.[1] ?? "public";
      l = `DO $$ BEGIN CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA ${schema}; ${l} EXCEPTION WHEN OTHERS THEN RAISE NOTICE 'restore: an index pg_trgm serves was left out (%)', SQLERRM; END $$;`;
    }
    writer.write(`${l}\n`);
  };
  const decoder = new TextDecoder();
  for await (const chunk of Bun.file(file).stream()) {
    const lines = (rest + decoder.decode(chunk, { stream: true })).split("\n");
    rest = lines.pop()!;
    for (const l of lines) line(l);
  }
  rest += decoder.decode();
  if (rest) writer.write(rest);
  await writer.end();
  if (changed) await rename(out, file);
  else await rm(out, { force: true });
}

/** Replaces `schema` with what the SQL from dumpToSql creates, in one transaction: on any error the database is as it was. */
export async function loadSchema(url: string, schema: string, sqlFile: string): Promise<void> {
  const r = await run([tool("psql"), "-X", "-q", "--single-transaction", "-v", "ON_ERROR_STOP=1", "-c", `DROP SCHEMA IF EXISTS ${ident(schema)} CASCADE`, "-f", sqlFile, connection(url).target], url);
  if (!r.ok) throw new Error(`loading the dump failed, so the database was left as it was: ${r.err}`);
}
