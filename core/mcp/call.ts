// tools/call over the one call path. The answer carries exactly what HTTP
// would have sent as its body: {"result": …} on success, {"error": …} on a
// refusal, as structuredContent and as a JSON text block beside it.
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { dispatch } from "../dispatch.ts";
import { asHearthError } from "../errors.ts";
import type { Caller } from "../plugin.ts";
import type { MethodEntry } from "../registry.ts";
import type { Runtime } from "../runtime.ts";
import { INVALID_PARAMS, RpcError } from "./rpc.ts";

export interface ToolCall {
  entry: MethodEntry;
  args: Record<string, unknown> | undefined;
  meta?: Record<string, unknown>;
  caller: Caller;
  baseUrl: string;
}

export async function callTool(rt: Runtime, call: ToolCall): Promise<CallToolResult> {
  const logs = rt.log.quiet !== true;
  const started = logs ? performance.now() : 0;
  const { entry } = call;
  // One id per tool call, made here: a session's calls, or a batch's, never share one.
  const requestId = crypto.randomUUID();
  let caller = call.caller;
  let body: Record<string, unknown>;
  let status = 200;
  let special: CallToolResult | undefined;
  try {
    for (const hook of rt.wiring.mcp.caller) {
      const next = hook(rt, call.meta, caller);
      caller = next instanceof Promise ? await next : next;
    }
    // dispatch fills defaults into the object it is given; the client's stays untouched.
    const args = { ...(call.args ?? {}) };
    const result = await dispatch(rt, { service: entry.service, method: entry.name, args, caller, requestId, baseUrl: call.baseUrl, entry, surface: "mcp" });
    body = { result };
  } catch (e) {
    const err = asHearthError(e);
    status = err.status;
    if (err.kind === "internal")
      rt.log.error("call failed", { rid: requestId, service: entry.service, method: entry.name, via: "mcp", error: String((e as Error)?.stack ?? e) });
    body = { error: err.body(err.kind === "internal" ? requestId : undefined) };
    for (const hook of rt.wiring.mcp.errorResult) if ((special = hook(e))) break;
  } finally {
    if (logs)
      rt.log.line({
        rid: requestId,
        service: entry.service,
        method: entry.name,
        status,
        via: "mcp",
        ms: Math.round((performance.now() - started) * 100) / 100,
        caller: caller.account?.id ?? null,
      });
  }
  if (special) {
    const sc = { ...(special.structuredContent ?? {}) };
    sc.error ??= body.error;
    // Results made elsewhere are checked as the SDK's server checks them; the ones built below are valid by construction.
    const checked = CallToolResultSchema.safeParse({ ...special, structuredContent: sc, isError: true });
    if (!checked.success) throw new RpcError(INVALID_PARAMS, `Invalid tools/call result: ${checked.error.message}`);
    return checked.data;
  }
  const out: CallToolResult = { content: [{ type: "text", text: JSON.stringify(body) }], structuredContent: body };
  if (status !== 200) out.isError = true;
  else {
    let meta: Record<string, unknown> | undefined;
    for (const hook of rt.wiring.mcp.resultMeta) {
      const more = hook(caller);
      if (more) meta = { ...meta, ...more };
    }
    if (meta) out._meta = meta;
  }
  return out;
}
