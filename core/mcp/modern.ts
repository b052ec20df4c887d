// The 2026-07-28 protocol revision, served by the official SDK 2.x beside the
// 2025-11-25 sessions that SDK 1.x serves. A 2026-07-28 request stands alone:
// no initialize and no session; it names its protocol version and client
// capabilities in `_meta`, repeats its method (and tool) in headers, and the
// answer carries `resultType`. `server/discover` tells a client which
// revisions this endpoint speaks. Which era a request belongs to is decided
// per request, by the SDK's own classifier, so both eras share one /mcp and
// one stdio command.
import {
  classifyInboundRequest,
  createMcpHandler,
  Server,
  type McpHttpHandler,
  type McpRequestContext,
} from "@modelcontextprotocol/server";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/server/validators/ajv";
import type { Runtime } from "../runtime.ts";
import { CAPABILITIES, INSTRUCTIONS, mcpRequests, SERVER_INFO, type McpCallContext } from "./server.ts";

// Only used for elicitation, which this server never asks for; one instance spares building Ajv per request.
let validator: AjvJsonSchemaValidator | null = null;

/** An SDK 2.x server answering the same requests as the 2025 one, for the caller `contextOf` gives. */
export function createEraServer(rt: Runtime, contextOf: (era: McpRequestContext) => McpCallContext, era: McpRequestContext): Server {
  validator ??= new AjvJsonSchemaValidator();
  const server = new Server(SERVER_INFO, {
    capabilities: CAPABILITIES,
    instructions: INSTRUCTIONS,
    jsonSchemaValidator: validator,
  });
  const ctx = contextOf(era);
  for (const [method, answer] of Object.entries(mcpRequests))
    // The table's methods are all ones the SDK knows; their results have the shapes it expects.
    server.setRequestHandler(method as "tools/list", ((req: { params?: unknown }) => answer(rt, ctx, req.params)) as never);
  return server;
}

const headerOf = (req: Request, name: string) => req.headers.get(name) ?? undefined;

/**
 * True when a POST body belongs to the 2026-07-28 era, or is one of its
 * malformed forms (a bad envelope, a header contradicting the body) that the
 * 2026-07-28 rules answer. Everything else, initialize included, is 2025-era.
 */
export function isModernRequest(req: Request, body: unknown): boolean {
  const route = classifyInboundRequest({
    httpMethod: req.method,
    protocolVersionHeader: headerOf(req, "mcp-protocol-version"),
    mcpMethodHeader: headerOf(req, "mcp-method"),
    mcpNameHeader: headerOf(req, "mcp-name"),
    body,
  });
  // A body that is not JSON-RPC at all names no era; the 2025 transport refuses it as it always has.
  if (route.kind === "reject") return route.rung !== "jsonrpc-shape";
  return route.kind === "modern";
}

/**
 * The 2026-07-28 /mcp handler of one instance: each request gets a server of
 * its own, built for the caller identified from that request, and nothing is
 * kept between requests. 2025-era requests never reach it.
 */
export function modernHttpHandler(rt: Runtime, bodyLimit: number): McpHttpHandler {
  const contextOf = (era: McpRequestContext) => (era.authInfo?.extra as { hearth: McpCallContext }).hearth;
  return createMcpHandler((era) => createEraServer(rt, contextOf, era), { legacy: "reject", maxRequestBodySize: bodyLimit });
}
