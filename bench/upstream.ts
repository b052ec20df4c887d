// Cached public reads: weather/air answered from the upstream cache beside
// notes/get (a database read) on the same instance under the same load. The
// provider is a loopback stand-in replaying a recorded Open-Meteo answer, so
// the run reaches no one; after the first request it should not be asked again.
//
//   bun bench/upstream.ts       prints the table (BENCH_SECONDS, default 10 per scenario)
//   import { benchUpstream }    returns the numbers, for `bun run bench`
import autocannon from "autocannon";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { standInProvider, freePort } from "./lib.ts";

export interface UpstreamBenchRow {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

export interface UpstreamBenchResult {
  seconds: number;
  connections: number;
  rows: UpstreamBenchRow[];
  /** Cached weather/air throughput over notes/get throughput (target >= 1). */
  ratio: number;
  /** Requests that reached the stand-in provider during the whole run. */
  providerHits: number;
}

const root = join(import.meta.dir, "..");


async function ready(url: string) {
  for (let i = 0; i < 500; i++) {
    try {
      if ((await fetch(url)).status === 200) return;
    } catch {}
    await Bun.sleep(20);
  }
  throw new Error(`${url} never answered 200`);
}

async function run(name: string, url: string, headers: Record<string, string>, seconds: number, connections: number): Promise<UpstreamBenchRow> {
  const r = await autocannon({ url, headers, connections, duration: seconds, pipelining: 1 });
  return { name, rps: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.timeouts + (r.non2xx ?? 0) };
}

export async function benchUpstream(o: { seconds?: number; connections?: number } = {}): Promise<UpstreamBenchResult> {
  const seconds = o.seconds ?? Number(process.env.BENCH_SECONDS ?? 10);
  const connections = o.connections ?? 32;
  const payload = readFileSync(join(root, "test/fixtures/open-meteo/air-quality.json"), "utf8");
  const provider = standInProvider(payload);
  const dir = mkdtempSync(join(tmpdir(), "hearth-bench-upstream-"));
  const port = freePort();
  const env = {
    ...process.env,
    HEARTH_DATA: join(dir, "data"),
    HEARTH_LOG: "off",
    HOST: "127.0.0.1",
    PORT: String(port),
    HEARTH_RATE_READS: "0",
    HEARTH_RATE_WRITES: "0",
    OPEN_METEO_AIR_URL: `http://127.0.0.1:${provider.port}`,
  };
  const cli = join(root, "core/cli/main.ts");
  const token = new TextDecoder().decode(Bun.spawnSync([process.execPath, cli, "token", "create", "--user", "bench"], { env }).stdout).trim();
  const server = Bun.spawn([process.execPath, cli, "serve"], { env, stdout: "ignore", stderr: "inherit" });
  const base = `http://127.0.0.1:${port}`;
  try {
    await ready(`${base}/health`);
    const auth = { authorization: `Bearer ${token}` };
    await fetch(`${base}/api/v1/notes/add`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ title: "bench", text: "a note read under load" }),
    });
    const air = `${base}/api/v1/weather/air?lat=52.55&lon=13.45`;
    // Per-caller rate limits are off: this measures the read path, not the limiter.
    // Warm the cache: the first call fetches, the rest are served from it.
    const first = await fetch(air);
    if (first.status !== 200) throw new Error(`weather/air answered ${first.status}: ${await first.text()}`);
    const rows = [
      await run("notes/get (token, database read)", `${base}/api/v1/notes/get?title=bench`, auth, seconds, connections),
      await run("weather/air (no token, cached)", air, {}, seconds, connections),
    ];
    return { seconds, connections, rows, ratio: Math.round((rows[1].rps / rows[0].rps) * 100) / 100, providerHits: provider.hits() };
  } finally {
    server.kill();
    await server.exited;
    provider.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const r = await benchUpstream();
  console.log(`\nCached public read beside a database read: ${r.seconds}s per scenario, ${r.connections} connections\n`);
  for (const row of r.rows)
    console.log(`${row.name.padEnd(36)} ${String(row.rps).padStart(7)} req/s   p50 ${row.p50} ms   p99 ${row.p99} ms   errors ${row.errors}`);
  console.log(`\nweather/air cached / notes/get: ${r.ratio} (target >= 1); provider asked ${r.providerHits} time(s)`);
}
