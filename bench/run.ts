// `bun run bench`: Hearth against the floor (a bare Bun.serve JSON endpoint)
// and the limit (notes/get and notes/add written by hand on Bun.serve and
// bun:sqlite, bench/limit.ts) under the same load from wrk, plus idle memory
// and start-up time of dist/hearth. BENCH_SECONDS sets each scenario's length
// (default 10). Beside them, unless BENCH_QUICK=1 or BENCH_ONLY leaves them
// out: notes/get and notes/add on PostgreSQL (`pg`, a throwaway cluster), and
// three instances against one (`instances`, bench/instances.ts). On
// PostgreSQL, Hearth is held against a limit of its own (bench/pglimit.ts).
import { mkdtempSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launchPg, pgBin, type Pg } from "../test/pg.ts";
import { freePort, installed, interleaved, loadGenerator, rssMb, serve, table, waitFor200, type LoadOptions, type Row, type Served } from "./lib.ts";

const root = join(import.meta.dir, "..");
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const binary = join(root, "dist/hearth");

if (!existsSync(binary) || process.env.BENCH_REBUILD !== "0") {
  const b = Bun.spawnSync(["bun", join(root, "core/build.ts")], { stdout: "ignore", stderr: "inherit" });
  if (b.exitCode !== 0) throw new Error("build failed");
}

const dir = mkdtempSync(join(tmpdir(), "hearth-bench-"));
// Rate limits and metering off: the benchmark measures the call path, not the limiter refusing it.
const env = { ...process.env, HEARTH_DATA: join(dir, "data"), HEARTH_LOG: "off", HOST: "127.0.0.1", HEARTH_METERING: "off", HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0", HEARTH_RATE_PRICED: "0" };

const quick = process.env.BENCH_QUICK === "1";
const only = (process.env.BENCH_ONLY ?? "").split(",").filter(Boolean);
const want = (name: string) => !quick && (only.length === 0 || only.includes(name));

// Start-up: process start to first 200, median of 5 cold starts.
const starts: number[] = [];
for (let i = 0; i < 5; i++) {
  const port = freePort();
  const t0 = performance.now();
  const p = Bun.spawn([binary, "serve"], { env: { ...env, PORT: String(port) }, stdout: "ignore", stderr: "ignore" });
  await waitFor200(`http://127.0.0.1:${port}/health`);
  starts.push(performance.now() - t0);
  p.kill();
  await p.exited;
}
starts.sort((a, b) => a - b);
const startupMs = Math.round(starts[2]);

// The instance under test.
const port = freePort();
const token = new TextDecoder().decode(Bun.spawnSync([binary, "token", "create", "--user", "bench"], { env }).stdout).trim();
const hearth = Bun.spawn([binary, "serve"], { env: { ...env, PORT: String(port) }, stdout: "ignore", stderr: "inherit" });
const base = `http://127.0.0.1:${port}`;
await waitFor200(`${base}/health`);
await Bun.sleep(1000);
const idleRss = rssMb(hearth.pid);

const floorPort = freePort();
const floor = Bun.spawn(["bun", join(import.meta.dir, "floor.ts")], { env: { ...process.env, PORT: String(floorPort) }, stdout: "ignore" });
await waitFor200(`http://127.0.0.1:${floorPort}/`);

// The limit prints its port and then its own token.
const limitPort = freePort();
const limit = Bun.spawn(["bun", join(import.meta.dir, "limit.ts")], { env: { ...process.env, PORT: String(limitPort), HEARTH_LIMIT_DB: join(dir, "limit.db") }, stdout: "pipe" });
const limitLines = await readLines(limit.stdout, 2);
const limitBase = `http://127.0.0.1:${limitPort}`;
const limitAuth = { authorization: `Bearer ${limitLines[1]}` };

const auth = { authorization: `Bearer ${token}` };
const post = (url: string, headers: Record<string, string>, body: unknown) =>
  fetch(url, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(body) });
const note = { title: "bench", text: "a note read under load" };
await post(`${base}/api/v1/notes/add`, auth, note);
await post(`${limitBase}/api/v1/notes/add`, limitAuth, note);
for (let i = 0; i < 1000; i += 50) await Promise.all(Array.from({ length: 50 }, (_, j) => post(`${base}/api/v1/tasks/create`, auth, { title: `task ${i + j}`, due: "2027-01-01 09:00" })));

