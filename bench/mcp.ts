// MCP throughput: tools/call notes_get over /mcp (with a session, and
// stateless) beside HTTP GET notes/get on the same instance, and beside the
// SDK's own minimal Web-standard example server (a fresh McpServer and
// transport per request, one trivial tool) on the same machine in the same run.
//
//   bun bench/mcp.ts            prints the table (BENCH_SECONDS per scenario, default 10, in BENCH_ROUNDS interleaved rounds, default 5)
//   import { benchMcp }         returns the rows, for `bun run bench`
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, load as loadWith } from "./lib.ts";

export interface McpBenchRow {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** CPU time the server spent per request, in µs. */
  cpu?: number;
}

export interface McpBenchResult {
  /** Seconds per scenario in all, split over the rounds. */
  seconds: number;
  connections: number;
  rounds: number;
  /** Medians over the rounds. */
  rows: McpBenchRow[];
  /** MCP (session) req/s over HTTP GET's. */
  mcpOverHttp: number;
  /**
   * tools/call notes_get's req/s over HTTP POST notes/get's (the same
   * arguments in a JSON body, the same token), which pays the same body read:
   * the median of each round's ratio, for the 2025 session and the stateless
   * 2026-07-28 request. The target is at least 0.95 for both.
   */
  overPost: { session: number; modern: number };
  /** Server CPU per request of HTTP POST over that of tools/call, medians of each round's ratio. */
  cpuOverPost: { session: number; modern: number } | null;
  /**
   * The same pair with nothing of Hearth between (bench/floor.ts): a bare
   * Bun.serve's tools/call-shaped answer to tools/call's request over its
   * POST notes/get-shaped answer to the POST's, each round's ratio of rates
   * and the median, and the median of each round's extra server CPU per
   * request (µs). Bun's cost of the larger request and answer: no /mcp on
   * Bun can pass this ratio.
   */
  floorOverPost: {
    session: number;
    modern: number;
    extraCpu: { session: number; modern: number } | null;
    /** Hearth's POST's CPU per request over itself plus that extra: the most tools/call can reach against it, each era. */
    ceiling: { session: number; modern: number } | null;
  };
  /** MCP (session) req/s over the SDK example's: the target is above 1. */
  mcpOverSdkExample: number;
  /** Stateless 2026-07-28 tools/call req/s over HTTP GET's. */
  modernOverHttp: number;
  /**
   * The most tools/call can reach against HTTP GET at this GET's cost, from the
   * floor: a bare Bun.serve spends `floorExtraCpu` µs more on a POST that reads
   * a JSON-RPC body and answers a tools/call-sized result than on a GET, and
   * no POST transport on Bun can spend less than that beside Hearth's GET.
   */
  ceiling: { floorExtraCpu: number; ratio: number } | null;
  /** Server CPU per request of HTTP GET over that of the 2025 session tools/call and the 2026-07-28 one. */
  cpuRatio: { session: number; modern: number } | null;
  /** The tools/list answer's size in bytes, and in tokens at about four bytes each, with every tool and in discovery mode. */
  toolsList: { all: { bytes: number; tokens: number }; discover: { bytes: number; tokens: number } };
}

const root = join(import.meta.dir, "..");
const PROTOCOL = "2025-06-18";
const MODERN = "2026-07-28";


// Generous: from source, on a loaded machine, an instance has taken longer than 15 s to answer its first request.
async function waitUp(url: string, init?: RequestInit, timeoutMs = 180_000) {
  const start = performance.now();
  while (performance.now() - start < timeoutMs) {
    try {
      const r = await fetch(url, init);
      if (r.status < 500) return;
    } catch {}
    await Bun.sleep(20);
  }
  throw new Error(`${url} never answered`);
}

