// MCP: /mcp over Streamable HTTP, and `hearth mcp` over stdio. The SDK (with
// zod and ajv, ~14 MB resident) loads on the first /mcp request or `hearth mcp`,
// not at every start.
import { cliCommands } from "../cli/commands.ts";
import { clientAddress, mounts, route } from "../http/app.ts";
import type { Runtime } from "../runtime.ts";

const handlers = new WeakMap<Runtime, Promise<(req: Request, address: string) => Promise<Response>>>();

mounts.push((app, rt) => {
  app.all(
    "/mcp",
    route(async (c) => {
      let handler = handlers.get(rt);
      if (!handler) {
        handler = import("./http.ts").then((m) => m.mcpHandler(rt));
        handlers.set(rt, handler);
      }
      return (await handler)(c.request, clientAddress(c));
    }),
    { parse: "none" },
  );
});

cliCommands.set("mcp", {
  summary: "serve MCP on stdin/stdout against the local data folder, for desktop clients",
  usage: "hearth mcp [--user NAME] [--tools notes,tasks]",
  run: async (argv) => (await import("./stdio.ts")).mcpCommand.run(argv),
});
