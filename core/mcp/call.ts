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
import type { McpCallContext } from "./server.ts";

export interface ToolCall {
  entry: MethodEntry;
  args: Record<string, unknown> | undefined;
  meta?: Record<string, unknown>;
  caller: Caller;
  baseUrl: string;
  /** Asks the person at the client (elicitation), when it declared it can. */
  ask?: McpCallContext["ask"];
  /** The client is asked in the answer and calls again with the reply (2026-07-28). */
  roundTrip?: McpCallContext["roundTrip"];
}

/**
 * Results made below whose one text block is the JSON of their
 * structuredContent: an answer that carries both splices that one text
 * rather than serialising the body a second time (answer.ts).
 */
const ownText = new WeakSet<CallToolResult>();
/** The JSON text of a result's structuredContent, when it is already its text block. */
export const structuredText = (r: CallToolResult): string | undefined => (ownText.has(r) ? (r.content[0] as { text: string }).text : undefined);

type CallerHook = Runtime["wiring"]["mcp"]["caller"][number];

/** The hooks from the first that answered with a promise on, each waited for in turn. */
async function laterHooks(rt: Runtime, call: ToolCall, hooks: CallerHook[], from: number, first: Promise<Caller>, seen: (c: Caller) => void): Promise<Caller> {
  let caller = await first;
  seen(caller);
  for (let i = from; i < hooks.length; i++) {
    const next = hooks[i](rt, call.meta, caller);
    caller = next instanceof Promise ? await next : next;
    seen(caller);
  }
  return caller;
}

/**
 * The call through dispatch, as a tool result. Hooks that answer at once are
 * not waited for, so the call costs dispatch's own turns and one more.
 */
export function callTool(rt: Runtime, call: ToolCall): Promise<CallToolResult> {
  const logs = rt.log.quiet !== true;
  const started = logs ? performance.now() : 0;
  const { entry } = call;
  // One id per tool call, made here: a session's calls, or a batch's, never share one.
  const requestId = crypto.randomUUID();
  let caller = call.caller;
  const seen = (c: Caller) => {
    caller = c;
  };
  const run = (c: Caller) =>
    // dispatch fills defaults into the object it is given; the client's stays untouched.
    dispatch(rt, { service: entry.service, method: entry.name, args: { ...(call.args ?? {}) }, caller: c, requestId, baseUrl: call.baseUrl, entry, surface: "mcp", ask: call.ask, roundTrip: call.roundTrip });
  let pending: Promise<unknown>;
  try {
    const hooks = rt.wiring.mcp.caller;
    let later: Promise<Caller> | null = null;
    for (let i = 0; i < hooks.length; i++) {
      const next = hooks[i](rt, call.meta, caller);
      if (next instanceof Promise) {
        later = laterHooks(rt, call, hooks, i + 1, next, seen);
        break;
      }
      caller = next;
    }
    pending = later ? later.then(run) : run(caller);
  } catch (e) {
    pending = Promise.reject(e);
  }
  const line = (status: number) => {
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
  };
  return pending.then(
    (result) => {
      line(200);
      const body = { result };
      const out: CallToolResult = { content: [{ type: "text", text: JSON.stringify(body) }], structuredContent: body };
      ownText.add(out);
      let meta: Record<string, unknown> | undefined;
      for (const hook of rt.wiring.mcp.resultMeta) {
        const more = hook(caller);
        if (more) meta = { ...meta, ...more };
      }
      if (meta) out._meta = meta;
      return out;
    },
    (e) => {
      const err = asHearthError(e);
      if (err.kind === "internal")
        rt.log.error("call failed", { rid: requestId, service: entry.service, method: entry.name, via: "mcp", error: String((e as Error)?.stack ?? e) });
      const body: Record<string, unknown> = { error: err.body(err.kind === "internal" ? requestId : undefined) };
      let special: CallToolResult | undefined;
      try {
        for (const hook of rt.wiring.mcp.errorResult) if ((special = hook(e))) break;
      } finally {
        line(err.status);
      }
      if (special) {
        const sc = { ...(special.structuredContent ?? {}) };
        sc.error ??= body.error;
        // Results made elsewhere are checked as the SDK's server checks them; the ones built here are valid by construction.
        const checked = CallToolResultSchema.safeParse({ ...special, structuredContent: sc, isError: true });
        if (!checked.success) throw new RpcError(INVALID_PARAMS, `Invalid tools/call result: ${checked.error.message}`);
        return checked.data;
      }
      const out: CallToolResult = { content: [{ type: "text", text: JSON.stringify(body) }], structuredContent: body, isError: true };
      ownText.add(out);
      return out;
    },
  );
}
