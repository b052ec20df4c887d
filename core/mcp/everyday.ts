// The everyday tools/call, in either protocol era, on the path POST
// /api/v1/<service>/<method> takes: the body read once as text and parsed
// once, the message's shape checked by hand, the call dispatched and awaited
// in the same async step as the read (http.ts's posted), and the answer's
// text made once by splicing HTTP's body, serialised once, into the
// envelope. Anything this does not take (another method, a tool this endpoint
// has not, a client that renders MCP Apps or polls tasks, `_meta` in use)
// goes on to direct.ts, modern.ts and the SDKs as before, which answer it the
// same way more slowly, or refuse it.
import type { MethodEntry } from "../registry.ts";
import { completeAnswer } from "../http/respond.ts";
import type { Runtime } from "../runtime.ts";
import { rendersApps } from "./apps.ts";
import { failed, succeeded, type ToolRun } from "./call.ts";
import { acceptable, isPlainRequest, plainCallParams, sessionHeaders } from "./direct.ts";
import { isDiscoveryTool } from "./discover.ts";
import { ANSWER_HEADERS, answerJson, failureAnswer, isRecord, resultJson, stamped, toolAnswer, type McpHeaders } from "./envelope.ts";
import { MODERN_REVISION, modernCall } from "./modern.ts";
import type { McpCallContext } from "./server.ts";
import type { McpSessions, Session } from "./sessions.ts";
import { inFilter, toolTable } from "./tools.ts";

/** An everyday tools/call, checked: what runs it and what its answer is made with. */
export interface Everyday {
  entry: MethodEntry;
  /** The arguments, the call's own: they come from this request's body, parsed here, which nothing else holds. */
  args: Record<string, unknown>;
  meta: Record<string, unknown> | undefined;
  id: string | number;
  /** A 2026-07-28 request: its result carries resultType and the server's stamp. */
  modern: boolean;
  headers: Headers;
  /** The caller's context, a session's client and way to ask it in. */
  ctx: McpCallContext;
}

/**
 * The message as an everyday tools/call, or null to leave it to the rest of
 * /mcp. A 2025 one alone or in a live session, its params plain (a name,
 * arguments, no `_meta` in use), which every check the rest makes would let
 * through; a 2026-07-28 one as modernCall takes it.
 */
export function everyday(rt: Runtime, sessions: McpSessions, req: Request, h: McpHeaders, session: Session | null, ctx: McpCallContext, body: unknown): Everyday | null {
  let name: string;
  let args: Record<string, unknown> | undefined;
  let meta: Record<string, unknown> | undefined;
  let id: string | number;
  let headers = ANSWER_HEADERS;
  const modern = h.version === MODERN_REVISION;
  if (modern) {
    // A 2026-07-28 request stands alone: a session id beside it changes nothing.
    const call = modernCall(req, h, body);
    if (!call) return null;
    ({ name, arguments: args, _meta: meta } = call.params);
    id = call.id;
  } else {
    // A session that is gone is told so by the rest, whatever it sent.
    if (h.sid !== null && !session) return null;
    if (!isRecord(body) || body.method !== "tools/call" || !isPlainRequest(body)) return null;
    const params = plainCallParams(body);
    if (!params || !acceptable(h)) return null;
    ({ name, arguments: args, _meta: meta } = params);
    id = body.id as string | number;
    if (session) {
      ctx = { ...ctx, client: sessions.client(session), ask: sessions.asker(session, ctx.baseUrl) };
      headers = sessionHeaders(h.sid!);
    }
  }
  // The discovery tools, a tool this endpoint has not, and a call whose result links to its view are answered by the rest.
  if (ctx.mode === "discover" && isDiscoveryTool(name)) return null;
  const entry = toolTable(rt).byName.get(name);
  if (!entry || !inFilter(entry, ctx.filter) || rendersApps(ctx, meta)) return null;
  return { entry, args: args ?? {}, meta, id, modern, headers, ctx };
}

/** The answer to an everyday call that succeeded: HTTP's body, serialised once, spliced into the envelope. */
export function calledAnswer(rt: Runtime, run: ToolRun, call: Everyday, result: unknown): Response {
  const parts = succeeded(rt, run, result);
  const text = answerJson(resultJson(parts.json, false, parts.meta, call.modern ? stamped : undefined), call.id);
  return completeAnswer(new Response(text, { status: 200, headers: call.headers }));
}

/** The answer to an everyday call that was refused: the tool error HTTP's refusal makes, or the protocol error a bad hook result is. */
export function refusedAnswer(rt: Runtime, run: ToolRun, call: Everyday, e: unknown): Response {
  try {
    return toolAnswer(failed(rt, run, e), call.id, call.modern, call.headers);
  } catch (bad) {
    return failureAnswer(bad as { code?: unknown; message?: string; data?: unknown }, call.id, call.headers);
  }
}
