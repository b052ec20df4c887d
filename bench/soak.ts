// Soak: a mixed workload held for a while on one instance: database reads,
// writes, MCP tool calls over a session and a cached public read (a loopback
// stand-in replays a recorded Open-Meteo answer), from many connections at
// once. Reports errors, latency percentiles per kind and overall, and the
// server's RSS sampled each second, to show whether memory stays flat.
//
//   bun bench/soak.ts            prints the report (SOAK_SECONDS, default 60; SOAK_CONNECTIONS, default 64)
//   import { soak }              returns the numbers; `bun run bench` runs it as benchSoak (BENCH_ONLY=soak for it alone)
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, rssMb, standInProvider } from "./lib.ts";

export interface SoakKind {
  name: string;
  requests: number;
  errors: number;
  p50: number;
  p99: number;
}

export interface SoakResult {
  seconds: number;
  connections: number;
  requests: number;
  rps: number;
  errors: number;
  /** A few of the errors seen, for diagnosis. */
  errorSamples: string[];
  p50: number;
  p99: number;
  kinds: SoakKind[];
  /** Server RSS in MB, one sample per second from the start of the load. */
  rss: { s: number; mb: number }[];
  /** Largest RSS after the first 10 seconds over the RSS at 10 seconds, in percent (target <= 10). */
  rssGrowthPct: number;
  /** Requests that reached the stand-in provider (the cached read should ask it once). */
  providerHits: number;
}

const root = join(import.meta.dir, "..");

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] * 100) / 100;
}

class Latencies {
  private buf = new Float64Array(1 << 16);
  n = 0;
  errors = 0;
  push(ms: number) {
    if (this.n === this.buf.length) {
      const next = new Float64Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.n++] = ms;
  }
  sorted() {
    return this.buf.slice(0, this.n).sort();
  }
}

export async function soak(o: { seconds?: number; connections?: number; binary?: string } = {}): Promise<SoakResult> {
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

    // Each kind: its share of the mix and how to make one request of it; `ok` checks the answer, not only the status.
    type Kind = { name: string; weight: number; send: (w: number, i: number) => Promise<Response>; ok: (text: string) => boolean };
    const kinds: Kind[] = [
      { name: "read notes/get", weight: 35, send: (_, i) => fetch(`${base}/api/v1/notes/get?title=soak%20${i % 50}`, { headers: auth }), ok: (t) => t.includes('"result"') },
      { name: "read notes/list", weight: 5, send: () => fetch(`${base}/api/v1/notes/list`, { headers: auth }), ok: (t) => t.includes('"result"') },
      {
        name: "write notes/add",
        weight: 15,
        // Titles repeat per worker, so the table stays a fixed size and memory measures the server, not the data.
        send: (w, i) => fetch(`${base}/api/v1/notes/add`, { method: "POST", headers: json, body: JSON.stringify({ title: `w${w} ${i % 20}`, text: `written by ${w} at ${i}` }) }),
        ok: (t) => t.includes('"result"'),
      },
      {
        name: "mcp tools/call notes_get",
        weight: 20,
        send: (_, i) =>
          fetch(`${base}/mcp`, {
            method: "POST",
            headers: withSession,
            body: JSON.stringify({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "notes_get", arguments: { title: `soak ${i % 50}` } } }),
          }),
        ok: (t) => t.includes('"result"') && !t.includes('"isError":true'),
      },
      { name: "cached weather/air (public)", weight: 25, send: () => fetch(air), ok: (t) => t.includes('"result"') },
    ];
    const stats = kinds.map(() => new Latencies());
    const all = new Latencies();
    const errorSamples: string[] = [];
    const wheel: number[] = kinds.flatMap((k, i) => Array.from({ length: k.weight }, () => i));

    const rss: { s: number; mb: number }[] = [];
    const started = performance.now();
    const sampler = setInterval(() => rss.push({ s: Math.round((performance.now() - started) / 1000), mb: rssMb(server.pid) }), 1000);
    const until = started + seconds * 1000;
    await Promise.all(
      Array.from({ length: connections }, async (_, w) => {
        for (let i = w; performance.now() < until; i++) {
          const k = wheel[(i * 37 + w) % wheel.length];
          const t0 = performance.now();
          let good = false;
          let why = "";
          try {
            const res = await kinds[k].send(w, i);
            const text = await res.text();
            good = res.status === 200 && kinds[k].ok(text);
            if (!good) why = `${res.status} ${text.slice(0, 160)}`;
          } catch (e) {
            why = String(e);
          }
          const ms = performance.now() - t0;
          stats[k].push(ms);
          all.push(ms);
          if (!good) {
            stats[k].errors++;
            all.errors++;
            if (errorSamples.length < 10) errorSamples.push(`${kinds[k].name}: ${why}`);
          }
        }
      }),
    );
    clearInterval(sampler);
    const elapsed = (performance.now() - started) / 1000;
    const sortedAll = all.sorted();
    const at10 = rss.find((r) => r.s >= 10)?.mb ?? rss[0]?.mb ?? 0;
    const later = rss.filter((r) => r.s >= 10).map((r) => r.mb);
    const rssGrowthPct = later.length && at10 ? Math.round(((Math.max(...later) - at10) / at10) * 1000) / 10 : 0;
    return {
      seconds,
      connections,
      requests: all.n,
      rps: Math.round(all.n / elapsed),
      errors: all.errors,
      errorSamples,
      p50: percentile(sortedAll, 50),
      p99: percentile(sortedAll, 99),
      kinds: kinds.map((k, i) => {
        const s = stats[i].sorted();
        return { name: k.name, requests: stats[i].n, errors: stats[i].errors, p50: percentile(s, 50), p99: percentile(s, 99) };
      }),
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
  const rows = [["kind", "requests", "errors", "p50 ms", "p99 ms"], ...r.kinds.map((k) => [k.name, String(k.requests), String(k.errors), String(k.p50), String(k.p99)])];
  rows.push(["all", String(r.requests), String(r.errors), String(r.p50), String(r.p99)]);
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`;
  const table = [line(rows[0]), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...rows.slice(1).map(line)].join("\n");
  const every = Math.max(1, Math.ceil(r.rss.length / 12));
  const rssLine = r.rss.filter((_, i) => i % every === 0 || i === r.rss.length - 1).map((s) => `${s.s}s ${s.mb}`).join(", ");
  return [
    `soak: ${r.seconds} s at ${r.connections} connections, ${r.rps} req/s overall`,
    table,
    `errors ${r.errors} (target 0); p99 ${r.p99} ms (target < 25); RSS MB ${rssLine}; growth after 10 s ${r.rssGrowthPct}% (target <= 10); provider asked ${r.providerHits} time(s)`,
    ...(r.errorSamples.length ? ["error samples:", ...r.errorSamples.map((s) => `  ${s}`)] : []),
  ].join("\n");
}

/** The names `bun run bench` looks for: a bench* function to run and a *table function to print it. */
export const benchSoak = soak;
export const soakTable = soakReport;

if (import.meta.main) console.log(soakReport(await soak()));
