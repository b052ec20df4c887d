// Shared pieces of the benchmark: processes, load, measurements.
import autocannon from "autocannon";
import { readFileSync } from "node:fs";

export interface Row {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  ratio?: number;
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

export async function load(
  name: string,
  opts: { url: string; method?: "GET" | "POST"; headers?: Record<string, string>; body?: string; connections?: number; seconds: number; requests?: { method: "POST"; path: string; body: string; headers?: Record<string, string> }[] },
): Promise<Row> {
  const result = await autocannon({
    url: opts.url,
    method: opts.method ?? "GET",
    headers: opts.headers,
    body: opts.body,
    connections: opts.connections ?? 32,
    duration: opts.seconds,
    pipelining: 1,
    requests: opts.requests,
  });
  const errors = result.errors + result.timeouts + (result.non2xx ?? 0);
  return { name, rps: Math.round(result.requests.average), p50: result.latency.p50, p99: result.latency.p99, errors };
}

export function table(rows: Row[], floor?: number): string {
  const head = ["scenario", "req/s", "p50 ms", "p99 ms", "errors", "vs floor"];
  const body = rows.map((r) => [r.name, String(r.rps), String(r.p50), String(r.p99), String(r.errors), floor ? `${Math.round((r.rps / floor) * 100)}%` : ""]);
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
