// Binds the server. The API route is the hot path: it goes straight to Bun's
// native router (measured: a trivial Elysia route serves ~43k req/s here,
// Bun's routes ~80k), while every page and mount stays in the Elysia app.
import type { Server } from "bun";
import http from "node:http";
import type { Runtime } from "../runtime.ts";
import { handleApi } from "./api.ts";
import { largestBody } from "./body.ts";
import { createApp, pluginRoute, type App } from "./app.ts";
import { Elysia } from "elysia";
import { sandboxBound, sandboxPort, sandboxPortNamed, sandboxRoutes, sandboxUnbound } from "./sandbox.ts";
import { hostGuard } from "./host.ts";
import { forBrowser } from "./pages/errors.ts";
import { WILDCARD_HOSTS } from "../config.ts";
import type { ClientAddress } from "./identify.ts";
import { errorResponse, isComplete, isFinal, SECURITY_HEADERS, withHeaders } from "./respond.ts";

export interface Listening {
  server: Server<undefined>;
  /** The app of the runtime serving now. */
  readonly app: App;
  url: string;
  /** Where documents someone else wrote are served (core/http/sandbox.ts), or null when nothing is listening for them. */
  readonly sandboxUrl: string | null;
  stop(): Promise<void>;
  /**
   * Stops taking calls, keeping the port: each new request is answered by
   * `answer` (a 503 saying why) until resume. Resolves once the calls in
   * progress have finished (or `drainMs` has passed), with the sandbox's
   * listener closed, so the runtime can be stopped under nobody.
   */
  pause(answer: (req: Request) => Response, drainMs: number): Promise<{ unfinished: number }>;
  /** Serves `rt` from now on (its app, sandbox and serving work started) and takes calls again. */
  resume(rt: Runtime): void;
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

export function listen(first: Runtime, opts: { port: number; hostname: string }): Listening {
  allowLongRequestHeads();
  // The runtime, app and guard serving now: resume swaps them, and each request reads them as it arrives.
  let rt = first;
  let app = createApp(rt);
  let guard = hostGuard(rt, opts.hostname);
  /** While paused, what every new request is answered with. */
  let paused: ((req: Request) => Response) | null = null;
  // Requests being answered, so a pause can wait for them; an answer made at once is not counted (it is already done).
  let inflight = 0;
  let idle: (() => void) | null = null;
  const settle = () => {
    if (--inflight === 0) idle?.();
  };
  const counted = <T,>(r: T | Promise<T>): T | Promise<T> => {
    if (!(r instanceof Promise)) return r;
    inflight++;
    return r.finally(settle);
  };
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
      "/api/v1/:service/:method": (req, srv) => paused?.(req) ?? guard?.(req) ?? counted(handleApi(rt, req, req.params.service, req.params.method, peer(req, srv))),
      ...Object.fromEntries(
        // Hot endpoints a module serves outside the API (MCP) go to Bun's router too; the module mounts them on the app as well.
        // An answer made at once is sent at once: no turn is spent on a promise around it.
        // Every instance in a process has the same core modules, so these paths stay the same when resume swaps the runtime.
        [...rt.wiring.native].map(([path, handle]) => [
          path,
          (req: Request, srv: Server<undefined>) => {
            const refused = paused?.(req) ?? guard?.(req);
            if (refused) return refused;
            const res = handle(rt, req, peer(req, srv));
            return res instanceof Promise ? counted(isFinal(res) ? res : res.then(secured)) : secured(res);
          },
        ]),
      ),
    },
    // A browser asking for a page that is refused gets a page; programs keep the JSON refusal.
    fetch: (req) => paused?.(req) ?? guard?.(req) ?? counted((async () => secured(await forBrowser(rt, req, await app.handle(req)))!)()),
  });
  const host = WILDCARD_HOSTS.has(opts.hostname) ? "127.0.0.1" : opts.hostname.includes(":") && !opts.hostname.startsWith("[") ? `[${opts.hostname}]` : opts.hostname;
  let sandbox: Server<undefined> | null = null;
  const begin = (named: boolean) => {
    // Elysia reads the server from here for requestIP in its handlers.
    app.server = server as unknown as App["server"];
    // Work a module does on its own while the instance serves; each says itself when it cannot start.
    for (const fn of rt.wiring.serving) void (async () => fn(rt))().catch((e) => rt.log.error("a core module could not start its work", { error: String(e) }));
    try {
      // An instance on an ephemeral port has its sandbox on one too: the port after a port the system handed out may
      // be any other program's, and taken, the documents would stay on the instance's origin.
      sandbox = listenSandbox(rt, opts.hostname, opts.port === 0 ? 0 : server.port!);
    } catch (e) {
      // At start a port the owner named and cannot have stops the start; serving on after a restore, it is said and left.
      if (named) throw e;
      rt.log.error("documents others wrote stay on the instance's origin: the sandbox port could not be bound again", { error: (e as Error).message });
    }
  };
  try {
    begin(true);
  } catch (e) {
    server.stop(true);
    throw e;
  }
  const closeSandbox = async () => {
    const s = sandbox;
    sandbox = null;
    if (!s) return;
    sandboxUnbound(rt, s.port!);
    await s.stop(true);
  };
  return {
    server,
    get app() {
      return app;
    },
    url: `http://${host}:${server.port}`,
    get sandboxUrl() {
      return sandbox ? `http://${host}:${sandbox.port}` : null;
    },
    async stop() {
      await Promise.all([server.stop(true), closeSandbox()]);
    },
    async pause(answer, drainMs) {
      paused = answer;
      if (inflight > 0) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([new Promise<void>((r) => (idle = r)), new Promise<void>((r) => (timer = setTimeout(r, drainMs)))]);
        clearTimeout(timer);
        idle = null;
      }
      await closeSandbox();
      return { unfinished: inflight };
    },
    resume(next) {
      rt = next;
      app = createApp(next);
      guard = hostGuard(next, opts.hostname);
      begin(false);
      paused = null;
    },
  };
}