// Each scenario runs in BENCH_ROUNDS rounds (default 5), interleaved, its medians reported.
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const each = Math.max(1, Math.round(seconds / rounds));
const written = JSON.stringify({ title: "bench-write", text: "written under load" });
const getAt = (b: string, headers: Record<string, string>, pid: number): LoadOptions => ({ url: `${b}/api/v1/notes/get?title=bench`, headers, seconds: each, pid });
const addAt = (b: string, headers: Record<string, string>, pid: number): LoadOptions => ({
  url: `${b}/api/v1/notes/add`,
  method: "POST",
  headers: { ...headers, "content-type": "application/json" },
  body: written,
  seconds: each,
  pid,
});

// PostgreSQL, kept as durable as SQLite's WAL with synchronous=NORMAL keeps
// Hearth's data: written to disk (fsync on), commits not waiting for it.
let pg: Pg | undefined;
let pgSkip: string | undefined;
let pgHearth: Served | undefined;
let pgAuth: Record<string, string> = {};
if (want("pg") || want("instances")) {
  if (!installed("postgresql", () => pgBin("initdb") !== null)) pgSkip = "PostgreSQL is not installed (apt-get install -y postgresql needs root)";
  else
    try {
      pg = await launchPg(["fsync=on", "full_page_writes=on", "synchronous_commit=off"]);
    } catch (e) {
      pgSkip = `the cluster did not start: ${(e as Error).message}`;
    }
}
if (pg && want("pg")) {
  try {
    const pgEnv = { ...env, HEARTH_DATA: join(dir, "pg-data"), HEARTH_DATABASE_URL: await pg.database() };
    const made = Bun.spawnSync([binary, "token", "create", "--user", "bench"], { env: pgEnv, stdout: "pipe", stderr: "pipe" });
    if (made.exitCode !== 0) throw new Error(`token create failed: ${made.stderr.toString().trim().split("\n").pop()}`);
    pgAuth = { authorization: `Bearer ${made.stdout.toString().trim()}` };
    pgHearth = await serve([binary], pgEnv);
    const added = await post(`${pgHearth.base}/api/v1/notes/add`, pgAuth, note);
    if (added.status !== 200) throw new Error(`notes/add answered ${added.status}: ${(await added.text()).slice(0, 200)}`);
  } catch (e) {
    pgHearth?.proc.kill();
    pgHearth = undefined;
    pgSkip = `Hearth on PostgreSQL: ${(e as Error).message}`;
  }
}
// The limit on PostgreSQL (bench/pglimit.ts), on a database of its own in the same cluster: it prints its port and then its own token.
let pgLimit: { proc: Bun.Subprocess<"ignore", "pipe", "inherit">; base: string; auth: Record<string, string> } | undefined;
if (pgHearth && pg) {
  try {
    const port = freePort();
    const proc = Bun.spawn(["bun", join(import.meta.dir, "pglimit.ts")], {
      env: { ...process.env, PORT: String(port), HEARTH_LIMIT_DATABASE_URL: await pg.database() },
      stdout: "pipe",
      stderr: "inherit",
    });
    const [, limitToken] = await readLines(proc.stdout, 2);
    pgLimit = { proc, base: `http://127.0.0.1:${port}`, auth: { authorization: `Bearer ${limitToken}` } };
    await post(`${pgLimit.base}/api/v1/notes/add`, pgLimit.auth, note);
  } catch (e) {
    pgHearth.proc.kill();
    pgHearth = undefined;
    pgSkip = `the limit on PostgreSQL: ${(e as Error).message}`;
  }
}
const pgDb = pg && (() => pg.pid());
const pgScenarios: [string, LoadOptions][] =
  pgHearth && pgLimit
    ? [
        ["limit notes/get on PostgreSQL (by hand)", { ...getAt(pgLimit.base, pgLimit.auth, pgLimit.proc.pid), dbPid: pgDb }],
        ["limit notes/add on PostgreSQL (by hand)", { ...addAt(pgLimit.base, pgLimit.auth, pgLimit.proc.pid), dbPid: pgDb }],
        ["notes/get on PostgreSQL", { ...getAt(pgHearth.base, pgAuth, pgHearth.proc.pid), dbPid: pgDb }],
        ["notes/add on PostgreSQL", { ...addAt(pgHearth.base, pgAuth, pgHearth.proc.pid), dbPid: pgDb }],
      ]
    : [];

loadGenerator();
const all: Row[] = await interleaved(
  [
    ["floor (Bun.serve JSON)", { url: `http://127.0.0.1:${floorPort}/`, seconds: each, pid: floor.pid }],
    ["limit notes/get (by hand)", getAt(limitBase, limitAuth, limit.pid)],
    ["limit notes/add (by hand)", addAt(limitBase, limitAuth, limit.pid)],
    ["notes/get (token)", getAt(base, auth, hearth.pid)],
    ["notes/add (token)", addAt(base, auth, hearth.pid)],
    ["tasks/list (1,000 tasks)", { url: `${base}/api/v1/tasks/list`, headers: auth, seconds: each, pid: hearth.pid }],
    ...pgScenarios,
  ],
  rounds,
);
const rows = all.slice(0, 6);
const pgRows = all.slice(6);
const [, limitGet, limitAdd] = rows;
rows[3].limit = limitGet.rps;
rows[4].limit = limitAdd.rps;
const loadedRss = rssMb(hearth.pid);

