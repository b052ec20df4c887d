// MCP: /mcp over Streamable HTTP, and `hearth mcp` over stdio.
import { cliCommands } from "../cli/commands.ts";
import { mounts } from "../http/app.ts";
import { mountMcp } from "./http.ts";
import { mcpCommand } from "./stdio.ts";

mounts.push(mountMcp);
cliCommands.set("mcp", mcpCommand);
