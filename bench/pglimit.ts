// The limit on PostgreSQL: notes/get and notes/add written by hand on
// Bun.serve and Bun's SQL client, as bench/limit.ts writes them on bun:sqlite.
// The same tables as Hearth's PostgreSQL store makes (accounts, tokens, notes,
// its column types), the same rule (a bearer token, sha256 hashed and looked
// up on every call, revoked or expired refused, 401 otherwise), and each
// call in PostgreSQL's best shape for it: one prepared statement, one round
// trip, the token's check joined to the read, and to the upsert (one
// statement is its own transaction). A pool as large as Hearth's default
// (HEARTH_DATABASE_POOL, 10) and `{"result": …}` answers.
//
//   PORT=... HEARTH_LIMIT_DATABASE_URL=postgres://... bun bench/pglimit.ts   prints the port, then a token, and serves
import { SQL } from "bun";
import { hashToken, newId, newToken } from "../core/auth/ids.ts";

const url = process.env.HEARTH_LIMIT_DATABASE_URL;
if (!url) throw new Error("HEARTH_LIMIT_DATABASE_URL: a postgres:// URL of an empty database");
const sql = new SQL({ url, max: Number(process.env.HEARTH_LIMIT_POOL ?? 10), onnotice: () => {} } as ConstructorParameters<typeof SQL>[0]);

await sql.unsafe(`CREATE TABLE IF NOT EXISTS accounts (id text PRIMARY KEY NOT NULL, username text NOT NULL UNIQUE, admin bigint DEFAULT 0 NOT NULL, created bigint NOT NULL, password text)`);
await sql.unsafe(`CREATE TABLE IF NOT EXISTS tokens (id text PRIMARY KEY NOT NULL, account text NOT NULL REFERENCES accounts(id) ON DELETE cascade, hash text NOT NULL UNIQUE,
  name text NOT NULL, scopes text NOT NULL, created bigint NOT NULL, last_used bigint, expires bigint, revoked bigint)`);
await sql.unsafe(`CREATE TABLE IF NOT EXISTS notes (owner text NOT NULL, title text NOT NULL, text text NOT NULL, created bigint NOT NULL, updated bigint NOT NULL, PRIMARY KEY (owner, title))`);

const account = newId();
const token = newToken();
await sql`INSERT INTO accounts (id, username, created) VALUES (${account}, ${`bench-${account}`}, ${Date.now()})`;
await sql`INSERT INTO tokens (id, account, hash, name, scopes, created) VALUES (${newId()}, ${account}, ${hashToken(token)}, 'bench', '*', ${Date.now()})`;

interface NoteRow {
  title: string;
  text: string;
  created: string | number;
  updated: string | number;
}

// Bun's tagged queries are prepared once per connection and then only bound and executed.
/** The token's account joined to the note: no row is a token that is not valid, a row without a title a note that is not there. */
const read = (hash: string, title: string, now: number) =>
  sql<(NoteRow & { found: boolean })[]>`SELECT n.title IS NOT NULL AS found, n.title, n.text, n.created, n.updated FROM tokens t
    LEFT JOIN notes n ON n.owner = t.account AND n.title = ${title}
    WHERE t.hash = ${hash} AND t.revoked IS NULL AND (t.expires IS NULL OR t.expires > ${now})`;
/** The upsert from the token's account: no row is a token that is not valid. */
const write = (hash: string, title: string, text: string, now: number) =>
  sql<NoteRow[]>`INSERT INTO notes (owner, title, text, created, updated)
    SELECT t.account, ${title}, ${text}, ${now}, ${now} FROM tokens t
    WHERE t.hash = ${hash} AND t.revoked IS NULL AND (t.expires IS NULL OR t.expires > ${now})
    ON CONFLICT (owner, title) DO UPDATE SET text = excluded.text, updated = excluded.updated RETURNING title, text, created, updated`;

const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json; charset=utf-8" } });
const refuse = (status: number, message: string) => json(status, { error: { status, message } });
const shape = (n: NoteRow) => ({
  title: n.title,
  text: n.text,
  created: new Date(Number(n.created)).toISOString(),
  updated: new Date(Number(n.updated)).toISOString(),
});

function bearer(req: Request): string | null {
  const m = /^Bearer\s+(\S+)$/i.exec(req.headers.get("authorization") ?? "");
  return m ? hashToken(m[1]) : null;
}

/** The two routes, for Bun.serve. */
export const pgLimitRoutes = {
  "/api/v1/notes/get": {
    async GET(req: Request) {
      const hash = bearer(req);
      if (!hash) return refuse(401, "the token is not valid");
      const title = new URL(req.url).searchParams.get("title");
      if (!title) return refuse(400, "title is required");
      const [row] = await read(hash, title, Date.now());
      if (!row) return refuse(401, "the token is not valid");
      return row.found ? json(200, { result: shape(row) }) : refuse(404, `no note titled "${title}"`);
    },
  },
  "/api/v1/notes/add": {
    async POST(req: Request) {
      const hash = bearer(req);
      if (!hash) return refuse(401, "the token is not valid");
      let args: { title?: unknown; text?: unknown };
      try {
        args = await req.json();
      } catch {
        return refuse(400, "the body is not valid JSON");
      }
      if (typeof args?.title !== "string" || !args.title || typeof args.text !== "string") return refuse(400, "title and text are strings");
      const [row] = await write(hash, args.title, args.text, Date.now());
      return row ? json(200, { result: shape(row) }) : refuse(401, "the token is not valid");
    },
  },
};

if (import.meta.main) {
  const server = Bun.serve({ port: Number(process.env.PORT ?? 0), hostname: "127.0.0.1", routes: pgLimitRoutes, fetch: () => refuse(404, "not found") });
  console.log(server.port);
  console.log(token);
}
