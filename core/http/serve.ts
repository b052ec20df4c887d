// Binds the server. The API route is the hot path: it goes straight to Bun's
// native router (measured: a trivial Elysia route serves ~43k req/s here,
// Bun's routes ~80k), while every page and mount stays in the Elysia app.
import type { Server } from "bun";
import http from "node:http";
import type { Runtime } from "../runtime.ts";
import { handleApi } from "./api.ts";
import { largestBody } from "./body.ts";
import { createApp, type App } from "./app.ts";
import { hostGuard } from "./host.ts";
import { forBrowser } from "./pages/errors.ts";
import { WILDCARD_HOSTS } from "../config.ts";
import type { ClientAddress } from "./identify.ts";
import { isComplete, SECURITY_HEADERS, withHeaders } from "./respond.ts";

export interface Listening {
  server: Server<undefined>;
  app: App;
  url: string;
  stop(): Promise<void>;
}

/** What every answer carries unless it says otherwise: pages that set their own CSP keep it. */
const SECURITY_ENTRIES = Object.entries(SECURITY_HEADERS);

function secured(res: Response | undefined): Response | undefined {
  return res && (isComplete(res) ? res : withHeaders(res, SECURITY_ENTRIES, true));
}

/**
 * Bytes a request's line and headers may take. Reads carry their arguments in
 * the query string and the text methods take 30,000 characters: percent-encoded,
 * one astral character (an emoji) is 12 bytes, so 30,000 of them are 360,000,
 * with room left for the other arguments and the headers. Bun's default
 * (16 KiB) refused such a GET with 431 before any handler saw it.
 */
export const MAX_REQUEST_HEAD = 512 * 1024;

/**
 * Bun keeps one process-wide limit, the one --max-http-header-size sets, and
 * node:http's maxHeaderSize is its setter; doing it here makes it hold for
 * `hearth serve`, the compiled binary and tests alike. A larger limit given
 * on the command line stands.
 */
function allowLongRequestHeads() {
  if (http.maxHeaderSize < MAX_REQUEST_HEAD) (http as { maxHeaderSize: number }).maxHeaderSize = MAX_REQUEST_HEAD;
}

export function listen(rt: Runtime, opts: { port: number; hostname: string }): Listening {
  allowLongRequestHeads();
  const app = createApp(rt);
  const guard = hostGuard(rt, opts.hostname);
  // The peer's address is asked for only when a caller needs it (a stranger's limits).
  const peer = (req: Request, srv: Server<undefined>) => () => srv.requestIP(req)?.address ?? "";
  const server = Bun.serve({
    port: opts.port,
    hostname: opts.hostname,
    idleTimeout: 120,
    // Readers stop at their own (smaller) caps with a proper answer; this is the server's backstop.
    maxRequestBodySize: largestBody(rt) + 64 * 1024,
    routes: {
      // API answers are made by jsonResponse, which already carries the security headers.
      "/api/v1/:service/:method": (req, srv) => guard?.(req) ?? handleApi(rt, req, req.params.service, req.params.method, peer(req, srv)),
      ...Object.fromEntries(
        // Hot endpoints a module serves outside the API (MCP) go to Bun's router too; the module mounts them on the app as well.
        // An answer made at once is sent at once: no turn is spent on a promise around it.
        [...rt.wiring.native].map(([path, handle]) => [
          path,
          (req: Request, srv: Server<undefined>) => {
            const refused = guard?.(req);
            if (refused) return refused;
            const res = handle(rt, req, peer(req, srv));
            return res instanceof Promise ? res.then(secured) : secured(res);
          },
        ]),
      ),
    },
    // A browser asking for a page that is refused gets a page; programs keep the JSON refusal.
    fetch: async (req) => guard?.(req) ?? secured(await forBrowser(rt, req, await app.handle(req)))!,
  });
  // Elysia reads the server from here for requestIP in its handlers.
  app.server = server as unknown as App["server"];
  // Work a module does on its own while the instance serves; each says itself when it cannot start.
  for (const fn of rt.wiring.serving) void (async () => fn(rt))().catch((e) => rt.log.error("a core module could not start its work", { error: String(e) }));
  const host = WILDCARD_HOSTS.has(opts.hostname) ? "127.0.0.1" : opts.hostname.includes(":") && !opts.hostname.startsWith("[") ? `[${opts.hostname}]` : opts.hostname;
  return {
    server,
    app,
    url: `http://${host}:${server.port}`,
    async stop() {
      await server.stop(true);
    },
  };
}
