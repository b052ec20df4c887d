// Shared pieces of the benchmark: processes, load, measurements.
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Row {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  ratio?: number;
  /** The req/s of the hand-written limit this row is held against (bench/limit.ts). */
  limit?: number;
  /** CPU time the server process spent per request, in µs: on a machine others share, steadier than the rate. */
  cpu?: number;
  /** CPU time the database server (PostgreSQL, all its processes) spent per request, in µs. */
  dbCpu?: number;
}

export function freePort(): number {
  const s = Bun.serve({ port: 0, fetch: () => new Response() });
  const p = s.port!;
  s.stop(true);
  return p;
}

export function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Math.round((Number(m[1]) / 1024) * 10) / 10 : NaN;
}

export async function waitFor200(url: string, timeoutMs = 10_000): Promise<number> {
  const start = performance.now();
  while (performance.now() - start < timeoutMs) {
    try {
      if ((await fetch(url)).status === 200) return performance.now() - start;
    } catch {}
    await Bun.sleep(2);
  }
  throw new Error(`${url} never answered 200`);
}

/**
 * The load generator: wrk, a separate native process, when it is installed
 * (installed from Debian's packages when missing and we may, as the tests
 * install Chromium), since a generator inside this process would share the
 * two cores with the server under test and count its own cost in the result.
 * Without it, autocannon in-process, said once.
 */
let generator: "wrk" | "autocannon" | undefined;
export function loadGenerator(): "wrk" | "autocannon" {
  if (generator) return generator;
  generator = installed("wrk", () => Bun.which("wrk") !== null) ? "wrk" : "autocannon";
  if (generator === "autocannon") console.error("bench: wrk is not installed and could not be (apt-get install -y wrk needs root): using autocannon in this process, which shares the cores with the server, so rates read low");
  return generator;
}

/** Whether `present()` holds, installing Debian's package `pkg` first when it does not and we may (as root, with apt-get). */
export function installed(pkg: string, present: () => boolean): boolean {
  if (present()) return true;
  if (process.getuid?.() !== 0 || !Bun.which("apt-get")) return false;
  const install = (cmd: string[]) => Bun.spawnSync(cmd, { stdout: "ignore", stderr: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } }).exitCode === 0;
  console.error(`bench: installing ${pkg} (apt-get install -y ${pkg})`);
  if (!install(["apt-get", "install", "-y", pkg])) install(["apt-get", "update"]) && install(["apt-get", "install", "-y", pkg]);
  return present();
}

export interface LoadOptions {
  url: string;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  /** Bodies sent in turn instead of one (JSON-RPC requests each with its own id). */
  bodies?: string[];
  connections?: number;
  seconds: number;
  /** The server's process id (or ids, summed), to measure the CPU time it spends per request. */
  pid?: number | number[];
  /** The database server's main process id, asked when the load starts: its CPU time and its children's is counted too. */
  dbPid?: () => number;
  /**
   * Every server answering the load, as host:port, the URL's among them: wrk
   * runs one thread per server, its connections shared evenly between them,
   * and reports them as one.
   */
  hosts?: string[];
}

const TICKS_PER_S = Number(new TextDecoder().decode(Bun.spawnSync(["getconf", "CLK_TCK"]).stdout).trim()) || 100;

/** CPU time a process has used so far (all its threads), in µs, or NaN where /proc is not there. */
export function cpuUs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    // utime and stime are fields 14 and 15 of stat; 12 and 13 after the name.
    return ((Number(fields[11]) + Number(fields[12])) / TICKS_PER_S) * 1e6;
  } catch {
    return NaN;
  }
}

/** CPU time of the processes `pid` names, summed. */
function serverCpu(pid: number | number[]): number {
  return (Array.isArray(pid) ? pid : [pid]).reduce((n, p) => n + cpuUs(p), 0);
}

/**
 * CPU time of a process and its children, in µs: those running (their own
 * time) and those it has reaped (counted in its cutime and cstime), as
 * PostgreSQL's postmaster and its backends.
 */
