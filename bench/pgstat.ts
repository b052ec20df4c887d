// What Hearth asks of PostgreSQL under load, statement by statement: a
// throwaway cluster with pg_stat_statements, `dist/hearth serve` on it, wrk
// on notes/add (or MODE=get: notes/get) for SECONDS, then every statement
// PostgreSQL ran in that time, with its calls per request and its time, and
// the CPU per request of PostgreSQL and of the server.
//
//   bun bench/pgstat.ts            MODE=add|get SECONDS=8 PROF=1 (the server under --cpu-prof)
import { join } from "node:path";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { SQL } from "bun";
import { launchPg } from "../test/pg.ts";
import { cpuUs, load, loadGenerator, serve, treeCpuUs } from "./lib.ts";

const mode = process.env.MODE ?? "add";
const seconds = Number(process.env.SECONDS ?? 8);
const root = join(import.meta.dir, "..");
const pg = await launchPg(["fsync=on", "full_page_writes=on", "synchronous_commit=off", "shared_preload_libraries=pg_stat_statements", "pg_stat_statements.track=all"]);
const url = await pg.database();
const dir = mkdtempSync(join(tmpdir(), "hearth-pgstat-"));
const env = { ...process.env, HEARTH_DATA: join(dir, "data"), HEARTH_DATABASE_URL: url, HEARTH_LOG: "off", HEARTH_METERING: "off", HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0", HEARTH_RATE_PRICED: "0" };
const binary = process.env.PROF ? ["bun", "--cpu-prof", `--cpu-prof-dir=${dir}`, join(root, "core/cli/main.ts")] : [process.env.HEARTH_BIN ?? join(root, "dist/hearth")];
const token = Bun.spawnSync([...binary, "token", "create", "--user", "bench"], { env }).stdout.toString().trim().split("\n").pop()!;
const served = await serve(binary, env);
const auth = { authorization: `Bearer ${token}` };
await fetch(`${served.base}/api/v1/notes/add`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify({ title: "bench", text: "x" }) });
const admin = new SQL({ url, max: 1 } as ConstructorParameters<typeof SQL>[0]);
await admin.unsafe("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
loadGenerator();
// A warm-up, then the counted run.
const opts = mode === "get"
  ? { url: `${served.base}/api/v1/notes/get?title=bench`, headers: auth, seconds: 2, pid: served.proc.pid }
  : { url: `${served.base}/api/v1/notes/add`, method: "POST" as const, headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify({ title: "bench-write", text: "written under load" }), seconds: 2, pid: served.proc.pid };
await load("warm", opts);
await admin.unsafe("SELECT pg_stat_statements_reset()");
const row = await load(mode, { ...opts, seconds, dbPid: () => pg.pid() });
const stats = (await admin.unsafe(
  "SELECT calls, round(total_exec_time::numeric, 1) AS ms, round(total_plan_time::numeric, 1) AS plan_ms, rows, left(regexp_replace(query, '\\s+', ' ', 'g'), 110) AS query FROM pg_stat_statements ORDER BY calls DESC LIMIT 25",
)) as { calls: bigint; ms: string; plan_ms: string; rows: bigint; query: string }[];
const requests = row.rps * seconds;
console.log(`${mode}: ${Math.round(row.rps)} req/s, server CPU ${row.cpu?.toFixed(1)} µs, PostgreSQL CPU ${row.dbCpu?.toFixed(1)} µs per request`);
for (const s of stats) console.log(`${(Number(s.calls) / requests).toFixed(3).padStart(7)}/req  ${String(s.ms).padStart(8)} ms  plan ${String(s.plan_ms).padStart(6)}  ${s.query}`);
await admin.close();
served.proc.kill();
await served.proc.exited;
pg.stop();
if (process.env.PROF) console.log(`profile in ${dir}`);
