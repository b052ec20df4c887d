// A loopback stand-in for one outside provider: routes answer recorded
// payloads from test/fixtures, every request is kept for inspection, and the
// whole server can be told to fail (500, 503, garbage, no answer in time).
import { readFileSync } from "node:fs";
import { join } from "node:path";

export type Failure = "500" | "503" | "garbage" | "hang" | null;

export interface Request {
  method: string;
  path: string;
  query: URLSearchParams;
  body: string;
  headers: Headers;
}

export function recorded(provider: string, file: string): string {
  return readFileSync(join(import.meta.dir, "..", "fixtures", provider, file), "utf8");
}

export const json = (text: string, status = 200) => new Response(text, { status, headers: { "content-type": "application/json; charset=utf-8" } });

type Route = (req: Request) => Response | Promise<Response>;

export function provider(routes: Record<string, Route> | ((req: Request) => Response | Promise<Response> | null)) {
  const requests: Request[] = [];
  const state = { fail: null as Failure };
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(raw) {
      const url = new URL(raw.url);
      const req: Request = { method: raw.method, path: url.pathname, query: url.searchParams, body: await raw.text(), headers: raw.headers };
      requests.push(req);
      if (state.fail === "500") return new Response("Internal Server Error", { status: 500 });
      if (state.fail === "503") return new Response("Service Unavailable", { status: 503 });
      if (state.fail === "garbage") return new Response("<html><body>502 Bad Gateway</body></html>", { headers: { "content-type": "text/html" } });
      // No answer at all, however long the caller waits: its own timeout is what ends the request.
      if (state.fail === "hang") return new Promise<Response>(() => {});
      const answer = typeof routes === "function" ? await routes(req) : routes[url.pathname] ? await routes[url.pathname](req) : null;
      return answer ?? new Response("not found", { status: 404 });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    requests,
    count: (path: string) => requests.filter((r) => r.path === path).length,
    last: (path: string) => requests.filter((r) => r.path === path).at(-1),
    set fail(f: Failure) {
      state.fail = f;
    },
    stop: () => server.stop(true),
  };
}