export function treeCpuUs(pid: number): number {
  const stat = (p: number | string) => readFileSync(`/proc/${p}/stat`, "utf8").split(") ")[1].split(" ");
  try {
    const own = stat(pid);
    // After the name: state is field 0, ppid 1, utime 11, stime 12, cutime 13, cstime 14.
    let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
    for (const d of readdirSync("/proc")) {
      if (!/^\d+$/.test(d)) continue;
      try {
        const f = stat(d);
        if (Number(f[1]) === pid) ticks += Number(f[11]) + Number(f[12]);
      } catch {}
    }
    return (ticks / TICKS_PER_S) * 1e6;
  } catch {
    return NaN;
  }
}

export async function load(name: string, opts: LoadOptions): Promise<Row> {
  // Checked once first, so the rate is of answers and not of refusals.
  const probe = await fetch(opts.url, { method: opts.method ?? "GET", headers: opts.headers, body: opts.bodies?.[0] ?? opts.body });
  if (probe.status !== 200) throw new Error(`${name}: the probe was answered ${probe.status}: ${(await probe.text()).slice(0, 300)}`);
  await probe.arrayBuffer();
  return loadGenerator() === "wrk" ? wrk(name, opts) : cannon(name, opts);
}

/** A Lua string that holds `s` as it is. */
export function luaString(s: string): string {
  let eq = "";
  while (s.includes(`]${eq}]`)) eq += "=";
  return `[${eq}[${s}]${eq}]`;
}

/** wrk's script for a request: method, headers and body set once; several bodies prebuilt and sent in turn. */
export function wrkScript(opts: LoadOptions): string {
  const lines = [`wrk.method = ${luaString(opts.method ?? "GET")}`];
  for (const [k, v] of Object.entries(opts.headers ?? {})) lines.push(`wrk.headers[ ${luaString(k)} ] = ${luaString(v)}`);
  if (opts.bodies?.length) {
    lines.push(`local bodies = {${opts.bodies.map(luaString).join(",\n")}}`);
    lines.push("local reqs, i = {}, 0");
    lines.push("init = function() for n, b in ipairs(bodies) do reqs[n] = wrk.format(nil, nil, nil, b) end end");
    lines.push("request = function() i = i % #reqs + 1; return reqs[i] end");
  } else if (opts.body !== undefined) lines.push(`wrk.body = ${luaString(opts.body)}`);
  if (opts.hosts?.length) {
    // Each thread is given the next server's address (wrk's setup runs once per thread, before it connects).
    lines.push(`local hosts, n = {${opts.hosts.map(luaString).join(", ")}}, 0`);
    lines.push("setup = function(thread) n = n + 1; local host, port = hosts[(n - 1) % #hosts + 1]:match('^(.*):(%d+)$'); thread.addr = wrk.lookup(host, port)[1] end");
  }
  return lines.join("\n") + "\n";
}

const MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };

/** Reads wrk's report: the rate, the 50th and 99th percentiles (--latency), and failures (socket errors, non-2xx). */
export function parseWrk(out: string): { rps: number; p50: number; p99: number; errors: number } {
  const rate = /Requests\/sec:\s+([\d.]+)/.exec(out);
  if (!rate) throw new Error(`wrk gave no rate:\n${out}`);
  const pct = (p: string) => {
    const m = new RegExp(`^\\s*${p}%\\s+([\\d.]+)(us|ms|s|m)\\s*$`, "m").exec(out);
    return m ? Math.round(Number(m[1]) * MS[m[2]] * 100) / 100 : NaN;
  };
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(out);
  const errors = (sock ? sock.slice(1).reduce((n, x) => n + Number(x), 0) : 0) + (non2xx ? Number(non2xx[1]) : 0);
  return { rps: Math.round(Number(rate[1])), p50: pct("50"), p99: pct("99"), errors };
}

