// Soak: a mixed workload held for a while on one instance: database reads,
// writes, MCP tool calls over a session and a cached public read (a loopback
// stand-in replays a recorded Open-Meteo answer), from many connections at
// once. The load comes from wrk, a separate native process, walking the mix
// in a Lua script that checks every answer, so the generator does not take
// the server's cores or count its own garbage in the latencies. Reports
// errors, the latency percentiles, the requests sent of each kind, and the
// server's RSS sampled each second, to show whether memory stays flat.
//
//   bun bench/soak.ts            prints the report (SOAK_SECONDS, default 60; SOAK_CONNECTIONS, default 64; SOAK_ONLY, one kind alone)
//   import { soak }              returns the numbers; `bun run bench` runs it as benchSoak (BENCH_ONLY=soak for it alone)
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cpuUs, freePort, loadGenerator, luaString, parseWrk, rssMb, standInProvider } from "./lib.ts";

export interface SoakKind {
  name: string;
  /** Requests of this kind sent. */
  requests: number;
}

export interface SoakResult {
  seconds: number;
  connections: number;
  requests: number;
  rps: number;
  /** Socket errors and answers that were not a 200 holding a result (an MCP tool's error included). */
  errors: number;
  /** A few of the bad answers, for diagnosis. */
  errorSamples: string[];
  p50: number;
  p99: number;
  p999: number;
  max: number;
  /** CPU time the server spent per request, in µs. */
  cpuPerRequest: number;
  kinds: SoakKind[];
  /** Server RSS in MB, one sample per second from the start of the load. */
  rss: { s: number; mb: number }[];
  /** Steady-state RSS growth in percent (target <= 10): see `growth`. */
  rssGrowthPct: number;
  /** Requests that reached the stand-in provider (the cached read should ask it once). */
  providerHits: number;
}

const root = join(import.meta.dir, "..");

/** Seconds of load before RSS is taken as settled: the caches, the JIT and the heap grow to their working size first. */
const WARM_UP_S = 10;

/**
 * RSS growth over the run: the median of the last third of the samples over
 * the median of the first ten seconds after the warm-up, in percent. A single
 * sample (the largest, or the last) lands wherever the collector happens to
 * be in its cycle, so it swings by more than the target between runs of the
 * same code; medians of windows compare the level memory settles at early
 * against the level it settles at late, which a leak raises and GC timing
 * does not. The largest sample is still in the report for a reader to see.
 */
export function growth(rss: { s: number; mb: number }[]): number {
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const settled = rss.filter((r) => r.s > WARM_UP_S);
  if (settled.length < 6) return NaN;
  const early = median(settled.filter((r) => r.s <= WARM_UP_S + 10).map((r) => r.mb));
  const late = median(settled.slice(-Math.ceil(settled.length / 3)).map((r) => r.mb));
  return Math.round(((late - early) / early) * 1000) / 10;
}

/**
 * wrk's script for the mix: every request prebuilt, sent in turn; each answer
 * checked (a 200 holding a result and no tool error), the bad ones counted
 * with a few kept, and the sent requests counted by kind. `done` prints the
 * counts, the 99.9th percentile and the largest latency (µs) on tagged lines.
 */
export function soakScript(requests: { kind: number; method: string; path: string; headers: Record<string, string>; body?: string }[]): string {
  const kinds = Math.max(...requests.map((r) => r.kind));
  const table = (h: Record<string, string>) => `{${Object.entries(h).map(([k, v]) => `[ ${luaString(k)} ] = ${luaString(v)}`).join(", ")}}`;
  return `local specs = {
${requests.map((r) => `  {${r.kind}, ${luaString(r.method)}, ${luaString(r.path)}, ${table(r.headers)}, ${r.body === undefined ? "nil" : luaString(r.body)}}`).join(",\n")}
}
local reqs, i = {}, 0
counts = {${Array(kinds).fill(0).join(", ")}}
bad = 0
samples = ""
local kept = 0
local kindOf = {}
init = function()
  for n, s in ipairs(specs) do reqs[n] = wrk.format(s[2], s[3], s[4], s[5]); kindOf[n] = s[1] end
end
request = function()
  i = i % #reqs + 1
  counts[kindOf[i]] = counts[kindOf[i]] + 1
  return reqs[i]
end
response = function(status, headers, body)
  if status ~= 200 or not string.find(body, '"result"', 1, true) or string.find(body, '"isError":true', 1, true) then
    bad = bad + 1
    if kept < 10 then
      kept = kept + 1
      samples = samples .. "SOAK-ERR " .. status .. " " .. string.gsub(string.sub(body, 1, 160), "\\n", " ") .. "\\n"
    end
  end
end
local threads = {}
setup = function(t) table.insert(threads, t) end
done = function(summary, latency, requests)
  local b, sum, text = 0, {}, ""
  for k = 1, ${kinds} do sum[k] = 0 end
  for _, t in ipairs(threads) do
    b = b + t:get("bad")
    text = text .. t:get("samples")
    local c = t:get("counts")
    for k = 1, ${kinds} do sum[k] = sum[k] + c[k] end
  end
  io.write("SOAK-COUNTS " .. b .. " " .. table.concat(sum, " ") .. "\\n")
  io.write("SOAK-TAIL " .. latency:percentile(99.9) .. " " .. latency.max .. "\\n")
  io.write(text)
end
`;
}

