// What a read costs this process on PostgreSQL, without sockets: GET
// notes/get called in this process, as Bun's router calls it, on the
// PostgreSQL store and on SQLite, beside the limit's own handler
// (bench/pglimit.ts) and the parts of Hearth's read alone: the prepared
// query through the store (core/db/prepared.ts, core/db/pg.ts runOn) and
// the same statement on Bun's client directly. PostgreSQL's own CPU is not
// counted (another process): what is left is the client side, Hearth's and
// Bun's. Each request is made and answered whole inside the time counted, so
// every HTTP row carries the same cost of a Request. CPU per request, medians
// of BENCH_ROUNDS rounds (default 7), the rounds interleaved.
//
//   bun bench/pgcost.ts
import { and, eq, sql } from "drizzle-orm";
import { SQL } from "bun";
import { startHearth } from "../core/testing.ts";
import { handleApi } from "../core/http/api.ts";
import { prepared } from "../core/db/prepared.ts";
import { hashToken, newId, newToken } from "../core/auth/ids.ts";
import { notes } from "../plugins/notes/schema.ts";
import type { Db } from "../core/plugin.ts";
import { launchPg } from "../test/pg.ts";
import { ownCpuUs } from "./lib.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const N = Number(process.env.BENCH_CALLS ?? 10_000);
const BATCH = 32;
const env = { HEARTH_METERING: "off", HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0" };

const pg = await launchPg(["fsync=on", "full_page_writes=on", "synchronous_commit=off"]);
const onPg = await startHearth({ env: { ...env, HEARTH_DATABASE_URL: await pg.database() } });
const onSqlite = await startHearth({ env });
process.env.HEARTH_LIMIT_DATABASE_URL = await pg.database();
const { pgLimitRoutes } = await import("./pglimit.ts");
try {
  const peer = () => "127.0.0.1";
  const hearthGet = async (h: typeof onPg) => {
    const token = await h.token("bench");
    await h.call("notes/add", { title: "bench", text: "a note read under load" }, { token });
    const auth = { authorization: `Bearer ${token}` };
    return { make: () => new Request(`${h.url}/api/v1/notes/get?title=bench`, { headers: auth }), run: (req: Request) => handleApi(h.rt, req, "notes", "get", peer) };
  };
  const pgGet = await hearthGet(onPg);
  const sqliteGet = await hearthGet(onSqlite);

  // The limit's handler, on a token of this process's own in its database.
  const limitSql = new SQL({ url: process.env.HEARTH_LIMIT_DATABASE_URL, max: 1 } as ConstructorParameters<typeof SQL>[0]);
  const account = newId();
  const limitToken = newToken();
  await limitSql`INSERT INTO accounts (id, username, created) VALUES (${account}, ${`cost-${account}`}, ${Date.now()})`;
  await limitSql`INSERT INTO tokens (id, account, hash, name, scopes, created) VALUES (${newId()}, ${account}, ${hashToken(limitToken)}, 'cost', '*', ${Date.now()})`;
  await limitSql`INSERT INTO notes (owner, title, text, created, updated) VALUES (${account}, 'bench', 'a note read under load', ${Date.now()}, ${Date.now()})`;
  await limitSql.close();
  const limitAuth = { authorization: `Bearer ${limitToken}` };
  const limitGet = { make: () => new Request(`http://127.0.0.1/api/v1/notes/get?title=bench`, { headers: limitAuth }), run: (req: Request) => pgLimitRoutes["/api/v1/notes/get"].GET(req) };

  // The store's read alone: the prepared query notes/get runs, and its statement on the store's own Bun client.
  const store = onPg.rt.store as unknown as { rdb: Db; sql: SQL };
  const owner = (await store.sql.unsafe("SELECT owner FROM notes LIMIT 1"))[0].owner as string;
  const byTitle = (db: Db) =>
    db
      .select()
      .from(notes)
      .where(and(eq(notes.owner, sql.placeholder("owner")), eq(notes.title, sql.placeholder("title"))))
      .prepare();
  const text = 'select "owner", "title", "text", "created", "updated" from "notes" where ("notes"."owner" = $1 and "notes"."title" = $2)';

  type Part = { name: string; once: () => Promise<unknown> };
  const parts: Part[] = [
    { name: "GET notes/get, PostgreSQL", once: http(pgGet) },
    { name: "GET notes/get, SQLite", once: http(sqliteGet) },
    { name: "the limit's GET notes/get", once: http(limitGet) },
    { name: "prepared get, PostgreSQL store", once: () => prepared(store.rdb, byTitle).get({ owner, title: "bench" }) },
    { name: "Bun SQL unsafe().values()", once: () => store.sql.unsafe(text, [owner, "bench"]).values() },
  ];
  for (const p of parts) if (!(await p.once())) throw new Error(`${p.name}: nothing read`);
  // BENCH_PART=<index> measures one part alone, for a profile of it.
  const only = process.env.BENCH_PART;
  if (only !== undefined) parts.splice(0, parts.length, parts[Number(only)]);
  const measure = async (p: Part): Promise<number> => {
    let spent = 0;
    for (let done = 0; done < N; done += BATCH) {
      const t = ownCpuUs();
      await Promise.all(Array.from({ length: BATCH }, p.once));
      spent += ownCpuUs() - t;
    }
    return spent / N;
  };
  for (const p of parts) await measure(p);
  const seen: number[][] = parts.map(() => []);
  for (let i = 0; i < ROUNDS; i++) for (let j = 0; j < parts.length; j++) seen[j].push(await measure(parts[j]));
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  for (let j = 0; j < parts.length; j++) console.log(`${parts[j].name.padEnd(34)} ${median(seen[j]).toFixed(1).padStart(7)} µs CPU/request   rounds: ${seen[j].map((x) => x.toFixed(1)).join(" ")}`);
  if (seen.length === 5) {
    const over = (a: number, b: number) => median(seen[a].map((x, i) => x - seen[b][i])).toFixed(1);
    console.log(`each round's difference, median: PostgreSQL over SQLite ${over(0, 1)} µs, over the limit ${over(0, 2)} µs; the store's prepared get over Bun's client ${over(3, 4)} µs`);
  }
} finally {
  await onPg.stop();
  await onSqlite.stop();
  pg.stop();
}

/** One request made and answered whole; a status other than 200 throws. */
function http(r: { make: () => Request; run: (req: Request) => Response | Promise<Response> }) {
  return async () => {
    const res = await r.run(r.make());
    if (res.status !== 200) throw new Error(`status ${res.status}: ${await res.text()}`);
    return await res.arrayBuffer();
  };
}