async function wrk(name: string, opts: LoadOptions): Promise<Row> {
  const script = join(tmpdir(), `hearth-bench-${process.pid}-${Math.random().toString(36).slice(2)}.lua`);
  writeFileSync(script, wrkScript(opts));
  try {
    // One thread: wrk serves 32 connections from one core with room to spare, leaving the other to the server.
    // Several servers: a thread for each, the connections rounded up to an even share.
    const threads = opts.hosts?.length ?? Number(process.env.BENCH_WRK_THREADS ?? 1);
    const connections = Math.ceil((opts.connections ?? 32) / threads) * threads;
    const before = opts.pid ? serverCpu(opts.pid) : NaN;
    const dbPid = opts.dbPid?.();
    const dbBefore = dbPid ? treeCpuUs(dbPid) : NaN;
    const p = Bun.spawn(["wrk", "-t", String(threads), "-c", String(connections), "-d", `${opts.seconds}s`, "--latency", "-s", script, opts.url], { stdout: "pipe", stderr: "pipe" });
    const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
    if ((await p.exited) !== 0) throw new Error(`wrk failed: ${err || out}`);
    const row: Row = { name, ...parseWrk(out) };
    const total = /(\d+) requests in/.exec(out);
    if (opts.pid && total) row.cpu = Math.round(((serverCpu(opts.pid) - before) / Number(total[1])) * 10) / 10;
    if (dbPid && total) row.dbCpu = Math.round(((treeCpuUs(dbPid) - dbBefore) / Number(total[1])) * 10) / 10;
    return row;
  } finally {
    rmSync(script, { force: true });
  }
}

async function cannon(name: string, opts: LoadOptions): Promise<Row> {
  if (opts.hosts && opts.hosts.length > 1) throw new Error(`${name}: load spread over several servers needs wrk`);
  const { default: autocannon } = await import("autocannon");
  const before = opts.pid ? serverCpu(opts.pid) : NaN;
  const result = await autocannon({
    url: opts.url,
    method: opts.method ?? "GET",
    headers: opts.headers,
    body: opts.body,
    connections: opts.connections ?? 32,
    duration: opts.seconds,
    pipelining: 1,
    requests: opts.bodies?.map((body) => ({ method: opts.method ?? "POST", body })),
  });
  const errors = result.errors + result.timeouts + (result.non2xx ?? 0);
  const row: Row = { name, rps: Math.round(result.requests.average), p50: result.latency.p50, p99: result.latency.p99, errors };
  if (opts.pid && result.requests.total) row.cpu = Math.round(((serverCpu(opts.pid) - before) / result.requests.total) * 10) / 10;
  return row;
}

/**
 * Runs each scenario `rounds` times, interleaved, and gives each its medians
 * (errors summed): a drift in the machine's load then touches every row alike.
 */
