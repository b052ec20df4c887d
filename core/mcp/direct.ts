// The two requests clients send by the thousand, tools/call and tools/list,
// answered as the SDK's server answers them but without building a server and
// transport for each one: per request, that machinery costs several times the
// method itself. The same SDK schemas check the message and the result, the
// same handlers answer, and the envelope is the one the SDK's JSON mode sends.
// Anything else (initialize, notifications, batches, pings, streams, a message
// the schemas refuse, an unsupported protocol version) goes to the SDK, which
// then gives its own answer or refusal.
import { CallToolRequestSchema, ListToolsRequestSchema, SUPPORTED_PROTOCOL_VERSIONS, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Runtime } from "../runtime.ts";
import { ANSWER_HEADERS, CALL_PARAMS, ENVELOPE, failureAnswer, headersOf, isJsonType, isRecord, membersWithin, toolAnswer, type McpHeaders } from "./envelope.ts";
import { callToolRequest, listTools, type McpCallContext } from "./server.ts";

/** Whether the SDK's 2025 transport would take the request as it is: its Accept, its protocol version, its JSON. */
export function acceptable(h: McpHeaders): boolean {
  if (!h.accept.includes("application/json") || !h.accept.includes("text/event-stream")) return false;
  if (h.version !== null && !SUPPORTED_PROTOCOL_VERSIONS.includes(h.version)) return false;
  return isJsonType(h.type);
}

type Answer = (rt: Runtime, ctx: McpCallContext, msg: unknown) => Promise<unknown> | null;

const answers = new Map<unknown, Answer>([
  [
    "tools/list",
    (rt, ctx, msg) => {
      const parsed = ListToolsRequestSchema.safeParse(msg);
      return parsed.success ? Promise.resolve(listTools(rt, ctx, parsed.data.params?._meta)) : null;
    },
  ],
  [
    "tools/call",
    (rt, ctx, msg) => {
      // The common shape ({name, arguments?, _meta?}, all plainly typed) is one the SDK's schema
      // accepts unchanged, so it skips the schema's parse (several µs per call); anything else goes through it.
      const plain = plainCallParams(msg);
      if (plain) return callToolRequest(rt, ctx, plain);
      const parsed = CallToolRequestSchema.safeParse(msg);
      if (!parsed.success || parsed.data.params.task) return null;
      // callTool checks the results it does not build itself, as the SDK's server checks every one.
      return callToolRequest(rt, ctx, parsed.data.params);
    },
  ],
]);


/** tools/call params in their everyday form, or null to leave the message to the SDK's schema. */
export function plainCallParams(msg: unknown): { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> } | null {
  if (!isRecord(msg) || !isRecord(msg.params)) return null;
  const p = msg.params;
  if (!membersWithin(p, CALL_PARAMS)) return null;
  if (typeof p.name !== "string") return null;
  if (p.arguments !== undefined && !isRecord(p.arguments)) return null;
  if (p._meta !== undefined && !isRecord(p._meta)) return null;
  // progressToken and friends have their own rules in the schema: leave those to it.
  if (p._meta !== undefined && Object.keys(p._meta).length > 0) return null;
  return p as { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> };
}

/**
 * The SDK's JSON-RPC request schema, checked by hand on the hot path: a
 * strict object, version "2.0", a string or whole-number id, and params (if
 * any) an object that the method's own schema then checks. Anything doubtful
 * is left to the SDK, so this may refuse more than the schema but never less.
 */
export function isPlainRequest(m: Record<string, unknown>): boolean {
  if (!membersWithin(m, ENVELOPE)) return false;
  if (m.jsonrpc !== "2.0") return false;
  if (typeof m.id !== "string" && !Number.isSafeInteger(m.id)) return false;
  return m.params === undefined || (typeof m.params === "object" && m.params !== null && !Array.isArray(m.params));
}


/**
 * A session's answer headers, made once per session rather than copied and
 * added to on every answer (a Response copies the headers it is given). The
 * ids are the server's own, of open sessions; the oldest go past a bound.
 */
const bySession = new Map<string, Headers>();
const SESSION_HEADERS_KEPT = 1024;
export function sessionHeaders(sessionId: string): Headers {
  let h = bySession.get(sessionId);
  if (!h) {
    h = new Headers(ANSWER_HEADERS);
    h.set("mcp-session-id", sessionId);
    if (bySession.size >= SESSION_HEADERS_KEPT) bySession.delete(bySession.keys().next().value!);
    bySession.set(sessionId, h);
  }
  return h;
}

/** The answer to one tools/call or tools/list message, or null when the SDK should take it. */
export function directAnswer(rt: Runtime, ctx: McpCallContext, msg: unknown, req: Request, sessionId?: string): Promise<Response> | null {
  if (!msg || typeof msg !== "object" || Array.isArray(msg)) return null;
  const answer = answers.get((msg as { method?: unknown }).method);
  if (!answer) return null;
  if (!isPlainRequest(msg as Record<string, unknown>) || !acceptable(headersOf(req))) return null;
  let pending: Promise<unknown> | null;
  try {
    pending = answer(rt, ctx, msg);
  } catch (e) {
    pending = Promise.reject(e);
  }
  return pending && answered(pending, (msg as { id: string | number }).id, sessionId);
}

/** The JSON-RPC answer to a request answered here, once its result (or refusal) is in. */
function answered(pending: Promise<unknown>, id: string | number, sessionId: string | undefined): Promise<Response> {
  const headers = sessionId === undefined ? ANSWER_HEADERS : sessionHeaders(sessionId);
  return pending.then(
    (result) => toolAnswer(result as CallToolResult, id, false, headers),
    (e) => failureAnswer(e, id, headers),
  );
}
