// tools/call over the one call path. The answer carries exactly what HTTP
// would have sent as its body: {"result": …} on success, {"error": …} on a
// refusal, as structuredContent and as a JSON text block beside it.
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { dispatch, type CallInput } from "../dispatch.ts";
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

/**
 * One tool call from its start to its answer: its id, its clock, and the
 * caller as the hooks have made it so far (its log line names that caller,
 * a refusal included). Made by startCall; callTool and /mcp's everyday path
 * (everyday.ts) take the same steps with it.
 */
export interface ToolRun {
  entry: MethodEntry;
  requestId: string;
  started: number;
  caller: Caller;
}

export function startCall(rt: Runtime, entry: MethodEntry, caller: Caller): ToolRun {
  // One id per tool call, made here: a session's calls, or a batch's, never share one.
  return { entry, requestId: crypto.randomUUID(), started: rt.log.quiet !== true ? performance.now() : 0, caller };
}

/** The caller after the hooks that may replace it from `_meta`: at once when none waits, else once all have answered. */
export function hookedCaller(rt: Runtime, run: ToolRun, meta: Record<string, unknown> | undefined): Caller | Promise<Caller> {
  const hooks = rt.wiring.mcp.caller;
  for (let i = 0; i < hooks.length; i++) {
    const next = hooks[i](rt, meta, run.caller);
    if (next instanceof Promise) return laterHooks(rt, run, meta, hooks, i + 1, next);
    run.caller = next;
  }
  return run.caller;
}

/** The hooks from the first that answered with a promise on, each waited for in turn. */
async function laterHooks(rt: Runtime, run: ToolRun, meta: Record<string, unknown> | undefined, hooks: CallerHook[], from: number, first: Promise<Caller>): Promise<Caller> {
  run.caller = await first;
  for (let i = from; i < hooks.length; i++) {
    const next = hooks[i](rt, meta, run.caller);
    run.caller = next instanceof Promise ? await next : next;
  }
  return run.caller;
}

function logLine(rt: Runtime, run: ToolRun, status: number) {
  if (rt.log.quiet !== true)
    rt.log.line({
      rid: run.requestId,
      service: run.entry.service,
      method: run.entry.name,
      status,
      via: "mcp",
      ms: Math.round((performance.now() - run.started) * 100) / 100,
      caller: run.caller.account?.id ?? null,
    });
}

/**
 * A successful call's tool result as JSON parts: `json` is HTTP's body
 * (`{"result": …}`, serialised once), the result's structuredContent and,
 * as a string, its one text block; `meta` what the hooks add to its `_meta`.
 */
export function succeeded(rt: Runtime, run: ToolRun, result: unknown): Succeeded {
  logLine(rt, run, 200);
  const body = { result };
  const json = JSON.stringify(body);
  let meta: Record<string, unknown> | undefined;
  for (const hook of rt.wiring.mcp.resultMeta) {
    const more = hook(run.caller);
    if (more) meta = { ...meta, ...more };
  }
  return { body, json, meta };
}
type Succeeded = { body: { result: unknown }; json: string; meta: Record<string, unknown> | undefined };

/** The tool result of a call that succeeded, from succeeded's parts. */
function ownResult(parts: Succeeded): CallToolResult {
  const out: CallToolResult = { content: [{ type: "text", text: parts.json }], structuredContent: parts.body };
  ownText.add(out);
  if (parts.meta) out._meta = parts.meta;
  return out;
}

/**
 * A refused call's tool result: HTTP's `{"error": …}`, or the one a hook
 * gives (a payment's). Throws an RpcError when a hook's result is not one.
 */
export function failed(rt: Runtime, run: ToolRun, e: unknown): CallToolResult {
  const err = asHearthError(e);
  const { requestId, entry } = run;
  if (err.kind === "internal")
    rt.log.error("call failed", { rid: requestId, service: entry.service, method: entry.name, via: "mcp", error: String((e as Error)?.stack ?? e) });
  const body: Record<string, unknown> = { error: err.body(err.kind === "internal" ? requestId : undefined) };
  let special: CallToolResult | undefined;
  try {
    for (const hook of rt.wiring.mcp.errorResult) if ((special = hook(e))) break;
  } finally {
    logLine(rt, run, err.status);
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
}

/** The dispatch input of a tool call. `args` becomes the call's own: dispatch fills defaults into it. */
export const toolInput = (run: ToolRun, call: Pick<ToolCall, "baseUrl" | "ask" | "roundTrip">, args: Record<string, unknown>): CallInput => ({
  service: run.entry.service,
  method: run.entry.name,
  args,
  caller: run.caller,
  requestId: run.requestId,
  baseUrl: call.baseUrl,
  entry: run.entry,
  surface: "mcp",
  ask: call.ask,
  roundTrip: call.roundTrip,
});

/**
 * The call through dispatch, as a tool result. Hooks that answer at once are
 * not waited for, so the call costs dispatch's own turns and one more.
 */
export function callTool(rt: Runtime, call: ToolCall): Promise<CallToolResult> {
  const run = startCall(rt, call.entry, call.caller);
  // dispatch fills defaults into the object it is given; the client's stays untouched.
  const args = { ...(call.args ?? {}) };
  let pending: Promise<unknown>;
  try {
    const caller = hookedCaller(rt, run, call.meta);
    pending = caller instanceof Promise ? caller.then(() => dispatch(rt, toolInput(run, call, args))) : dispatch(rt, toolInput(run, call, args));
  } catch (e) {
    pending = Promise.reject(e);
  }
  return pending.then(
    (result) => ownResult(succeeded(rt, run, result)),
    (e) => failed(rt, run, e),
  );
}
