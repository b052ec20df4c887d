// The two requests clients send by the thousand, tools/call and tools/list,
// answered as the SDK's server answers them but without building a server and
// transport for each one: per request, that machinery costs several times the
// method itself. The same SDK schemas check the message and the result, the
// same handlers answer, and the envelope is the one the SDK's JSON mode sends.
// Anything else (initialize, notifications, batches, pings, streams, a message
// the schemas refuse, an unsupported protocol version) goes to the SDK, which
// then gives its own answer or refusal.
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, SUPPORTED_PROTOCOL_VERSIONS, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { completeAnswer } from "../http/respond.ts";
import type { Runtime } from "../runtime.ts";
import { ANSWER_HEADERS, answerJson, CALL_PARAMS, ENVELOPE, isJsonType, isRecord, membersWithin, toolResultJson } from "./envelope.ts";
import { callToolRequest, listTools, type McpCallContext } from "./server.ts";

function acceptable(req: Request): boolean {
  const accept = req.headers.get("accept") ?? "";
  if (!accept.includes("application/json") || !accept.includes("text/event-stream")) return false;
  const version = req.headers.get("mcp-protocol-version");
  if (version !== null && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return false;
  return isJsonType(req.headers.get("content-type") ?? "");
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
function plainCallParams(msg: unknown): { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> } | null {
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
function isPlainRequest(m: Record<string, unknown>): boolean {
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
function sessionHeaders(sessionId: string): Headers {
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
  if (!isPlainRequest(msg as Record<string, unknown>) || !acceptable(req)) return null;
  let pending: Promise<unknown> | null;
  try {
    pending = answer(rt, ctx, msg);
  } catch (e) {
    pending = Promise.reject(e);
  }
  return pending && answered(pending, (msg as { id: string | number }).id, sessionId);
}

/**
 * The everyday 2025 tools/call alone, answered as directAnswer answers it:
 * params of the plain form with no `_meta` in use, so nothing in the message
 * claims the 2026-07-28 envelope or needs the SDK's schema, and no check
 * /mcp makes before directAnswer could refuse it. Null for anything else.
 */
export function everydayCall(rt: Runtime, ctx: McpCallContext, msg: unknown, req: Request, sessionId?: string): Promise<Response> | null {
  if (!isRecord(msg) || msg.method !== "tools/call" || !isPlainRequest(msg)) return null;
  const plain = plainCallParams(msg);
  if (!plain || !acceptable(req)) return null;
  let pending: Promise<unknown>;
  try {
    pending = callToolRequest(rt, ctx, plain);
  } catch (e) {
    pending = Promise.reject(e);
  }
  return answered(pending, msg.id as string | number, sessionId);
}

/** The JSON-RPC answer to a request answered here, once its result (or refusal) is in. */
function answered(pending: Promise<unknown>, id: string | number, sessionId: string | undefined): Promise<Response> {
  const headers = sessionId === undefined ? ANSWER_HEADERS : sessionHeaders(sessionId);
  return pending.then(
    (result) => {
      // A tool result made by callTool carries its body's JSON already: spliced, it is not serialised again.
      const spliced = toolResultJson(result as CallToolResult, undefined);
      return completeAnswer(new Response(spliced !== null ? answerJson(spliced, id) : JSON.stringify({ result, jsonrpc: "2.0", id }), { status: 200, headers }));
    },
    (e: { code?: unknown; message?: string; data?: unknown }) => {
      const error: Record<string, unknown> = { code: Number.isSafeInteger(e.code) ? e.code : ErrorCode.InternalError, message: e.message ?? "Internal error" };
      if (e.data !== undefined) error.data = e.data;
      return completeAnswer(new Response(JSON.stringify({ jsonrpc: "2.0", id, error }), { status: 200, headers }));
    },
  );
}