hearth.kill();
floor.kill();
limit.kill();
pgHearth?.proc.kill();
pgLimit?.proc.kill();
await Promise.all([hearth.exited, floor.exited, limit.exited, pgHearth?.proc.exited, pgLimit?.proc.exited]);

const floorRps = rows[0].rps;
for (const r of all) r.ratio = Math.round((r.rps / floorRps) * 100) / 100;
console.log(`\nHearth benchmark: ${seconds}s per scenario in ${rounds} interleaved rounds (medians), 32 connections, load from ${loadGenerator()}, ${new Date().toISOString()}\n`);
console.log(table(rows, floorRps));
console.log(`\nidle RSS after start: ${idleRss} MB (target < 80); RSS after load: ${loadedRss} MB`);
console.log(`dist/hearth process start to first 200: ${startupMs} ms median of 5 (target < 300)`);
const pct = (a: number, b: number) => `${Math.round((a / b) * 100)}%`;
const [notesGet, notesAdd] = [rows[3], rows[4]];
console.log(
  `notes/get: ${pct(notesGet.rps, limitGet.rps)} of the limit (target >= 80%), ${pct(notesGet.rps, floorRps)} of floor (target >= 50%), p99 ${notesGet.p99} ms (target < 10)`,
);
console.log(`notes/add: ${pct(notesAdd.rps, limitAdd.rps)} of the limit (target >= 70%)`);
if (notesGet.cpu && limitGet.cpu && notesAdd.cpu && limitAdd.cpu)
  console.log(`server CPU per request, the limit's over Hearth's: notes/get ${pct(limitGet.cpu, notesGet.cpu)}, notes/add ${pct(limitAdd.cpu, notesAdd.cpu)}`);

const extra: Record<string, unknown> = {};
if (want("pg")) {
  if (pgRows.length) {
    const [pgLimitGet, pgLimitAdd, pgGet, pgAdd] = pgRows;
    pgGet.limit = pgLimitGet.rps;
    pgAdd.limit = pgLimitAdd.rps;
    console.log(
      `\nOn PostgreSQL beside SQLite and its own limit (bench/pglimit.ts: Bun's SQL client, one prepared statement and one round trip per call; the same load, interleaved with the rows above; database CPU is PostgreSQL's, all its processes):\n${table([notesGet, notesAdd, pgLimitGet, pgLimitAdd, pgGet, pgAdd], floorRps)}`,
    );
    console.log(`on PostgreSQL: notes/get at ${pct(pgGet.rps, pgLimitGet.rps)} of its limit (target >= 80%), notes/add at ${pct(pgAdd.rps, pgLimitAdd.rps)} (target >= 70%)`);
    if (pgGet.cpu && pgLimitGet.cpu && pgAdd.cpu && pgLimitAdd.cpu && pgGet.dbCpu && pgLimitGet.dbCpu && pgAdd.dbCpu && pgLimitAdd.dbCpu)
      console.log(
        `on PostgreSQL, CPU per request, the limit's over Hearth's: notes/get ${pct(pgLimitGet.cpu, pgGet.cpu)} (server), ${pct(pgLimitGet.dbCpu, pgGet.dbCpu)} (database); notes/add ${pct(pgLimitAdd.cpu, pgAdd.cpu)} (server), ${pct(pgLimitAdd.dbCpu, pgAdd.dbCpu)} (database)`,
      );
    console.log(`on PostgreSQL beside SQLite: notes/get at ${pct(pgGet.rps, notesGet.rps)} of SQLite's rate, notes/add at ${pct(pgAdd.rps, notesAdd.rps)}`);
    extra.postgres = { rows: pgRows };
  } else {
    console.log(`\nOn PostgreSQL: skipped: ${pgSkip}`);
    extra.postgres = { skipped: pgSkip };
  }
}
if (want("instances")) {
  const { benchInstances } = await import("./instances.ts");
  const r = await benchInstances({ cmd: [binary], seconds, rounds, postgres: pg ? () => pg.database() : pgSkip, postgresPid: pgDb || undefined });
  console.log("\nThree instances against one (one data folder, state shared through redis-server, wrk a thread per instance; no proxy):");
  if (r.rows.length) console.log(table(r.rows, floorRps));
  for (const s of r.skipped) console.log(s);
  console.log(
    "One Hearth process runs its JavaScript on one core, so on this machine's cores three may do more than one; but wrk, redis-server and the database share the same cores: the rows show what running several costs per request (CPU µs/req, summed over the three) and that they answer together without errors, not how far Hearth scales out on more cores.",
  );
  extra.instances = r;
}
pg?.stop();
rmSync(dir, { recursive: true, force: true });

