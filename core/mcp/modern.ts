// The 2026-07-28 protocol revision, served by the official SDK 2.x beside the
// 2025-11-25 sessions that SDK 1.x serves. A 2026-07-28 request stands alone:
// no initialize and no session; it names its protocol version and client
// capabilities in `_meta`, repeats its method (and tool) in headers, and the
// answer carries `resultType`. `server/discover` tells a client which
// revisions this endpoint speaks. Which era a request belongs to is decided
// per request, by the SDK's own classifier, so both eras share one /mcp and
// one stdio command.
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  classifyInboundRequest,
  PROTOCOL_VERSION_META_KEY,
  createMcpHandler,
  inputRequired,
  inputResponse,
  Server,
  type InputRequiredResult,
  type McpHttpHandler,
  type McpRequestContext,
} from "@modelcontextprotocol/server";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/server/validators/ajv";
import type { CallToolResult, ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { asHearthError } from "../errors.ts";
import type { Runtime } from "../runtime.ts";
import { ANSWER_HEADERS, CALL_PARAMS, ENVELOPE, failureAnswer, headersOf, isJsonType, isRecord, membersWithin, toolAnswer, type McpHeaders } from "./envelope.ts";
import type { RoundTrip } from "../policy/approvals.ts";
import { APPROVE_FORM, CAPABILITIES, callToolRequest, INSTRUCTIONS, mcpRequests, SERVER_INFO, taskNotifier, tasks2025, withClient, type McpCallContext } from "./server.ts";
import { RpcError, UNAUTHORIZED } from "./rpc.ts";
import { advance, cancelTask, MISSING_CAPABILITY, ownTask, task2026, TASKS_EXTENSION, type TaskNotify } from "./tasks.ts";
import { inFilter, toolTable } from "./tools.ts";

// Only used for elicitation, which this server never asks for; one instance spares building Ajv per request.
let validator: AjvJsonSchemaValidator | null = null;

/**
 * An SDK 2.x server answering the same requests as the 2025 one. `contextOf`
 * is asked on every request, not once per server: a stdio connection lives
 * long, and its token's revocation or expiry must hold from the next call.
 */
export function createEraServer(rt: Runtime, contextOf: (era: McpRequestContext) => McpCallContext | Promise<McpCallContext>, era: McpRequestContext): Server {
  validator ??= new AjvJsonSchemaValidator();
  const server = new EraServer(SERVER_INFO, {
    capabilities: CAPABILITIES,
    instructions: INSTRUCTIONS,
    jsonSchemaValidator: validator,
  });
  // A 2025 connection (stdio's, opened with initialize) is told of its tasks' changes on the connection itself. A
  // 2026-07-28 request stands alone, with no connection to tell later: the Tasks extension sends a task's status only to
  // a client listening on subscriptions/listen, which this server does not offer, so such a client polls tasks/get.
  const notifyTask = era.era === "legacy" ? taskNotifier(rt, server) : undefined;
  for (const [method, answer] of Object.entries(mcpRequests))
    // The table's methods are all ones the SDK knows; their results have the shapes it expects.
    server.setRequestHandler(method as "tools/list", ((req: { params?: unknown }, x?: HandlerContext) => {
      const run = (given: McpCallContext): unknown => {
        const client = clientOf(server, x);
        const c = notifyTask ? { ...given, notifyTask } : given;
        // A client that can poll a task is given one for a long wait, rather than asked in the answer.
        if (method === "tools/call" && pollsTasks(client)) return answer(rt, { ...withClient(c, client), tasks: true }, req.params);
        const asked = method === "tools/call" ? roundTripOf(client, x?.mcpReq, c.baseUrl) : null;
        if (!asked) return answer(rt, withClient(c, client), req.params);
        // A call its policy asks about ends this request asking the client, in place of its refusal.
        return (answer(rt, { ...withClient(c, client), roundTrip: asked.trip }, req.params) as Promise<unknown>).then((out) => asked.result ?? out);
      };
      const refused = (e: unknown) => callerRefused(method, e);
      let c: McpCallContext | Promise<McpCallContext>;
      try {
        c = contextOf(era);
      } catch (e) {
        return refused(e);
      }
      return c instanceof Promise ? c.then(run, refused) : run(c);
    }) as never);
  // A connection that opened with initialize (stdio's 2025 era) has 2025-11-25's tasks; a 2026-07-28 one the extension's.
  if (era.era === "legacy") registerTasks2025(server, rt, contextOf, era, notifyTask!);
  else registerTasks(rt, server, contextOf, era);
  return server;
}

/** 2025-11-25's tasks/get, tasks/result, tasks/list and tasks/cancel on an SDK 2.x server, the same functions the 1.x sessions use. */
function registerTasks2025(server: Server, rt: Runtime, contextOf: (era: McpRequestContext) => McpCallContext | Promise<McpCallContext>, era: McpRequestContext, notifyTask: TaskNotify) {
  // 2025-11-25's spec methods, which the SDK 2.x types leave to the Tasks extension; its 2025 codec knows them.
  const on = server.setRequestHandler.bind(server) as unknown as (method: string, handler: (req: { params?: unknown }, x?: HandlerContext) => Promise<unknown>) => void;
  for (const [method, answer] of Object.entries(tasks2025))
    on(method, async (req, x) => {
      let c: McpCallContext;
      try {
        c = await contextOf(era);
      } catch (e) {
        // A token revoked or expired since: refused as any other request is.
        return callerRefused(method, e);
      }
      return answer(rt, { ...withClient(c, clientOf(server, x)), notifyTask }, req.params, x?.mcpReq?.signal);
    });
}

/**
 * The SDK's server, letting a tools/call answer with a task: 2026-07-28's
 * `resultType: "task"`, or 2025-11-25's CreateTaskResult (`{task}`, the
 * answer to a call made with `task`, which a 2025 connection over stdio gets
 * from this server). The SDK checks a tools/call result as a CallToolResult,
 * and refuses one that carries `task` without `content` (or would give a
 * 2026 task the empty `content` a result without one gets): the task goes
 * round that check, which sees an empty result in its place, and is
 * answered as it was made.
 */
class EraServer extends Server {
  protected override _wrapHandler(method: string, handler: Parameters<Server["_wrapHandler"]>[1]): ReturnType<Server["_wrapHandler"]> {
    if (method !== "tools/call") return super._wrapHandler(method, handler);
    const tasks = new WeakMap<object, Awaited<ReturnType<typeof handler>>>();
    const checked = super._wrapHandler(method, async (req, ctx) => {
      const out = await handler(req, ctx);
      if (!isTaskAnswer(out)) return out;
      tasks.set(ctx, out);
      return { content: [] };
    });
    return async (req, ctx) => {
      const out = await checked(req, ctx);
      return tasks.get(ctx) ?? out;
    };
  }
}

/** A tools/call answer that is a task: 2026-07-28's, or 2025-11-25's CreateTaskResult (a `task` and no `content`). */
const isTaskAnswer = (out: unknown): boolean => isRecord(out) && (out.resultType === "task" || (isRecord(out.task) && out.content === undefined));

/** Whether the client declared the Tasks extension on this request. */
const pollsTasks = (client: ClientCapabilities | undefined) => isRecord(client?.extensions) && isRecord(client.extensions[TASKS_EXTENSION]);

/** A params check in the Standard Schema shape the SDK takes for an extension's methods: `taskId`, and what else each names. */
const taskParams = (more: (p: Record<string, unknown>) => string | null = () => null) => ({
  "~standard": {
    version: 1 as const,
    vendor: "hearth",
    validate(p: unknown) {
      if (!isRecord(p) || typeof p.taskId !== "string" || !p.taskId) return { issues: [{ message: "taskId must be the task's id as a string" }] };
      const wrong = more(p);
      return wrong ? { issues: [{ message: wrong }] } : { value: p as { taskId: string } & Record<string, unknown> };
    },
  },
});

/**
 * The 2026-07-28 Tasks extension's methods: tasks/get (the task, its result
 * inline once settled), tasks/cancel and tasks/update (acknowledged with an
 * empty result). Only for a client that declares the extension, and only for
 * the credential that made the task.
 */
function registerTasks(rt: Runtime, server: Server, contextOf: (era: McpRequestContext) => McpCallContext | Promise<McpCallContext>, era: McpRequestContext) {
  const own = async (method: string, x: HandlerContext | undefined, taskId: string) => {
    if (!pollsTasks(clientOf(server, x)))
      throw new RpcError(MISSING_CAPABILITY, "Missing required client capability: declare the io.modelcontextprotocol/tasks extension to use tasks", {
        requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
      });
    let c: McpCallContext;
    try {
      c = await contextOf(era);
    } catch (e) {
      // A token revoked or expired since: refused as any other request is.
      return callerRefused(method, e) as never;
    }
    return { c, task: await ownTask(rt, c.caller, taskId) };
  };
  const on = server.setRequestHandler.bind(server) as unknown as (method: string, schemas: { params: unknown }, handler: (p: any, x?: HandlerContext) => Promise<unknown>) => void;
  on("tasks/get", { params: taskParams() }, async (p, x) => {
    const { c, task } = await own("tasks/get", x, p.taskId);
    return task2026(await advance(rt, c.caller, task, c.baseUrl));
  });
  on("tasks/cancel", { params: taskParams() }, async (p, x) => {
    // Cooperative, as the extension has it: a task already running or settled is left as it is.
    await cancelTask(rt, (await own("tasks/cancel", x, p.taskId)).task);
    return {};
  });
  on("tasks/update", { params: taskParams((q) => (isRecord(q.inputResponses) ? null : "inputResponses must be an object of responses by key")) }, async (p, x) => {
    // Hearth's tasks ask nothing of the client (the owner answers on /approvals), so a response names nothing outstanding and is ignored.
    await own("tasks/update", x, p.taskId);
    return {};
  });
}

/**
 * A caller no longer accepted (a token revoked or expired since the
 * connection opened): a tool call gets the refusal HTTP gives, as a tool
 * error; any other request a protocol error carrying the same body.
 */
function callerRefused(method: string, e: unknown): CallToolResult {
  const err = asHearthError(e);
  if (err.kind === "internal") throw e;
  const body = { error: err.body() };
  if (method === "tools/call") return { content: [{ type: "text", text: JSON.stringify(body) }], structuredContent: body, isError: true };
  throw new RpcError(UNAUTHORIZED, err.message, body);
}

type HandlerContext = { mcpReq?: { envelope?: Record<string, unknown>; inputResponses?: Record<string, unknown>; requestState?: () => unknown; signal?: AbortSignal } };

/** The key of the one input request an approval asks, and the prefix of the state naming it. */
const APPROVAL = "approval";

/**
 * The multi round-trip of 2026-07-28 for a client that declared
 * elicitation: the first round answers input_required with a form asking
 * yes or no (or, for a client that declared only URL mode, a link to the
 * request on /approvals); the client's next call carries the reply and the
 * state naming the approval, which core/policy/approvals.ts checks against
 * the call before anything runs.
 */
function roundTripOf(client: ClientCapabilities | undefined, req: HandlerContext["mcpReq"], baseUrl: string): { trip: RoundTrip; result?: InputRequiredResult } | null {
  const elicit = client?.elicitation as { form?: object; url?: object } | undefined;
  if (!elicit) return null;
  const byUrl = !!elicit.url && !elicit.form;
  const out: { trip: RoundTrip; result?: InputRequiredResult } = {
    trip: {
      want(row, message) {
        const ask = byUrl
          ? inputRequired.elicitUrl({ message: `${message} Answer on your approvals page.`, url: `${baseUrl}/approvals#ask-${row.id}` })
          : inputRequired.elicit({ mode: "form", message, requestedSchema: APPROVE_FORM });
        out.result = inputRequired({ inputRequests: { [APPROVAL]: ask }, requestState: `${APPROVAL}:${row.id}` });
      },
    },
  };
  const state = req?.requestState?.();
  if (typeof state === "string" && state.startsWith(`${APPROVAL}:`)) {
    const reply = inputResponse(req?.inputResponses, APPROVAL);
    const said = reply.kind === "elicit" ? reply : null;
    // A form's yes or no decides; a URL's accept only says the person went there, and the owner's answer on /approvals decides.
    const approve = !said ? null : said.action !== "accept" ? false : byUrl ? null : (said.content as { approve?: unknown } | undefined)?.approve === true;
    out.trip.answered = { approval: state.slice(APPROVAL.length + 1), approve };
  }
  return out;
}

/**
 * What the client declared: a 2026-07-28 request in its own envelope (over
 * stdio too, where the server keeps no backfilled copy), a 2025 connection at
 * initialize.
 */
function clientOf(server: Server, x: HandlerContext | undefined): ClientCapabilities | undefined {
  const declared = x?.mcpReq?.envelope?.[CLIENT_CAPABILITIES_META_KEY];
  return declared && typeof declared === "object" ? (declared as ClientCapabilities) : server.getClientCapabilities();
}

const headerOf = (req: Request, name: string) => req.headers.get(name) ?? undefined;

/**
 * The SDK's era decision for a POST: "modern" for a well-formed 2026-07-28
 * request, "refused" for one of its malformed forms (a bad envelope, a header
 * contradicting the body) that the 2026-07-28 rules answer, null for 2025-era
 * traffic, initialize included.
 */
export function eraOf(req: Request, body: unknown): "modern" | "refused" | null {
  // What a 2025-era request looks like, which the classifier would send there too, is told without it:
  // no envelope claim in _meta, and no protocol version header or a 2025-era one (the classifier costs
  // more than the tools/call it routes).
  if (!claimsEnvelope(req, body)) return null;
  const route = classifyInboundRequest({
    httpMethod: req.method,
    protocolVersionHeader: headerOf(req, "mcp-protocol-version"),
    mcpMethodHeader: headerOf(req, "mcp-method"),
    mcpNameHeader: headerOf(req, "mcp-name"),
    body,
  });
  // A body that is not JSON-RPC at all names no era; the 2025 transport refuses it as it always has.
  if (route.kind === "reject") return route.rung === "jsonrpc-shape" ? null : "refused";
  return route.kind === "modern" ? "modern" : null;
}

const REVISION = "2026-07-28";
/** The revision a request that stands alone names in MCP-Protocol-Version. */
export const MODERN_REVISION = REVISION;
const LEGACY_VERSION = /^20(24|25)-\d\d-\d\d$/;

/** Whether a request claims the per-request envelope of 2026-07-28: by a version header that is not a 2025-era one, or by its _meta. */
function claimsEnvelope(req: Request, body: unknown): boolean {
  const header = req.headers.get("mcp-protocol-version");
  if (header !== null && !LEGACY_VERSION.test(header)) return true;
  const messages = Array.isArray(body) ? body : [body];
  for (const m of messages) {
    const params = isRecord(m) ? m.params : undefined;
    if (isRecord(params) && isRecord(params._meta) && PROTOCOL_VERSION_META_KEY in params._meta) return true;
  }
  return false;
}
const META_KEYS = [PROTOCOL_VERSION_META_KEY, CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY];

/** A 2026-07-28 tools/call in the everyday form modernDirectAnswer takes: its id and params, or null for anything else. */
export function modernCall(req: Request, h: McpHeaders, body: unknown): { id: string | number; params: ModernParams } | null {
  if (!isRecord(body) || body.method !== "tools/call" || body.jsonrpc !== "2.0") return null;
  if (!membersWithin(body, ENVELOPE)) return null;
  const id = body.id;
  if (typeof id !== "string" && !Number.isSafeInteger(id)) return null;
  const params = body.params;
  if (!isRecord(params) || typeof params.name !== "string" || !isRecord(params._meta)) return null;
  if (!membersWithin(params, CALL_PARAMS)) return null;
  if (params.arguments !== undefined && !isRecord(params.arguments)) return null;
  if (!membersWithin(params._meta, META_KEYS)) return null;
  if (params._meta[PROTOCOL_VERSION_META_KEY] !== REVISION) return null;
  const info = params._meta[CLIENT_INFO_META_KEY];
  if (info !== undefined && (!isRecord(info) || typeof info.name !== "string" || typeof info.version !== "string")) return null;
  const caps = params._meta[CLIENT_CAPABILITIES_META_KEY];
  if (!isRecord(caps)) return null;
  // A client that can be asked takes the SDK's road, where an approval is asked in the answer; one that polls tasks too.
  if (caps.elicitation !== undefined || (isRecord(caps.extensions) && TASKS_EXTENSION in caps.extensions)) return null;
  for (const k in caps) if (!isRecord(caps[k])) return null;
  if (h.version !== REVISION || !isJsonType(h.type) || !h.accept.includes("application/json")) return null;
  // Read only for a request that names this revision: no 2025 client sends them.
  if (req.headers.get("mcp-method") !== "tools/call" || req.headers.get("mcp-name") !== params.name) return null;
  return { id: id as string | number, params: params as ModernParams };
}
type ModernParams = { name: string; arguments?: Record<string, unknown>; _meta: Record<string, unknown> };

/**
 * A 2026-07-28 tools/call answered without building a server per request,
 * which costs several times the method itself; the answer is the one the
 * SDK's per-request server gives (the same handler, `resultType`, the server
 * stamp in `_meta`). Only the everyday form is taken, checked here before
 * the SDK's classifier (which costs more than the call): headers that repeat
 * its version, method and tool exactly, a `_meta` holding only a well-formed
 * envelope (client info, when sent, with a name and version; capabilities
 * each an object), naming a tool this endpoint has. Anything else (a payment in
 * `_meta`, an unknown tool, a missing header) is left to the classifier and
 * the SDK, which answer or refuse it: this may take less than the SDK would,
 * never more.
 */
export function modernDirectAnswer(rt: Runtime, ctx: McpCallContext, req: Request, body: unknown, h: McpHeaders = headersOf(req)): Promise<Response> | null {
  const call = modernCall(req, h, body);
  if (!call) return null;
  const { id, params } = call;
  const entry = toolTable(rt).byName.get(params.name);
  // Unknown names (the discovery tools among them) take the SDK's road; it gives their answers and refusals.
  if (!entry || !inFilter(entry, ctx.filter)) return null;
  let pending: Promise<CallToolResult>;
  try {
    pending = callToolRequest(rt, ctx, params);
  } catch (e) {
    pending = Promise.reject(e);
  }
  return pending.then(
    (result) => toolAnswer(result, id as string | number, true, ANSWER_HEADERS),
    (e) => failureAnswer(e, id as string | number, ANSWER_HEADERS),
  );
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
