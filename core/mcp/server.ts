// The SDK's MCP server, answering tools/list and tools/call from the registry.
// The same server serves Streamable HTTP (one per session, or one per
// stateless request) and stdio; only where the caller comes from differs.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  CallToolRequestSchema,
  CancelTaskRequestSchema,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListTasksRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  type CallToolRequest,
  type CallToolResult,
  type ClientCapabilities,
  type ListResourcesResult,
  type ListToolsResult,
  type ReadResourceResult,
  type ServerNotification,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv-provider.js";
import pkg from "../../package.json" with { type: "json" };
import type { Caller } from "../plugin.ts";
import type { Runtime } from "../runtime.ts";
import { approvalSeconds, type RoundTrip } from "../policy/approvals.ts";
import { linkTools, listViews, readView, rendersApps, UI_EXTENSION, uiTool, viewResult } from "./apps.ts";
import { callTool } from "./call.ts";
import { advance, callAsTask, cancelTask, isTerminal, listTasks, ownTask, resultOf, settled, task2025, TASKS_EXTENSION, type TaskNotify, type TaskRow } from "./tasks.ts";
import { callDiscoveryTool, discoveryTools, isDiscoveryTool, type ToolsMode } from "./discover.ts";
import { INVALID_PARAMS, RESOURCE_NOT_FOUND, RpcError } from "./rpc.ts";
import { inFilter, visibleTools, toolTable } from "./tools.ts";

/** What one MCP request runs as: who calls, which tools this endpoint exposes, and where links point. */
export interface McpCallContext {
  caller: Caller;
  filter: Set<string> | null;
  baseUrl: string;
  /** Every visible tool listed, or the three discovery tools (discover.ts). */
  mode?: ToolsMode;
  /** What the client declared at initialize, when it keeps a session (MCP Apps links depend on it). */
  client?: ClientCapabilities;
  /** Asks the person at the client through elicitation, when it declared it (a call its policy holds waits on their answer). */
  ask?: (question: { message: string; id: string }) => Promise<boolean | null>;
  /** A 2026-07-28 client that declared elicitation: asked in the answer, it calls again with the reply. */
  roundTrip?: RoundTrip;
  /** A 2026-07-28 client that declared the Tasks extension: a call that would wait on the owner answers with a task. */
  tasks?: boolean;
  /** A receiver with a way to tell its client (a 2025-11-25 session's stream, stdio): its tasks' changes are sent as notifications/tasks/status. */
  notifyTask?: TaskNotify;
}

export type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;
export type ContextOf = (extra: Extra) => McpCallContext;

export const SERVER_INFO = { name: "hearth", title: "Hearth", version: pkg.version };

export const INSTRUCTIONS =
  "Hearth's methods as tools: each tool is <service>_<method> and does what the HTTP method /api/v1/<service>/<method> does, at the same price. " +
  'A refusal comes back as a tool error whose structured content is {"error": {status, kind, message, field?}}; a success as {"result": …}.';

// Only used for elicitation, which this server never asks for; one instance spares building Ajv per server.
let validator: AjvJsonSchemaValidator | null = null;

/** tools/list: the tools this caller may see at this endpoint (or the discovery tools); linked to their views for a client that renders MCP Apps. */
export function listTools(rt: Runtime, c: McpCallContext, meta?: Record<string, unknown>): ListToolsResult | Promise<ListToolsResult> {
  if (c.mode === "discover") return { tools: discoveryTools };
  const tools = visibleTools(rt, c.caller, c.filter);
  // Answered at once unless the client renders MCP Apps, whose sources' own tools come from the database.
  return rendersApps(c, meta) ? linkTools(rt, c, tools).then((linked) => ({ tools: linked })) : { tools };
}

/** tools/call: the method through dispatch. An unknown tool is a protocol error, not a tool result, as the protocol asks. */
export function callToolRequest(rt: Runtime, c: McpCallContext, params: CallToolRequest["params"]): Promise<CallToolResult> {
  try {
    // A tool known by name is still called directly in discovery mode; the three discovery tools only there.
    if (c.mode === "discover" && isDiscoveryTool(params.name)) return callDiscoveryTool(rt, c, params);
    const entry = toolTable(rt).byName.get(params.name);
    // A client that can poll is given a task rather than held while the owner decides (core/mcp/tasks.ts); a task's answer is the task, whatever views the client renders.
    const task = (params as { task?: { ttl?: number } }).task;
    if ((task || c.tasks) && entry && inFilter(entry, c.filter))
      return callAsTask(rt, { caller: c.caller, baseUrl: c.baseUrl, entry, args: params.arguments, meta: params._meta, ttl: task?.ttl, notify: task ? c.notifyTask : undefined }, task ? "2025" : "2026") as Promise<CallToolResult>;
    if (rendersApps(c, params._meta)) return callAppsTool(rt, c, params);
    // The everyday call, made without a turn of its own: callTool's promise is the answer.
    if (!entry || !inFilter(entry, c.filter)) throw noTool(params.name);
    return callTool(rt, { entry, args: params.arguments, meta: params._meta, caller: c.caller, baseUrl: c.baseUrl, ask: c.ask, roundTrip: c.roundTrip });
  } catch (e) {
    return Promise.reject(e);
  }
}

