// The SDK's MCP server, answering tools/list and tools/call from the registry.
// The same server serves Streamable HTTP (one per session, or one per
// stateless request) and stdio; only where the caller comes from differs.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolRequest,
  type CallToolResult,
  type ListToolsResult,
  type ServerNotification,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv-provider.js";
import pkg from "../../package.json" with { type: "json" };
import type { Caller } from "../plugin.ts";
import type { Runtime } from "../runtime.ts";
import { callTool } from "./call.ts";
import { callDiscoveryTool, discoveryTools, isDiscoveryTool, type ToolsMode } from "./discover.ts";
import { inFilter, visibleTools, toolTable } from "./tools.ts";

/** What one MCP request runs as: who calls, which tools this endpoint exposes, and where links point. */
export interface McpCallContext {
  caller: Caller;
  filter: Set<string> | null;
  baseUrl: string;
  /** Every visible tool listed, or the three discovery tools (discover.ts). */
  mode?: ToolsMode;
}

export type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;
export type ContextOf = (extra: Extra) => McpCallContext;

export const SERVER_INFO = { name: "hearth", title: "Hearth", version: pkg.version };

export const INSTRUCTIONS =
  "Hearth's methods as tools: each tool is <service>_<method> and does what the HTTP method /api/v1/<service>/<method> does, at the same price. " +
  'A refusal comes back as a tool error whose structured content is {"error": {status, kind, message, field?}}; a success as {"result": …}.';

// Only used for elicitation, which this server never asks for; one instance spares building Ajv per server.
let validator: AjvJsonSchemaValidator | null = null;

/** tools/list: the tools this caller may see at this endpoint. */
export function listTools(rt: Runtime, c: McpCallContext): ListToolsResult {
  return { tools: c.mode === "discover" ? discoveryTools : visibleTools(rt, c.caller, c.filter) };
}

/** tools/call: the method through dispatch. An unknown tool is a protocol error, not a tool result, as the protocol asks. */
export function callToolRequest(rt: Runtime, c: McpCallContext, params: CallToolRequest["params"]): Promise<CallToolResult> {
  // A tool known by name is still called directly in discovery mode; the three discovery tools only there.
  if (c.mode === "discover" && isDiscoveryTool(params.name)) return callDiscoveryTool(rt, c, params);
  const entry = toolTable(rt).byName.get(params.name);
  if (!entry || !inFilter(entry, c.filter)) throw new McpError(ErrorCode.InvalidParams, `no tool "${params.name}" here; tools/list names them`);
  return callTool(rt, { entry, args: params.arguments, meta: params._meta, caller: c.caller, baseUrl: c.baseUrl });
}

/** What this server offers, the same in every protocol era. */
export const CAPABILITIES = { tools: {} };

/**
 * The requests this server answers, by method: each era's server (SDK 1.x
 * for 2025-11-25 sessions, SDK 2.x for 2026-07-28 requests) registers these
 * same functions, so the eras cannot drift apart.
 */
export const mcpRequests = {
  "tools/list": (rt: Runtime, c: McpCallContext, _params: unknown) => listTools(rt, c),
  "tools/call": (rt: Runtime, c: McpCallContext, params: unknown) => callToolRequest(rt, c, params as CallToolRequest["params"]),
};

export function createMcpServer(rt: Runtime, contextOf: ContextOf): Server {
  validator ??= new AjvJsonSchemaValidator();
  const server = new Server(SERVER_INFO, { capabilities: CAPABILITIES, instructions: INSTRUCTIONS, jsonSchemaValidator: validator });
  server.setRequestHandler(ListToolsRequestSchema, (req, extra) => mcpRequests["tools/list"](rt, contextOf(extra), req.params));
  server.setRequestHandler(CallToolRequestSchema, (req, extra) => mcpRequests["tools/call"](rt, contextOf(extra), req.params));
  return server;
}
