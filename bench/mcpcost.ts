// The handlers' own cost, without sockets: HTTP POST notes/get and MCP
// tools/call notes_get (a 2025 session, a 2026-07-28 stateless request) called
// in this process, as Bun's router calls them, on Requests made beforehand.
// What is left of the gap bench/mcp.ts measures over the wire is then Bun's
// cost of the larger request and answer.
//
//   bun bench/mcpcost.ts     prints CPU µs per request of each, medians of BENCH_ROUNDS rounds (default 7)
import { startHearth } from "../core/testing.ts";
import { handleApi } from "../core/http/api.ts";
import { inProcessCpuUs } from "./lib.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const N = Number(process.env.BENCH_CALLS ?? 20_000);
const BATCH = 32;

const hearth = await startHearth({ env: { HEARTH_METERING: "off", HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0" } });
try {
  const rt = hearth.rt;
  const token = await hearth.token("bench");
  await hearth.call("notes/add", { title: "bench", text: "a note read under load" }, { token });
  const base = hearth.url;
  const auth = { authorization: `Bearer ${token}` };
  const mcpHeaders = { ...auth, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" };
  const init = await fetch(`${base}/mcp`, {
    method: "POST",
    headers: mcpHeaders,
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "1" } } }),
  });
  const session = init.headers.get("mcp-session-id")!;
  await fetch(`${base}/mcp`, { method: "POST", headers: { ...mcpHeaders, "mcp-session-id": session }, body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) });
  const mcp = rt.wiring.native.get("/mcp")!;
  const peer = () => "127.0.0.1";
  const call = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "notes_get", arguments: { title: "bench" } } });
  const modernCall = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: "notes_get", arguments: { title: "bench" }, _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} } },
  });
  type Route = { name: string; make: () => Request; run: (req: Request) => Response | Promise<Response>; expect: string };
  const routes: Route[] = [
    {
      name: "HTTP POST notes/get",
      make: () => new Request(`${base}/api/v1/notes/get`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: '{"title":"bench"}' }),
      run: (req) => handleApi(rt, req, "notes", "get", peer),
      expect: '{"result"',
    },
    {
      name: "MCP tools/call (session)",
      make: () => new Request(`${base}/mcp`, { method: "POST", headers: { ...mcpHeaders, "mcp-session-id": session }, body: call }),
      run: (req) => mcp(rt, req, peer),
      expect: '"structuredContent"',
    },
    {
      name: "MCP tools/call (2026-07-28)",
      make: () =>
        new Request(`${base}/mcp`, {
          method: "POST",
          headers: { ...mcpHeaders, "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "notes_get" },
          body: modernCall,
        }),
      run: (req) => mcp(rt, req, peer),
      expect: '"resultType":"complete"',
    },
  ];
  for (const r of routes) {
    const text = await (await r.run(r.make())).text();
    if (!text.includes(r.expect)) throw new Error(`${r.name}: ${text}`);
  }
  const measure = (r: Route): Promise<number> => inProcessCpuUs(r.make, r.run, N, BATCH);
  // BENCH_ROUTE=<index> measures one route alone, for a profile of it.
  const only = process.env.BENCH_ROUTE;
  if (only !== undefined) {
    const r = routes[Number(only)];
    for (let i = 0; i < ROUNDS; i++) console.log(`${r.name}: ${(await measure(r)).toFixed(1)} µs`);
    process.exit(0);
  }
  for (const r of routes) await measure(r);
  const seen: number[][] = routes.map(() => []);
  for (let i = 0; i < ROUNDS; i++) for (let j = 0; j < routes.length; j++) seen[j].push(await measure(routes[j]));
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  for (let j = 0; j < routes.length; j++) {
    const m = median(seen[j]);
    // Each round's difference from the POST measured beside it, the median of those: steadier than a difference of medians.
    const over = median(seen[j].map((x, i) => x - seen[0][i]));
    console.log(`${routes[j].name.padEnd(30)} ${m.toFixed(1).padStart(7)} µs CPU/request   ${j ? `+${over.toFixed(1)} µs over POST (each round's, median)` : ""}   rounds: ${seen[j].map((x) => x.toFixed(1)).join(" ")}`);
  }
} finally {
  await hearth.stop();
}