const noTool = (name: string) => new RpcError(INVALID_PARAMS, `no tool "${name}" here; tools/list names them`);

/** tools/call from a client that renders MCP Apps: a view's own tool among the rest, and its result linked to its view. */
async function callAppsTool(rt: Runtime, c: McpCallContext, params: CallToolRequest["params"]): Promise<CallToolResult> {
  const own = !toolTable(rt).byName.has(params.name) ? await uiTool(rt, c, params.name) : null;
  const entry = own?.entry ?? toolTable(rt).byName.get(params.name);
  if (!entry || !inFilter(entry, c.filter)) throw noTool(params.name);
  // A view's own tool fixes its method's arguments; anything else sent is checked by dispatch like any argument.
  const args = own ? { ...params.arguments, ...own.args } : params.arguments;
  const out = await callTool(rt, { entry, args, meta: params._meta, caller: c.caller, baseUrl: c.baseUrl, ask: c.ask, roundTrip: c.roundTrip });
  return viewResult(rt, entry, out, own ?? undefined);
}

/** resources/list: the MCP Apps views, for a client that renders them; none for any other. */
export function listResources(rt: Runtime, c: McpCallContext, meta?: Record<string, unknown>): ListResourcesResult | Promise<ListResourcesResult> {
  return rendersApps(c, meta) ? listViews(rt, c) : { resources: [] };
}

/** resources/read: a view by its ui:// URI. A miss carries the URI as its data, as both eras ask (2026-07-28's SDK gives it -32602). */
export async function readResource(rt: Runtime, c: McpCallContext, uri: string): Promise<ReadResourceResult> {
  const read = await readView(rt, c, uri);
  if (!read) throw new RpcError(RESOURCE_NOT_FOUND, `no resource "${uri}" here; resources/list names them`, { uri });
  if (!("contents" in read)) throw new RpcError(INVALID_PARAMS, read.refused);
  return read;
}

/** What this server offers, the same in every protocol era. */
export const CAPABILITIES = {
  tools: {},
  resources: {},
  // 2025-11-25's tasks, for tools/call; 2026-07-28 drops this member and reads the extension instead.
  tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
  extensions: { [UI_EXTENSION]: {}, [TASKS_EXTENSION]: {} },
};

/** The context with what the client declared when it opened its connection, if it did. */
export function withClient(c: McpCallContext, client: ClientCapabilities | undefined): McpCallContext {
  return client ? { ...c, client } : c;
}

type Params = { _meta?: Record<string, unknown> } | undefined;

/**
 * The requests this server answers, by method: each era's server (SDK 1.x
 * for 2025-11-25 sessions, SDK 2.x for 2026-07-28 requests) registers these
 * same functions, so the eras cannot drift apart.
 */
export const mcpRequests = {
  "tools/list": (rt: Runtime, c: McpCallContext, params: unknown) => listTools(rt, c, (params as Params)?._meta),
  "tools/call": (rt: Runtime, c: McpCallContext, params: unknown) => callToolRequest(rt, c, params as CallToolRequest["params"]),
  "resources/list": (rt: Runtime, c: McpCallContext, params: unknown) => listResources(rt, c, (params as Params)?._meta),
  "resources/templates/list": (_rt: Runtime, _c: McpCallContext, _params: unknown) => ({ resourceTemplates: [] }),
  "resources/read": (rt: Runtime, c: McpCallContext, params: unknown) => readResource(rt, c, (params as { uri: string }).uri),
};

type TaskParams = { taskId: string; cursor?: string } | undefined;

/**
 * 2025-11-25's task requests, by method: the SDK 1.x server of an HTTP
 * session and the SDK 2.x server of a 2025 connection over stdio register
 * these same functions. Each task is looked up for the credential calling.
 */
export const tasks2025 = {
  "tasks/get": async (rt: Runtime, c: McpCallContext, params: unknown, _signal?: AbortSignal) =>
    task2025(await advance(rt, c.caller, await ownTask(rt, c.caller, (params as TaskParams)?.taskId), c.baseUrl, c.notifyTask)),
  "tasks/result": async (rt: Runtime, c: McpCallContext, params: unknown, signal?: AbortSignal) =>
    resultOf(await settled(rt, c.caller, await ownTask(rt, c.caller, (params as TaskParams)?.taskId), c.baseUrl, signal, c.notifyTask)),
  "tasks/list": async (rt: Runtime, c: McpCallContext, params: unknown, _signal?: AbortSignal) => {
    const page = await listTasks(rt, c.caller, (params as TaskParams)?.cursor);
    return { tasks: page.rows.map(task2025), ...(page.next ? { nextCursor: page.next } : {}) };
  },
  "tasks/cancel": async (rt: Runtime, c: McpCallContext, params: unknown, _signal?: AbortSignal) => {
    const t = await ownTask(rt, c.caller, (params as TaskParams)?.taskId);
    if (!(await cancelTask(rt, t, c.notifyTask))) {
      const now = await ownTask(rt, c.caller, t.id);
      throw new RpcError(INVALID_PARAMS, isTerminal(now) ? `Cannot cancel task: already in terminal status '${now.status}'` : "Cannot cancel task: its call is running now, and finishes", { taskId: t.id });
    }
    return task2025(await ownTask(rt, c.caller, t.id));
  },
};

