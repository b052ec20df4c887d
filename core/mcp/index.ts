// MCP: /mcp over Streamable HTTP, and `hearth mcp` over stdio. The SDK (with
// zod and ajv, ~14 MB resident) loads on the first /mcp request or `hearth mcp`,
// not at every start.
import { clientAddress, route } from "../http/app.ts";
import { preflight, withCors } from "../http/cors.ts";
import type { ClientAddress } from "../http/identify.ts";
import { isFinal } from "../http/respond.ts";
import { defineModule } from "../module.ts";
import type { Runtime } from "../runtime.ts";

type Handler = (req: Request, address: ClientAddress) => Response | Promise<Response>;
const handlers = new WeakMap<Runtime, Promise<Handler>>();
/** Each instance's handler once loaded, called without waiting a turn on its promise. */
const ready = new WeakMap<Runtime, Handler>();

/** The answer with CORS headers, given at once when it is one already, else when it is made: no turn of its own. */
function served(handler: Handler, req: Request, address: ClientAddress): Response | Promise<Response> {
  try {
    const res = handler(req, address);
    return res instanceof Promise ? (isFinal(res) ? res : res.then(withCors)) : withCors(res);
  } catch (e) {
    return Promise.reject(e);
  }
}

function serveMcp(rt: Runtime, req: Request, address: ClientAddress): Response | Promise<Response> {
  // A preflight needs no SDK: answered before it loads.
  if (req.method === "OPTIONS") return preflight("GET, POST, DELETE");
  const loaded = ready.get(rt);
  if (loaded) return served(loaded, req, address);
  let handler = handlers.get(rt);
  if (!handler) {
    handler = import("./http.ts").then((m) => {
      const h = m.mcpHandler(rt);
      ready.set(rt, h);
      return h;
    });
    handlers.set(rt, handler);
  }
  return handler.then((h) => served(h, req, address));
}

export const mcpModule = defineModule({
  name: "mcp",
  provides: {
    // Served by Bun's router like the API (tools/call is as hot a path), and mounted on the app too.
    native: { "/mcp": serveMcp },
    mounts: [
      (app, rt) => {
        app.all(
          "/mcp",
          route((c) => serveMcp(rt, c.request, clientAddress(c))),
          { parse: "none" },
        );
      },
    ],
    cli: {
      mcp: {
        summary: "serve MCP on stdin/stdout against the local data folder, for desktop clients",
        usage: "hearth mcp [--user NAME] [--tools notes,tasks] [--mode discover]",
        run: async (argv, hearth) => (await import("./stdio.ts")).mcpCommand.run(argv, hearth),
      },
    },
  },
});