async function runWrk(script: string, url: string, connections: number, seconds: number): Promise<{ text: string }> {
  const file = join(tmpdir(), `hearth-soak-${process.pid}.lua`);
  writeFileSync(file, script);
  try {
    // One thread, as the other rows: it drives 64 connections from one core, leaving the other to the server.
    const p = Bun.spawn(["wrk", "-t", process.env.BENCH_WRK_THREADS ?? "1", "-c", String(connections), "-d", `${seconds}s`, "--timeout", "5s", "--latency", "-s", file, url], { stdout: "pipe", stderr: "pipe" });
    const [text, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
    // wrk reports a script's error on stderr and carries on without it, so anything there fails the run.
    if ((await p.exited) !== 0 || err.trim() || !text.includes("SOAK-COUNTS ")) throw new Error(`wrk failed: ${err || text}`);
    return { text };
  } finally {
    rmSync(file, { force: true });
  }
}

export async function soak(o: { seconds?: number; connections?: number; binary?: string } = {}): Promise<SoakResult> {
  if (loadGenerator() !== "wrk") throw new Error("the soak needs wrk (apt-get install wrk)");
  const seconds = o.seconds ?? Number(process.env.SOAK_SECONDS ?? 60);
  const connections = o.connections ?? Number(process.env.SOAK_CONNECTIONS ?? 64);
  const payload = readFileSync(join(root, "test/fixtures/open-meteo/air-quality.json"), "utf8");
  const provider = standInProvider(payload);
  const dir = mkdtempSync(join(tmpdir(), "hearth-soak-"));
  const port = freePort();
  const env = {
    ...process.env,
    HEARTH_DATA: join(dir, "data"),
    HEARTH_LOG: "off",
    HEARTH_COLLECTORS: "off",
    HEARTH_METERING: "off",
    HOST: "127.0.0.1",
    PORT: String(port),
    HEARTH_RATE_READS: "0",
    HEARTH_RATE_WRITES: "0",
    HEARTH_RATE_PRICED: "0",
    OPEN_METEO_AIR_URL: `http://127.0.0.1:${provider.port}`,
  };
  const cmd = o.binary ? [o.binary] : [process.execPath, join(root, "core/cli/main.ts")];
  const token = new TextDecoder().decode(Bun.spawnSync([...cmd, "token", "create", "--user", "soak"], { env }).stdout).trim();
  const server = Bun.spawn([...cmd, "serve"], { env, stdout: "ignore", stderr: "inherit" });
  const base = `http://127.0.0.1:${port}`;
  try {
    for (let i = 0; ; i++) {
      const up = await fetch(`${base}/health`).then((r) => r.ok).catch(() => false);
      if (up) break;
      if (i > 500) throw new Error("the instance never came up");
      await Bun.sleep(20);
    }
    const auth = { authorization: `Bearer ${token}` };
    const json = { ...auth, "content-type": "application/json" };
    for (let i = 0; i < 50; i++)
      await fetch(`${base}/api/v1/notes/add`, { method: "POST", headers: json, body: JSON.stringify({ title: `soak ${i}`, text: `a note read under load, number ${i}` }) });
    const mcpHeaders = { ...json, accept: "application/json, text/event-stream", "mcp-protocol-version": LATEST_PROTOCOL_VERSION };
    const init = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: mcpHeaders,
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "soak", version: "1" } } }),
    });
    const session = init.headers.get("mcp-session-id");
    await init.text();
    if (!session) throw new Error(`initialize gave no session (${init.status})`);
    const withSession = { ...mcpHeaders, "mcp-session-id": session };
    await fetch(`${base}/mcp`, { method: "POST", headers: withSession, body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) });
    const air = `${base}/api/v1/weather/air?lat=52.55&lon=13.45`;
    const warm = await fetch(air);
    if (warm.status !== 200) throw new Error(`weather/air answered ${warm.status}: ${await warm.text()}`);

    // Each kind: its share of the mix and one request of it (`i` varies the title and the JSON-RPC id).
    type Spec = { method: "GET" | "POST"; path: string; headers: Record<string, string>; body?: string };
    const kinds: { name: string; weight: number; make: (i: number) => Spec }[] = [
      { name: "read notes/get", weight: 35, make: (i) => ({ method: "GET", path: `/api/v1/notes/get?title=soak%20${i % 50}`, headers: auth }) },
      { name: "read notes/list", weight: 5, make: () => ({ method: "GET", path: "/api/v1/notes/list", headers: auth }) },
      // Titles repeat, so the table stays a fixed size and memory measures the server, not the data.
      { name: "write notes/add", weight: 15, make: (i) => ({ method: "POST", path: "/api/v1/notes/add", headers: json, body: JSON.stringify({ title: `w ${i % 20}`, text: `written at ${i}` }) }) },
      {
        name: "mcp tools/call notes_get",
        weight: 20,
        make: (i) => ({
          method: "POST",
          path: "/mcp",
          headers: withSession,
          body: JSON.stringify({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "notes_get", arguments: { title: `soak ${i % 50}` } } }),
        }),
      },
      { name: "cached weather/air (public)", weight: 25, make: () => ({ method: "GET", path: "/api/v1/weather/air?lat=52.55&lon=13.45", headers: {} }) },
    ];
    // SOAK_ONLY=<part of a kind's name> runs that kind alone at the same concurrency, to see which kind makes a tail.
    const only = process.env.SOAK_ONLY;
    const wheel: number[] = kinds.flatMap((k, i) => (only && !k.name.includes(only) ? [] : Array.from({ length: k.weight }, () => i)));
    if (!wheel.length) throw new Error(`no kind in the mix is named like ${only}`);
    // The mix as a fixed sequence each connection walks through in turn; 37 is prime to the wheel's 100, so the kinds interleave.
    const sequence = Array.from({ length: 1000 }, (_, i) => wheel[(i * 37) % wheel.length]);

    const rss: { s: number; mb: number }[] = [];
    const before = cpuUs(server.pid);
    const started = performance.now();
    const sampler = setInterval(() => rss.push({ s: Math.round((performance.now() - started) / 1000), mb: rssMb(server.pid) }), 1000);
    const out = await runWrk(soakScript(sequence.map((k, i) => ({ kind: k + 1, ...kinds[k].make(i) }))), base, connections, seconds);
    clearInterval(sampler);
    const cpu = cpuUs(server.pid) - before;
    const report = parseWrk(out.text);
    const line = (tag: string) => out.text.split("\n").filter((l) => l.startsWith(`${tag} `)).map((l) => l.slice(tag.length + 1));
    const [bad, ...counts] = (line("SOAK-COUNTS")[0] ?? "").split(" ").map(Number);
    const [p999, max] = (line("SOAK-TAIL")[0] ?? "").split(" ").map((x) => Math.round(Number(x) / 10) / 100);
    const total = counts.reduce((n, x) => n + x, 0);
    // wrk counts non-2xx answers in its report and the script counts them among the bad answers too, so only its socket errors are added.
    const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out.text);
    const socketErrors = sock ? sock.slice(1).reduce((n, x) => n + Number(x), 0) : 0;
    const rssGrowthPct = growth(rss);
    return {
      seconds,
      connections,
      requests: total,
      rps: report.rps,
      errors: bad + socketErrors,
      errorSamples: line("SOAK-ERR").slice(0, 10),
      p50: report.p50,
      p99: report.p99,
      p999,
      max,
      cpuPerRequest: total ? Math.round((cpu / total) * 10) / 10 : NaN,
      kinds: kinds.map((k, i) => ({ name: k.name, requests: counts[i] ?? 0 })),
      rss,
      rssGrowthPct,
      providerHits: provider.hits(),
    };
  } finally {
    server.kill();
    await server.exited;
    provider.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function soakReport(r: SoakResult): string {
  const every = Math.max(1, Math.ceil(r.rss.length / 12));
  const rssLine = r.rss.filter((_, i) => i % every === 0 || i === r.rss.length - 1).map((s) => `${s.s}s ${s.mb}`).join(", ");
  const largest = Math.max(...r.rss.map((s) => s.mb));
  return [
    `soak: ${r.seconds} s at ${r.connections} connections under wrk, ${r.rps} req/s, server CPU ${r.cpuPerRequest} µs/req`,
    `mix sent: ${r.kinds.map((k) => `${k.name} ${k.requests}`).join(", ")}`,
    `errors ${r.errors} (target 0); p50 ${r.p50} ms, p99 ${r.p99} ms (target < 25), p99.9 ${r.p999} ms, max ${r.max} ms`,
    `RSS MB ${rssLine} (largest ${largest}); steady-state growth ${r.rssGrowthPct}% (target <= 10); provider asked ${r.providerHits} time(s)`,
    ...(r.errorSamples.length ? ["error samples:", ...r.errorSamples.map((s) => `  ${s}`)] : []),
  ].join("\n");
}

/** The names `bun run bench` looks for: a bench* function to run and a *table function to print it. */
export const benchSoak = soak;
export const soakTable = soakReport;

if (import.meta.main) console.log(soakReport(await soak()));