async function load(
  name: string,
  o: {
    url: string;
    method: "GET" | "POST";
    headers: Record<string, string>;
    body?: string;
    seconds: number;
    connections: number;
    expect?: string;
    rpcIds?: boolean;
    pid?: number;
  },
): Promise<McpBenchRow> {
  // Check once that the request really succeeds, so the rate is of answers and not of refusals.
  const probe = await fetch(o.url, { method: o.method, headers: o.headers, body: o.body });
  const text = await probe.text();
  if (probe.status !== 200 || (o.expect && !text.includes(o.expect))) throw new Error(`${name}: probe answered ${probe.status}: ${text.slice(0, 300)}`);
  // A client numbers its requests: prebuilt bodies, sent in turn, keep the load generator's own cost the same as for plain HTTP.
  const bodies = o.rpcIds && o.body ? Array.from({ length: 1000 }, (_, i) => o.body!.replace('"id":1', `"id":${i + 1}`)) : undefined;
  return loadWith(name, { url: o.url, method: o.method, headers: o.headers, body: o.body, bodies, connections: o.connections, seconds: o.seconds, pid: o.pid });
}

const rpc = (method: string, params: unknown) => JSON.stringify({ jsonrpc: "2.0", id: 1, method, params });

/** The SDK's minimal Web-standard example (its honoWebStandardStreamableHttp), served by Bun.serve. */
async function sdkExample(port: number) {
  const { McpServer } = await import("@modelcontextprotocol/sdk/server/mcp.js");
  const { WebStandardStreamableHTTPServerTransport } = await import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js");
  const z = await import("zod/v4");
  const getServer = () => {
    const server = new McpServer({ name: "sdk-example", version: "1.0.0" });
    server.registerTool(
      "greet",
      { title: "Greeting Tool", description: "A simple greeting tool", inputSchema: { name: z.string().describe("Name to greet") } },
      async ({ name }) => ({
        content: [{ type: "text", text: `Hello, ${name}!` }],
      }),
    );
    return server;
  };
  Bun.serve({
    port,
    hostname: "127.0.0.1",
    async fetch(req) {
      const transport = new WebStandardStreamableHTTPServerTransport();
      const server = getServer();
      await server.connect(transport);
      return transport.handleRequest(req);
    },
  });
}

