// tools/call over the one call path. The answer carries exactly what HTTP
// would have sent as its body: {"result": …} on success, {"error": …} on a
// refusal, as structuredContent and as a JSON text block beside it.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { dispatch } from "../dispatch.ts";
import { asHearthError } from "../errors.ts";
import type { Caller } from "../plugin.ts";
import type { MethodEntry } from "../registry.ts";
import type { Runtime } from "../runtime.ts";

/**
 * Looks at a tools/call request's `_meta` (where a payment travels over MCP)
 * and may answer with the caller it proves, or decline with null.
 */
export type MetaIdentifier = (rt: Runtime, meta: Record<string, unknown>, caller: Caller) => Caller | null | Promise<Caller | null>;
export const metaIdentifiers: MetaIdentifier[] = [];

export interface ToolCall {
  entry: MethodEntry;
  args: Record<string, unknown> | undefined;
  meta?: Record<string, unknown>;
  caller: Caller;
  requestId: string;
  baseUrl: string;
}

export async function callTool(rt: Runtime, call: ToolCall): Promise<CallToolResult> {
  const started = performance.now();
  const { entry, requestId } = call;
  let caller = call.caller;
  let body: Record<string, unknown>;
  let status = 200;
  try {
    if (call.meta && metaIdentifiers.length) {
      for (const id of metaIdentifiers) {
        const c = await id(rt, call.meta, caller);
        if (c) {
          c.address ??= caller.address;
          caller = c;
          break;
        }
      }
    }
    // dispatch fills defaults into the object it is given; the client's stays untouched.
    const args = { ...(call.args ?? {}) };
    const result = await dispatch(rt, { service: entry.service, method: entry.name, args, caller, requestId, baseUrl: call.baseUrl });
    body = { result };
  } catch (e) {
    const err = asHearthError(e);
    status = err.status;
    if (err.kind === "internal") rt.log.error("call failed", { rid: requestId, service: entry.service, method: entry.name, via: "mcp", error: String((e as Error)?.stack ?? e) });
    body = { error: err.body(err.kind === "internal" ? requestId : undefined) };
  } finally {
    rt.log.line({ rid: requestId, service: entry.service, method: entry.name, status, via: "mcp", ms: Math.round((performance.now() - started) * 100) / 100, caller: caller.account?.id ?? null });
  }
  const out: CallToolResult = { content: [{ type: "text", text: JSON.stringify(body) }], structuredContent: body };
  if (status !== 200) out.isError = true;
  return out;
}
