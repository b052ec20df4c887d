// The limit: notes/get and notes/add written by hand on Bun.serve and
// bun:sqlite, with nothing Hearth adds beyond what the two methods need. The
// same tables (accounts, tokens, notes), the same rule (a bearer token, sha256
// hashed and looked up on every call, revoked or expired refused, 401
// otherwise), prepared statements, one SQLite file in WAL mode with a reader
// and a writer connection, and `{"result": …}` answers. What Hearth serves
// beyond this (scopes, limits, validation, logging, CORS, request ids) is what
// the benchmark measures against it.
//
//   PORT=... HEARTH_LIMIT_DB=... bun bench/limit.ts   prints the port, then a token, and serves
import { Database } from "bun:sqlite";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hashToken, newId, newToken } from "../core/auth/ids.ts";

const file = process.env.HEARTH_LIMIT_DB ?? join(mkdtempSync(join(tmpdir(), "hearth-limit-")), "limit.db");
const writer = new Database(file, { create: true, strict: true });
writer.run("PRAGMA journal_mode = WAL");
writer.run("PRAGMA synchronous = NORMAL");
writer.run(`CREATE TABLE IF NOT EXISTS accounts (id text PRIMARY KEY NOT NULL, username text NOT NULL UNIQUE, admin integer DEFAULT false NOT NULL, created integer NOT NULL, password text)`);
writer.run(`CREATE TABLE IF NOT EXISTS tokens (id text PRIMARY KEY NOT NULL, account text NOT NULL REFERENCES accounts(id) ON DELETE cascade, hash text NOT NULL UNIQUE,
  name text NOT NULL, scopes text NOT NULL, created integer NOT NULL, last_used integer, expires integer, revoked integer)`);
writer.run(`CREATE TABLE IF NOT EXISTS notes (owner text NOT NULL, title text NOT NULL, text text NOT NULL, created integer NOT NULL, updated integer NOT NULL, PRIMARY KEY(owner, title))`);
const reader = new Database(file, { readonly: true, strict: true });

const account = newId();
const token = newToken();
writer.run("INSERT INTO accounts (id, username, created) VALUES (?, ?, ?)", [account, `bench-${account}`, Date.now()]);
writer.run("INSERT INTO tokens (id, account, hash, name, scopes, created) VALUES (?, ?, ?, 'bench', '*', ?)", [newId(), account, hashToken(token), Date.now()]);

const byHash = reader.prepare<{ account: string; expires: number | null; revoked: number | null }, [string]>("SELECT account, expires, revoked FROM tokens WHERE hash = ?");
const byTitle = reader.prepare<{ title: string; text: string; created: number; updated: number }, [string, string]>(
  "SELECT title, text, created, updated FROM notes WHERE owner = ? AND title = ?",
);
const upsert = writer.prepare<{ title: string; text: string; created: number; updated: number }, [string, string, string, number, number]>(
  "INSERT INTO notes (owner, title, text, created, updated) VALUES (?, ?, ?, ?, ?) ON CONFLICT (owner, title) DO UPDATE SET text = excluded.text, updated = excluded.updated RETURNING title, text, created, updated",
);
const write = writer.transaction((owner: string, title: string, text: string, now: number) => upsert.get(owner, title, text, now, now));

const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json; charset=utf-8" } });
const refuse = (status: number, message: string) => json(status, { error: { status, message } });
const shape = (n: { title: string; text: string; created: number; updated: number }) => ({
  title: n.title,
  text: n.text,
  created: new Date(n.created).toISOString(),
  updated: new Date(n.updated).toISOString(),
});

function owner(req: Request): string | null {
  const m = /^Bearer\s+(\S+)$/i.exec(req.headers.get("authorization") ?? "");
  const row = m ? byHash.get(hashToken(m[1])) : null;
  if (!row || row.revoked !== null || (row.expires !== null && row.expires <= Date.now())) return null;
  return row.account;
}

/** The two routes, for Bun.serve; exported so a profile can call them in-process. */
export const limitRoutes = {
  "/api/v1/notes/get": {
    GET(req: Request) {
      const who = owner(req);
      if (!who) return refuse(401, "the token is not valid");
      const title = new URL(req.url).searchParams.get("title");
      if (!title) return refuse(400, "title is required");
      const row = byTitle.get(who, title);
      return row ? json(200, { result: shape(row) }) : refuse(404, `no note titled "${title}"`);
    },
  },
  "/api/v1/notes/add": {
    async POST(req: Request) {
      const who = owner(req);
      if (!who) return refuse(401, "the token is not valid");
      let args: { title?: unknown; text?: unknown };
      try {
        args = await req.json();
      } catch {
        return refuse(400, "the body is not valid JSON");
      }
      if (typeof args?.title !== "string" || !args.title || typeof args.text !== "string") return refuse(400, "title and text are strings");
      return json(200, { result: shape(write(who, args.title, args.text, Date.now())!) });
    },
  },
};
export const limitToken = token;

if (import.meta.main) {
  const server = Bun.serve({ port: Number(process.env.PORT ?? 0), hostname: "127.0.0.1", routes: limitRoutes, fetch: () => refuse(404, "not found") });
  console.log(server.port);
  console.log(token);
}
