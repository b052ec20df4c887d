import { SQL } from "bun";
import { startHearth } from "../core/testing.ts";
import { handleApi } from "../core/http/api.ts";
import { hashToken, newId, newToken } from "../core/auth/ids.ts";
import { launchPg } from "../test/pg.ts";
import { ownCpuUs } from "./lib.ts";
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const N = Number(process.env.BENCH_CALLS ?? 5_000);
const BATCH = 16;
const env = { HEARTH_METERING: "off", HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0" };
const pg = await launchPg(["fsync=on", "full_page_writes=on", "synchronous_commit=off"]);
const onPg = await startHearth({ env: { ...env, HEARTH_DATABASE_URL: await pg.database() } });
const onSqlite = await startHearth({ env });
process.env.HEARTH_LIMIT_DATABASE_URL = await pg.database();
const { pgLimitRoutes } = await import("./pglimit.ts");
const peer = () => "127.0.0.1";
const body = JSON.stringify({ title: "bench-write", text: "written under load" });
const hearthAdd = async (h: typeof onPg) => {
  const token = await h.token("bench");
  const auth = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  return { make: () => new Request(`${h.url}/api/v1/notes/add`, { method: "POST", headers: auth, body }), run: (req: Request) => handleApi(h.rt, req, "notes", "add", peer) };
};
const limitSql = new SQL({ url: process.env.HEARTH_LIMIT_DATABASE_URL, max: 1 } as ConstructorParameters<typeof SQL>[0]);
const account = newId();
const limitToken = newToken();
await limitSql`INSERT INTO accounts (id, username, created) VALUES (${account}, ${`cost-${account}`}, ${Date.now()})`;
await limitSql`INSERT INTO tokens (id, account, hash, name, scopes, created) VALUES (${newId()}, ${account}, ${hashToken(limitToken)}, 'cost', '*', ${Date.now()})`;
await limitSql.close();
const limitAdd = { make: () => new Request(`http://127.0.0.1/api/v1/notes/add`, { method: "POST", headers: { authorization: `Bearer ${limitToken}`, "content-type": "application/json" }, body }), run: (req: Request) => pgLimitRoutes["/api/v1/notes/add"].POST(req) };
function http(r: { make: () => Request; run: (req: Request) => Response | Promise<Response> }) {
  return async () => {
    const res = await r.run(r.make());
    if (res.status !== 200) throw new Error(`status ${res.status}: ${await res.text()}`);
    return await res.arrayBuffer();
  };
}
const parts = [
  { name: "POST notes/add, PostgreSQL", once: http(await hearthAdd(onPg)) },
  { name: "POST notes/add, SQLite", once: http(await hearthAdd(onSqlite)) },
  { name: "the limit's POST notes/add", once: http(limitAdd) },
];
const only = process.env.BENCH_PART;
if (only !== undefined) parts.splice(0, parts.length, parts[Number(only)]);
const measure = async (p: (typeof parts)[0]) => {
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
await onPg.stop();
await onSqlite.stop();
pg.stop();
process.exit(0);