const SANDBOX_ONLY = "This port serves documents for the instance's pages to frame, nothing else: open the instance at its own address.";

/**
 * The sandbox origin's listener (core/http/sandbox.ts): the routes plugins
 * mark `sandbox`, with no caller, and nothing else. Not started when no
 * plugin has such a route or HEARTH_SANDBOX_PORT is off; a port the owner did
 * not name that is taken is logged and left, documents then staying on the
 * instance's origin as /status says.
 */
function listenSandbox(rt: Runtime, hostname: string, mainPort: number): Server<undefined> | null {
  const port = sandboxPort(rt.config, mainPort);
  if (port === null || !sandboxRoutes(rt)) return null;
  const app: App = new Elysia();
  for (const p of rt.registry.plugins.values())
    for (const r of p.def.routes ?? []) if (r.sandbox) app.get(r.path, pluginRoute(rt, p.def.name, r, true));
  const plain = (status: number, text: string) => new Response(text, { status, headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" } });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  app.onError(({ code, error }: any) => {
    if (code === "NOT_FOUND") return plain(404, SANDBOX_ONLY);
    const rid = crypto.randomUUID();
    rt.log.error("unhandled", { rid, error: String((error as Error)?.stack ?? error) });
    return errorResponse(error, rid);
  });
  const guard = hostGuard(rt, hostname);
  let server: Server<undefined>;
  try {
    server = Bun.serve({
      port,
      hostname,
      idleTimeout: 120,
      maxRequestBodySize: 64 * 1024,
      fetch: async (req) => {
        const refused = guard?.(req);
        if (refused) return refused;
        if (req.method !== "GET" && req.method !== "HEAD") return secured(plain(405, SANDBOX_ONLY))!;
        let res = await app.handle(req);
        // Nothing served here may set a cookie: browsers would send it to the instance's own port too.
        if (res.headers.has("set-cookie")) {
          res = new Response(res.body, res);
          res.headers.delete("set-cookie");
        }
        return secured(res)!;
      },
    });
  } catch (e) {
    if (sandboxPortNamed(rt.config)) throw new Error(`HEARTH_SANDBOX_PORT: cannot listen on ${hostname}:${port} (${(e as Error).message})`);
    rt.log.warn("documents others wrote stay on the instance's origin: the sandbox port could not be bound", { port, error: (e as Error).message });
    return null;
  }
  // Elysia reads the server from here for requestIP.
  app.server = server as unknown as App["server"];
  sandboxBound(rt, server.port!);
  return server;
}