/**
 * 2025-11-25's notifications/tasks/status from a server with a way to its
 * client: its params are the task as tasks/get shows it. Sent on the
 * server's own stream (a session's GET stream, stdio), never tied to a
 * request; dropped when the client has no stream open, as the spec allows
 * (the notification is optional, and the client polls all the same).
 */
export function taskNotifier(rt: Runtime, server: { notification(n: { method: string; params: Record<string, unknown> }): Promise<void> }): TaskNotify {
  return (t: TaskRow) =>
    void server.notification({ method: "notifications/tasks/status", params: task2025(t) }).catch((e) => rt.log.info("task status not told", { task: t.id, error: String(e) }));
}

/** The one field an approval asks in form mode. */
export const APPROVE_FORM = { type: "object" as const, properties: { approve: { type: "boolean" as const, title: "Approve", description: "Let this call go ahead" } }, required: ["approve"] };

/**
 * An approval asked at the client: in form mode, one yes-or-no field, where
 * declining or cancelling is a no; for a client that declared only URL mode,
 * a link to the request on /approvals, where the owner's answer decides
 * (null: nothing decided here, unless the person declined to go).
 */
export async function askAtClient(server: Server, q: { message: string; id: string }, seconds: number, baseUrl: string): Promise<boolean | null> {
  const modes = server.getClientCapabilities()?.elicitation as { form?: object; url?: object } | undefined;
  if (modes?.url && !modes.form) {
    const r = await server.elicitInput({ mode: "url", message: `${q.message} Answer on your approvals page.`, url: `${baseUrl}/approvals#ask-${q.id}`, elicitationId: q.id }, { timeout: seconds * 1000 });
    return r.action === "accept" ? null : false;
  }
  const r = await server.elicitInput({ mode: "form", message: q.message, requestedSchema: APPROVE_FORM }, { timeout: seconds * 1000 });
  return r.action === "accept" && r.content?.approve === true;
}

/** `notifies`: the server keeps a session, whose client may hold a stream open for what the server tells it unasked. */
export function createMcpServer(rt: Runtime, contextOf: ContextOf, o: { notifies?: boolean } = {}): Server {
  validator ??= new AjvJsonSchemaValidator();
  const server = new Server(SERVER_INFO, { capabilities: CAPABILITIES, instructions: INSTRUCTIONS, jsonSchemaValidator: validator });
  const notifyTask = o.notifies ? taskNotifier(rt, server) : undefined;
  // A session's client said at initialize what it supports; a stateless request says it in its own _meta.
  const context = (extra: Extra): McpCallContext => {
    const client = server.getClientCapabilities();
    const base = withClient(contextOf(extra), client);
    const c = notifyTask ? { ...base, notifyTask } : base;
    // A session's client that can be asked is asked on the session's own stream (its responses here are JSON, which carries nothing else).
    return client?.elicitation ? { ...c, ask: (q) => askAtClient(server, q, approvalSeconds(rt), c.baseUrl) } : c;
  };
  server.setRequestHandler(ListToolsRequestSchema, (req, extra) => mcpRequests["tools/list"](rt, context(extra), req.params));
  server.setRequestHandler(CallToolRequestSchema, (req, extra) => mcpRequests["tools/call"](rt, context(extra), req.params));
  server.setRequestHandler(ListResourcesRequestSchema, (req, extra) => mcpRequests["resources/list"](rt, context(extra), req.params));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, (req, extra) => mcpRequests["resources/templates/list"](rt, context(extra), req.params));
  server.setRequestHandler(ReadResourceRequestSchema, (req, extra) => mcpRequests["resources/read"](rt, context(extra), req.params));
  // 2025-11-25's tasks: each looked up for the credential calling, whichever session or instance made it.
  server.setRequestHandler(GetTaskRequestSchema, (req, extra) => tasks2025["tasks/get"](rt, context(extra), req.params, extra.signal));
  server.setRequestHandler(GetTaskPayloadRequestSchema, (req, extra) => tasks2025["tasks/result"](rt, context(extra), req.params, extra.signal) as never);
  server.setRequestHandler(ListTasksRequestSchema, (req, extra) => tasks2025["tasks/list"](rt, context(extra), req.params, extra.signal));
  server.setRequestHandler(CancelTaskRequestSchema, (req, extra) => tasks2025["tasks/cancel"](rt, context(extra), req.params, extra.signal));
  return server;
}
