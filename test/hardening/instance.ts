// A Hearth whose every provider is a loopback server that answers garbage or
// errors, so the hardening tests exercise each method's failure paths without
// reaching the internet, and a proxy that refuses whatever else tries to leave.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildRegistry } from "../../core/registry.ts";
import { allProviders } from "../../core/upstream/providers.ts";

/** Answers a provider might give on a bad day, in turn, one per request. */
const BAD_DAYS: (() => Response)[] = [
  () => new Response("upstream exploded", { status: 500 }),
  () => new Response('{"data": [1, 2, {"truncated": ', { status: 200, headers: { "content-type": "application/json" } }),
  () => Response.json({ unexpected: { shape: [null, true, "x"] } }),
  () => Response.json([]),
  () => new Response("<html><body><h1>Service temporarily unavailable</h1></body></html>", { status: 200, headers: { "content-type": "text/html" } }),
  () => new Response("", { status: 200 }),
  () => Response.json(null),
  () => new Response("slow down", { status: 429, headers: { "retry-after": "1" } }),
  () => new Response('<?xml version="1.0"?><rss><channel><item><title>cut', { status: 200, headers: { "content-type": "application/rss+xml" } }),
  () => new Response(new Uint8Array([0xff, 0xfe, 0x00, 0x89, 0x50, 0x4e, 0x47]), { status: 200, headers: { "content-type": "application/octet-stream" } }),
  () => new Response("not found", { status: 404 }),
  () => Response.json({ error: { message: "invalid api key" } }, { status: 401 }),
];

export interface Garbage {
  url: string;
  hits: () => number;
  stop(): void;
}

/** A loopback provider that answers only garbage and errors. `mode` "slow" holds each answer back until stopped. */
export function garbageUpstream(mode: "garbage" | "slow" | "down" = "garbage"): Garbage {
  let n = 0;
  const held: (() => void)[] = [];
  if (mode === "down") {
    // A port that was just bound and released: connections are refused at once.
    const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
    const port = s.port;
    s.stop(true);
    return { url: `http://127.0.0.1:${port}`, hits: () => 0, stop() {} };
  }
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    fetch() {
      const i = n++;
      if (mode === "slow") return new Promise<Response>((resolve) => held.push(() => resolve(new Response("late", { status: 503 }))));
      return BAD_DAYS[i % BAD_DAYS.length]();
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    hits: () => n,
    stop() {
      for (const r of held.splice(0)) r();
      server.stop(true);
    },
  };
}

const PROXY_VARS = ["HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"] as const;

/** Routes anything that is not loopback to a proxy that refuses it; returns the undo. */
export function refuseOutside(): () => void {
  const proxy = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("no network in tests", { status: 502 }) });
  const saved: Record<string, string | undefined> = {};
  for (const k of PROXY_VARS) saved[k] = process.env[k];
  process.env.HTTP_PROXY = process.env.HTTPS_PROXY = `http://127.0.0.1:${proxy.port}`;
  process.env.NO_PROXY = "127.0.0.1,localhost";
  return () => {
    for (const k of PROXY_VARS)
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    proxy.stop(true);
  };
}

/**
 * Settings that send every provider, every plugin's outside URL and the
 * feeds list to `upstream`, leave AI, mail and SMS unconfigured, and lift the
 * per-caller rate limits so many calls in a row measure the methods, not the limiter.
 */
export async function hostileEnv(upstream: string, o: { timeoutMs?: number } = {}): Promise<Record<string, string>> {
  const reg = await buildRegistry({ pluginsDir: join(import.meta.dir, "..", "..", "plugins") });
  const env: Record<string, string> = {
    HEARTH_PUBLIC_URL: "http://hearth.test",
    HEARTH_RATE_READS: "0",
    HEARTH_RATE_WRITES: "0",
    HEARTH_RATE_PRICED: "0",
    HEARTH_RATE_SIGNIN: "0",
    UPSTREAM_RETRY_MS: "0",
    AI_BASE_URL: "",
    AI_OLLAMA_URL: "",
    X402_FACILITATOR_URL: upstream,
  };
  for (const p of allProviders()) {
    env[`${p.name}_URL`] = upstream;
    env[`${p.name}_TIMEOUT_MS`] = String(o.timeoutMs ?? 3000);
  }
  for (const p of reg.plugins.values())
    for (const [k, s] of Object.entries(p.def.config ?? {})) if (/^https?:\/\//.test(s.default)) env[k] = upstream;
  const feeds = join(mkdtempSync(join(tmpdir(), "hearth-hardening-")), "feeds.json");
  writeFileSync(feeds, JSON.stringify({ feeds: [{ topic: "world", name: "Garbage", url: `${upstream}/feed.xml` }] }));
  env.NEWS_FEEDS_FILE = feeds;
  return env;
}

/** The error body every refusal shares (DESIGN.md, "Answers and errors"); returns what is wrong with it, or null. */
export function errorShapeProblem(status: number, body: unknown): string | null {
  const err = (body as { error?: Record<string, unknown> } | null)?.error;
  if (!err || typeof err !== "object") return `no "error" object in ${JSON.stringify(body)?.slice(0, 200)}`;
  if (err.status !== status) return `error.status ${err.status} differs from HTTP ${status}`;
  if (typeof err.kind !== "string" || !err.kind) return "error.kind missing";
  if (typeof err.message !== "string" || !err.message) return "error.message missing";
  if (typeof err.retry !== "boolean") return "error.retry missing";
  if (status === 400 && (typeof err.field !== "string" || !err.field)) return `400 without a field: ${err.message}`;
  if (/\n\s+at .+:\d+:\d+/.test(String(err.message))) return "a stack trace in the message";
  return null;
}