export async function benchMcp(o: { seconds?: number; connections?: number; rounds?: number } = {}): Promise<McpBenchResult> {
  const seconds = o.seconds ?? Number(process.env.BENCH_SECONDS ?? 10);
  const rounds = o.rounds ?? Number(process.env.BENCH_ROUNDS ?? 5);
  const connections = o.connections ?? 32;
  const dir = mkdtempSync(join(tmpdir(), "hearth-bench-mcp-"));
  const env = {
    ...process.env,
    HEARTH_DATA: dir,
    HEARTH_LOG: "off",
    HOST: "127.0.0.1",
    HEARTH_METERING: "off",
    HEARTH_RATE_READS: "0",
    HEARTH_RATE_WRITES: "0",
  };
  const cli = join(root, "core/cli/main.ts");
  const procs: Bun.Subprocess[] = [];
  try {
    const token = new TextDecoder().decode(Bun.spawnSync([process.execPath, cli, "token", "create", "--user", "bench"], { env }).stdout).trim();
    const port = freePort();
    procs.push(Bun.spawn([process.execPath, cli, "serve"], { env: { ...env, PORT: String(port) }, stdout: "ignore", stderr: "inherit" }));
    const base = `http://127.0.0.1:${port}`;
    await waitUp(`${base}/health`);
    const floorPort = freePort();
    procs.push(Bun.spawn([process.execPath, join(import.meta.dir, "floor.ts")], { env: { ...process.env, PORT: String(floorPort) }, stdout: "ignore", stderr: "inherit" }));
    const floorBase = `http://127.0.0.1:${floorPort}`;
    const floorUrl = `${floorBase}/`;
    await waitUp(floorUrl);
    const examplePort = freePort();
    procs.push(Bun.spawn([process.execPath, import.meta.path, "--sdk-example", String(examplePort)], { stdout: "ignore", stderr: "inherit" }));
    const exampleUrl = `http://127.0.0.1:${examplePort}/mcp`;
    await waitUp(exampleUrl, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: rpc("tools/list", {}),
    });

    const auth = { authorization: `Bearer ${token}` };
    await fetch(`${base}/api/v1/notes/add`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ title: "bench", text: "a note read under load" }),
    });

    const mcpHeaders = { ...auth, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": PROTOCOL };
    const init = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: mcpHeaders,
      body: rpc("initialize", { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: "bench", version: "1" } }),
    });
    const session = init.headers.get("mcp-session-id");
    if (!session) throw new Error(`initialize gave no session: ${init.status} ${await init.text()}`);
    await fetch(`${base}/mcp`, {
      method: "POST",
      headers: { ...mcpHeaders, "mcp-session-id": session },
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    });
    const call = rpc("tools/call", { name: "notes_get", arguments: { title: "bench" } });
    // A 2026-07-28 request stands alone: its version and capabilities in _meta, its method and tool in headers.
    const modernCall = rpc("tools/call", {
      name: "notes_get",
      arguments: { title: "bench" },
      _meta: { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {} },
    });
    const modernHeaders = { ...mcpHeaders, "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "notes_get" };
    const listSize = async (query: string) => {
      const r = await fetch(`${base}/mcp${query}`, { method: "POST", headers: mcpHeaders, body: rpc("tools/list", {}) });
      const bytes = (await r.arrayBuffer()).byteLength;
      return { bytes, tokens: Math.round(bytes / 4) };
    };
    const toolsList = { all: await listSize(""), discover: await listSize("?mode=discover") };

    type Scenario = Parameters<typeof load>[1] & { name: string };
    const scenarios: Scenario[] = [
      { name: "HTTP GET notes/get", url: `${base}/api/v1/notes/get?title=bench`, method: "GET", headers: auth, expect: '"result"' },
      {
        name: "HTTP POST notes/get (JSON body)",
        url: `${base}/api/v1/notes/get`,
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ title: "bench" }),
        expect: '"result"',
      },
      {
        name: "MCP tools/call notes_get (session)",
        url: `${base}/mcp`,
        method: "POST",
        headers: { ...mcpHeaders, "mcp-session-id": session },
        body: call,
        expect: '"structuredContent"',
        rpcIds: true,
      },
      { name: "MCP tools/call notes_get (stateless)", url: `${base}/mcp`, method: "POST", headers: mcpHeaders, body: call, expect: '"structuredContent"' },
      {
        name: "MCP tools/call notes_get (stateless 2026-07-28)",
        url: `${base}/mcp`,
        method: "POST",
        headers: modernHeaders,
        body: modernCall,
        expect: '"resultType":"complete"',
        rpcIds: true,
      },
      {
        name: "SDK example server tools/call greet",
        url: exampleUrl,
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: rpc("tools/call", { name: "greet", arguments: { name: "bench" } }),
        expect: "Hello, bench!",
      },
      { name: "floor GET (Bun.serve JSON)", url: floorUrl, method: "GET", headers: {}, expect: '"result"' },
      {
        name: "floor POST (Bun.serve, JSON-RPC body, tools/call-sized answer)",
        url: floorUrl,
        method: "POST",
        headers: { "content-type": "application/json" },
        body: call,
        expect: '"structuredContent"',
      },
      // Hearth's POST and tools/call with nothing of Hearth between: the same requests, answered with the same bodies and headers.
      {
        name: "floor POST notes/get-shaped (Bun.serve)",
        url: `${floorBase}/api/v1/notes/get`,
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ title: "bench" }),
        expect: '{"result"',
      },
      {
        name: "floor tools/call-shaped (Bun.serve, session)",
        url: `${floorBase}/mcp`,
        method: "POST",
        headers: { ...mcpHeaders, "mcp-session-id": session },
        body: call,
        expect: '"structuredContent"',
        rpcIds: true,
      },
      {
        name: "floor tools/call-shaped (Bun.serve, 2026-07-28)",
        url: `${floorBase}/mcp`,
        method: "POST",
        headers: modernHeaders,
        body: modernCall,
        expect: '"resultType":"complete"',
        rpcIds: true,
      },
    ].map((x) => ({ ...x, seconds: Math.max(1, Math.round(seconds / rounds)), connections, pid: x.url === exampleUrl ? procs[2].pid : x.url.startsWith(floorBase) ? procs[1].pid : procs[0].pid }) as Scenario);
    // Interleaved rounds, medians reported: a drift in the machine's load then touches every row alike.
    const runs: McpBenchRow[][] = scenarios.map(() => []);
    for (let round = 0; round < rounds; round++) for (let i = 0; i < scenarios.length; i++) runs[i].push(await load(scenarios[i].name, scenarios[i]));
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const rows: McpBenchRow[] = runs.map((r, i) => ({
      name: scenarios[i].name,
      rps: median(r.map((x) => x.rps)),
      p50: median(r.map((x) => x.p50)),
      p99: median(r.map((x) => x.p99)),
      errors: r.reduce((n, x) => n + x.errors, 0),
      ...(r.every((x) => x.cpu !== undefined) ? { cpu: median(r.map((x) => x.cpu!)) } : {}),
    }));
    const [http, post, session_, , modern, example, floorGet, floorPost, floorApi, floorSession, floorModern] = rows;
    // Within each round the POST and its tools/call run back to back: a round's ratio is of two rates under the same load.
    const perRound = (i: number, of: (x: McpBenchRow) => number | undefined, over = false, post = 1) => {
      const ratios = runs[post].map((p, r) => (over ? of(p)! / of(runs[i][r])! : of(runs[i][r])! / of(p)!));
      return ratios.every(Number.isFinite) ? Math.round(median(ratios) * 100) / 100 : NaN;
    };
    const cpuSession = perRound(2, (x) => x.cpu, true);
    const cpuModern = perRound(4, (x) => x.cpu, true);
    const extraOver = (i: number) => Math.round(median(runs[i].map((x, r) => x.cpu! - runs[8][r].cpu!)) * 10) / 10;
    const floorExtra = floorApi.cpu !== undefined && floorSession.cpu !== undefined && floorModern.cpu !== undefined ? { session: extraOver(9), modern: extraOver(10) } : null;
    const within = (extra: number) => Math.round((post.cpu! / (post.cpu! + extra)) * 100) / 100;
    const floorExtraCpu = floorGet.cpu !== undefined && floorPost.cpu !== undefined ? Math.round((floorPost.cpu - floorGet.cpu) * 10) / 10 : undefined;
    return {
      seconds,
      connections,
      rounds,
      rows,
      mcpOverHttp: Math.round((session_.rps / http.rps) * 100) / 100,
      overPost: { session: perRound(2, (x) => x.rps), modern: perRound(4, (x) => x.rps) },
      cpuOverPost: Number.isFinite(cpuSession) && Number.isFinite(cpuModern) ? { session: cpuSession, modern: cpuModern } : null,
      floorOverPost: { session: perRound(9, (x) => x.rps, false, 8), modern: perRound(10, (x) => x.rps, false, 8), extraCpu: floorExtra, ceiling: floorExtra && post.cpu ? { session: within(floorExtra.session), modern: within(floorExtra.modern) } : null },
      mcpOverSdkExample: Math.round((session_.rps / example.rps) * 100) / 100,
      modernOverHttp: Math.round((modern.rps / http.rps) * 100) / 100,
      cpuRatio:
        http.cpu && session_.cpu && modern.cpu
          ? { session: Math.round((http.cpu / session_.cpu) * 100) / 100, modern: Math.round((http.cpu / modern.cpu) * 100) / 100 }
          : null,
      ceiling:
        http.cpu && floorExtraCpu !== undefined ? { floorExtraCpu, ratio: Math.round((http.cpu / (http.cpu + floorExtraCpu)) * 100) / 100 } : null,
      toolsList,
    };
  } finally {
    for (const p of procs) p.kill();
    await Promise.all(procs.map((p) => p.exited));
    rmSync(dir, { recursive: true, force: true });
  }
}

