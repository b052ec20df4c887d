// A loopback stand-in for an outside provider: serves recorded payloads by
// path, counts requests, and misbehaves on demand (500, garbage, no answer).
import { readFileSync } from "node:fs";
import { join } from "node:path";

export type Misbehaviour = "500" | "503" | "garbage" | "hang" | null;

export interface Seen {
  path: string;
  query: URLSearchParams;
  headers: Headers;
}

export function recorded(provider: string, file: string): string {
  return readFileSync(join(import.meta.dir, "..", "fixtures", provider, file), "utf8");
}

export function startFixture(routes: Record<string, (q: URLSearchParams, req: Request) => Response | Promise<Response>>) {
  const seen: Seen[] = [];
  const state = { fail: null as Misbehaviour };
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const url = new URL(req.url);
      seen.push({ path: url.pathname, query: url.searchParams, headers: req.headers });
      if (state.fail === "500") return new Response("Internal Server Error", { status: 500 });
      if (state.fail === "503") return new Response("Service Unavailable", { status: 503 });
      if (state.fail === "garbage") return new Response("<html><body>Bad gateway</body></html>", { headers: { "content-type": "text/html" } });
      // No answer at all, however long the caller waits: its own timeout is what ends the request.
      if (state.fail === "hang") return new Promise<Response>(() => {});
      // A key ending in "*" serves every path under it.
      const route = routes[url.pathname] ?? Object.entries(routes).find(([k]) => k.endsWith("*") && url.pathname.startsWith(k.slice(0, -1)))?.[1];
      if (!route) return new Response("not found", { status: 404 });
      return route(url.searchParams, req);
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    seen,
    /** Requests to a path so far. */
    hits: (path: string) => seen.filter((s) => s.path === path).length,
    last: (path: string) => seen.filter((s) => s.path === path).at(-1),
    set fail(f: Misbehaviour) {
      state.fail = f;
    },
    stop: () => server.stop(true),
  };
}

export const json = (text: string, status = 200) => new Response(text, { status, headers: { "content-type": "application/json; charset=utf-8" } });
