// `bun run bench`: Hearth against the floor (a bare Bun.serve JSON endpoint)
// under the same load, plus idle memory and start-up time of dist/hearth.
// BENCH_SECONDS sets each scenario's length (default 10).
import { mkdtempSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, load, rssMb, table, waitFor200, type Row } from "./lib.ts";

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

const auth = { authorization: `Bearer ${token}` };
const post = (path: string, body: unknown) =>
  fetch(`${base}/api/v1/${path}`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify(body) });
await post("notes/add", { title: "bench", text: "a note read under load" });
for (let i = 0; i < 1000; i += 50) await Promise.all(Array.from({ length: 50 }, (_, j) => post("tasks/create", { title: `task ${i + j}`, due: "2027-01-01 09:00" })));

const rows: Row[] = [];
rows.push(await load("floor (Bun.serve JSON)", { url: `http://127.0.0.1:${floorPort}/`, seconds }));
rows.push(await load("notes/get (token)", { url: `${base}/api/v1/notes/get?title=bench`, headers: auth, seconds }));
rows.push(
  await load("notes/add (token)", {
    url: `${base}/api/v1/notes/add`,
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ title: "bench-write", text: "written under load" }),
    seconds,
  }),
);
rows.push(await load("tasks/list (1,000 tasks)", { url: `${base}/api/v1/tasks/list`, headers: auth, seconds }));
const loadedRss = rssMb(hearth.pid);

hearth.kill();
floor.kill();
await Promise.all([hearth.exited, floor.exited]);
rmSync(dir, { recursive: true, force: true });

const floorRps = rows[0].rps;
for (const r of rows) r.ratio = Math.round((r.rps / floorRps) * 100) / 100;
console.log(`\nHearth benchmark: ${seconds}s per scenario, 32 connections, ${new Date().toISOString()}\n`);
console.log(table(rows, floorRps));
console.log(`\nidle RSS after start: ${idleRss} MB (target < 80); RSS after load: ${loadedRss} MB`);
console.log(`dist/hearth process start to first 200: ${startupMs} ms median of 5 (target < 300)`);
const notesGet = rows[1];
console.log(
  `notes/get: ${Math.round((notesGet.rps / floorRps) * 100)}% of floor (target >= 50%), p99 ${notesGet.p99} ms (target < 10)`,
);
writeFileSync(
  join(import.meta.dir, "results.json"),
  JSON.stringify({ at: new Date().toISOString(), seconds, connections: 32, rows, idle_rss_mb: idleRss, loaded_rss_mb: loadedRss, startup_ms: startupMs, startups_ms: starts.map(Math.round) }, null, 2),
);