export function mcpTable(r: McpBenchResult): string {
  const head = ["scenario", "req/s", "p50 ms", "p99 ms", "errors", "server CPU µs/req"];
  const body = r.rows.map((x) => [x.name, String(x.rps), String(x.p50), String(x.p99), String(x.errors), x.cpu === undefined ? "" : String(x.cpu)]);
  const w = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(w[i])).join(" | ")} |`;
  return [line(head), `|${w.map((n) => "-".repeat(n + 2)).join("|")}|`, ...body.map(line)].join("\n");
}

/** The 2026-07-28 ratio and the tools/list sizes, one line each. */
export function mcpSummary(r: McpBenchResult): string {
  const size = (x: { bytes: number; tokens: number }) => `${x.bytes} bytes (~${x.tokens} tokens)`;
  const cpu = r.cpuRatio ? `; server CPU per request, HTTP GET's over tools/call's: ${Math.round(r.cpuRatio.session * 100)}% (session), ${Math.round(r.cpuRatio.modern * 100)}% (2026-07-28)` : "";
  const ceiling = r.ceiling
    ? `\nthe floor's POST (reading a JSON-RPC body, answering a tools/call-sized result) costs ${r.ceiling.floorExtraCpu} µs more than its GET: beside this HTTP GET, no POST transport on Bun can pass ${Math.round(r.ceiling.ratio * 100)}% of its rate`
    : "";
  const post = r.cpuOverPost ? `; server CPU per request, HTTP POST's over tools/call's: ${Math.round(r.cpuOverPost.session * 100)}% (session), ${Math.round(r.cpuOverPost.modern * 100)}% (2026-07-28)` : "";
  const f = r.floorOverPost;
  const floorPair = `\nthe same pair on a bare Bun.serve (bench/floor.ts, same requests, same bodies and headers answered): ${Math.round(f.session * 100)}% (session), ${Math.round(f.modern * 100)}% (2026-07-28)${
    f.extraCpu ? `, tools/call-shaped costing ${f.extraCpu.session} / ${f.extraCpu.modern} µs more server CPU per request than POST-shaped` : ""
  }${f.ceiling ? `: beside this POST, no /mcp on Bun can pass ${Math.round(f.ceiling.session * 100)}% (session) and ${Math.round(f.ceiling.modern * 100)}% (2026-07-28) of its rate` : ""}`;
  return [
    `MCP tools/call / HTTP POST notes/get (same body, same token; each round's pair, median): ${Math.round(r.overPost.session * 100)}% (session), ${Math.round(r.overPost.modern * 100)}% (stateless 2026-07-28) (target >= 95%)${post}${floorPair}`,
    `MCP tools/call / HTTP GET: ${Math.round(r.mcpOverHttp * 100)}% (session), ${Math.round(r.modernOverHttp * 100)}% (stateless 2026-07-28)${cpu}${ceiling}`,
    `tools/list: ${size(r.toolsList.all)} with every tool; ${size(r.toolsList.discover)} with ?mode=discover`,
  ].join("\n");
}

if (import.meta.main) {
  const i = process.argv.indexOf("--sdk-example");
  if (i >= 0) await sdkExample(Number(process.argv[i + 1]));
  else {
    const r = await benchMcp();
    console.log(
      `\nMCP benchmark: ${r.seconds}s per scenario in ${r.rounds} interleaved rounds (medians), ${r.connections} connections, ${new Date().toISOString()}\n`,
    );
    console.log(mcpTable(r));
    console.log(
      `\nMCP (session) / SDK example: ${r.mcpOverSdkExample}x (target > 1)`,
    );
    console.log(mcpSummary(r));
  }
}