// The services' own benchmarks, each in its own module; BENCH_QUICK=1 skips them.
{
  if (want("mcp")) {
    const { benchMcp, mcpSummary, mcpTable } = await import("./mcp.ts");
    const r = await benchMcp({ seconds });
    console.log(`\nMCP beside HTTP and the SDK's minimal server:\n${mcpTable(r)}\n${mcpSummary(r)}`);
    extra.mcp = r;
  }
  if (want("policy")) {
    const { benchPolicy, policySummary } = await import("./policy.ts");
    const r = await benchPolicy({ seconds, rounds });
    console.log(`\nThe audit log's and the policy check's cost on notes/get:\n${table(r.rows)}\n${policySummary(r)}`);
    extra.policy = r;
  }
  if (want("upstream")) {
    const { benchUpstream } = await import("./upstream.ts");
    const r = await benchUpstream({ seconds });
    console.log(`\nCached public read beside a database read:\n${table(r.rows)}\ncached weather/air over notes/get: ${r.ratio} (target >= 1); provider asked ${r.providerHits} time(s)`);
    extra.upstream = r;
  }
  if (want("recall")) {
    const { benchRecall } = await import("./recall.ts");
    const r = await benchRecall();
    console.log(`\nrecall/search over ${r.messages} messages: p50 ${r.ms.p50} ms, p99 ${r.ms.p99} ms (target p99 < 20)`);
    extra.recall = r;
  }
  if (want("events")) {
    const { benchEvents, eventsTable } = await import("./events.ts");
    const r = await benchEvents();
    console.log(`\nScheduler:\n${eventsTable(r)}`);
    extra.events = r;
  }
  if (want("growth")) {
    const { benchGrowth, growthSummary, growthTable } = await import("./growth.ts");
    const r = await benchGrowth();
    console.log(`\nCost as one account grows (every account method of the services that keep records, p50 over HTTP):\n${growthTable(r)}\n${growthSummary(r)}`);
    extra.growth = r;
  }
  if (want("dav")) {
    const { benchDav, davTable } = await import("./dav.ts");
    const r = await benchDav();
    console.log(`\nCalDAV (one event's GET and PUT by calendar size; large bodies at once):\n${davTable(r)}`);
    extra.dav = r;
  }
  if (want("views")) {
    const { benchViews, viewsTable } = await import("./views.ts");
    const r = await benchViews();
    console.log(`\nScreens' first load, compressed (target < 150 KB each), time to interactive with the CPU 4× slower (target < 1 s) and Lighthouse's scores (target ≥ 95):\n${viewsTable(r)}`);
    extra.views = r;
  }
  if (want("soak") && existsSync(join(import.meta.dir, "soak.ts"))) {
    const soakModule = "./soak.ts";
    const m = (await import(soakModule)) as Record<string, (arg?: unknown) => unknown>;
    const run = Object.entries(m).find(([k, v]) => k.startsWith("bench") && typeof v === "function")?.[1];
    const show = Object.entries(m).find(([k, v]) => /table/i.test(k) && typeof v === "function")?.[1];
    if (run) {
      const r = await run();
      console.log(`\nSoak:\n${show ? show(r) : JSON.stringify(r, null, 2)}`);
      extra.soak = r;
    }
  }
}

writeFileSync(
  join(import.meta.dir, "results.json"),
  JSON.stringify(
    { at: new Date().toISOString(), seconds, connections: 32, rows, idle_rss_mb: idleRss, loaded_rss_mb: loadedRss, startup_ms: startupMs, startups_ms: starts.map(Math.round), ...extra },
    null,
    2,
  ),
);
// Everything is printed and written. Whatever a part left open (a child's
// pipe, a server's socket) kept the process waiting after its last line, and
// the throwaway PostgreSQL clusters are removed only once it ends.
process.exit(0);

/** The first `n` lines a process prints. */
async function readLines(stream: ReadableStream<Uint8Array>, n: number): Promise<string[]> {
  const reader = stream.getReader();
  const utf8 = new TextDecoder();
  let text = "";
  while (text.split("\n").length <= n) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`the process ended after printing: ${text}`);
    text += utf8.decode(value, { stream: true });
  }
  reader.releaseLock();
  return text.split("\n").slice(0, n);
}