export async function interleaved(scenarios: [string, LoadOptions][], rounds: number): Promise<Row[]> {
  return medianRows(scenarios, await eachRound(scenarios, rounds));
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Each scenario's row of every round, `runs[scenario][round]`: the scenarios
 * run one after another within a round, in turn forwards and backwards with
 * `alternate` (so the first and the last of a round change places, and a
 * scenario is never always the one run just after another).
 */
export async function eachRound(scenarios: [string, LoadOptions][], rounds: number, o: { alternate?: boolean } = {}): Promise<Row[][]> {
  const runs: Row[][] = scenarios.map(() => []);
  for (let r = 0; r < rounds; r++) {
    const order = scenarios.map((_, i) => i);
    if (o.alternate && r % 2) order.reverse();
    for (const i of order) runs[i][r] = await load(...scenarios[i]);
  }
  return runs;
}

/** Each scenario's medians over its rounds (errors summed). */
export function medianRows(scenarios: [string, LoadOptions][], runs: Row[][]): Row[] {
  return runs.map((rs, i) => {
    const row: Row = { name: scenarios[i][0], rps: median(rs.map((x) => x.rps)), p50: median(rs.map((x) => x.p50)), p99: median(rs.map((x) => x.p99)), errors: rs.reduce((n, x) => n + x.errors, 0) };
    if (rs.every((x) => x.cpu !== undefined)) row.cpu = median(rs.map((x) => x.cpu!));
    if (rs.every((x) => x.dbCpu !== undefined)) row.dbCpu = median(rs.map((x) => x.dbCpu!));
    return row;
  });
}

export function table(rows: Row[], floor?: number): string {
  const limits = rows.some((r) => r.limit);
  const cpu = rows.some((r) => r.cpu !== undefined);
  const dbCpu = rows.some((r) => r.dbCpu !== undefined);
  const head = ["scenario", "req/s", "p50 ms", "p99 ms", "errors", "vs floor", ...(limits ? ["vs limit"] : []), ...(cpu ? ["server CPU µs/req"] : []), ...(dbCpu ? ["database CPU µs/req"] : [])];
  const pct = (a: number, b?: number) => (b ? `${Math.round((a / b) * 100)}%` : "");
  const body = rows.map((r) => [
    r.name,
    String(r.rps),
    String(r.p50),
    String(r.p99),
    String(r.errors),
    pct(r.rps, floor),
    ...(limits ? [pct(r.rps, r.limit)] : []),
    ...(cpu ? [r.cpu === undefined ? "" : String(r.cpu)] : []),
    ...(dbCpu ? [r.dbCpu === undefined ? "" : String(r.dbCpu)] : []),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`;
  return [line(head), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...body.map(line)].join("\n");
}

/** A stand-in provider on loopback answering every request with one recorded payload, counting the requests. */
export function standInProvider(payload: string): { port: number; hits(): number; stop(): void } {
  let hits = 0;
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch() {
      hits++;
      return new Response(payload, { headers: { "content-type": "application/json" } });
    },
  });
  return { port: server.port!, hits: () => hits, stop: () => void server.stop(true) };
}

export interface Served {
  base: string;
  /** host:port, as LoadOptions.hosts takes it. */
  host: string;
  proc: ReturnType<typeof Bun.spawn>;
}

/**
 * `hearth serve` on a free loopback port, once it answers /health; when it
 * ends or stays silent first, an error holding the end of what it printed
 * (the reason it did not start).
 */
export async function serve(cmd: string[], env: Record<string, string | undefined>, timeoutMs = 180_000): Promise<Served> {
  const port = freePort();
  const proc = Bun.spawn([...cmd, "serve"], { env: { ...env, PORT: String(port), HOST: "127.0.0.1" }, stdout: "ignore", stderr: "pipe" });
  const base = `http://127.0.0.1:${port}`;
  const up = await Promise.race([waitFor200(`${base}/health`, timeoutMs).then(() => true, () => false), proc.exited.then(() => false)]);
  if (up) return { base, host: `127.0.0.1:${port}`, proc };
  proc.kill(9);
  await proc.exited;
  const said = (await new Response(proc.stderr as ReadableStream<Uint8Array>).text()).trim().split("\n").slice(-3).join(" / ");
  throw new Error(`hearth serve did not start${said ? `: ${said}` : ""}`);
}

/** This process's CPU time so far, user and system, in µs. */
export function ownCpuUs(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

/**
 * CPU per request, in µs, of a handler called in this process (no sockets):
 * `n` requests made by `make`, `batch` at a time, each answer read whole.
 * `after` runs once each batch is answered, outside the time counted (a check).
 */
export async function inProcessCpuUs(
  make: () => Request,
  run: (req: Request) => Response | Promise<Response>,
  n: number,
  batch: number,
  after?: (first: Response) => void | Promise<void>,
): Promise<number> {
  let spent = 0;
  for (let done = 0; done < n; done += batch) {
    const reqs = Array.from({ length: batch }, make);
    const t = ownCpuUs();
    const answers = await Promise.all(reqs.map(run));
    await Promise.all(answers.map((a) => a.arrayBuffer()));
    spent += ownCpuUs() - t;
    await after?.(answers[0]);
  }
  return spent / n;
}
