// /mcp: MCP over Streamable HTTP on the SDK's Web-standard transport.
// An initialize request opens a session; any other request without a session
// id is answered statelessly, so `curl -X POST /mcp` with tools/list works.
// A browser's GET gets a page on how to connect.
import type { McpHttpHandler } from "@modelcontextprotocol/server";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { asHearthError, unauthenticated } from "../errors.ts";
import { readText } from "../http/body.ts";
import { withCors } from "../http/cors.ts";
import { finalAnswer, isComplete, SECURITY_HEADERS, withHeaders } from "../http/respond.ts";
import { clientAddress, route, type App } from "../http/app.ts";
import { partsOf } from "../http/url.ts";
import { addressOf, callerOf, challengeFor, identify, stranger, type ClientAddress } from "../http/identify.ts";
import type { Caller } from "../plugin.ts";
import { queryValues } from "../validate.ts";
import type { Runtime } from "../runtime.ts";
import { directAnswer } from "./direct.ts";
import { calledAnswer, everyday, refusedAnswer } from "./everyday.ts";
import { hookedCaller, startCall, toolInput } from "./call.ts";
import { dispatch } from "../dispatch.ts";
import { MODE_HEADER, parseMode, type ToolsMode } from "./discover.ts";
import { mcpPage } from "./page.ts";
import { createMcpServer, type ContextOf, type McpCallContext } from "./server.ts";
import { ANSWER_HEADERS, headersOf, isJsonType, type McpHeaders } from "./envelope.ts";
import { eraOf, MODERN_REVISION, modernDirectAnswer, modernHttpHandler } from "./modern.ts";
import { batchRefusal, callParamsError, errorAnswer, INVALID_REQUEST } from "./rpc.ts";
import { McpSessions, type Session } from "./sessions.ts";
import { parseFilter } from "./tools.ts";

const contextOf: ContextOf = (extra) => (extra.authInfo?.extra as { hearth: McpCallContext }).hearth;

function rpcError(status: number, code: number, message: string, data?: unknown, headers?: Record<string, string>): Response {
  const error: Record<string, unknown> = { code, message };
  if (data !== undefined) error.data = data;
  return new Response(JSON.stringify({ jsonrpc: "2.0", error, id: null }), {
    status,
    headers: { "content-type": "application/json", ...(headers ?? {}) },
  });
}

/**
 * Answers are always JSON here, so a POST that accepts JSON (or anything),
 * or that sends JSON without saying so, as plain curl does, is taken as the
 * transport expects.
 */
export function asMcpPost(req: Request): Request {
  const accept = req.headers.get("accept") ?? "";
  const type = req.headers.get("content-type") ?? "";
  const acceptOk = accept.includes("application/json") && accept.includes("text/event-stream");
  const typeOk = isJsonType(type);
  if (acceptOk && typeOk) return req;
  const h = new Headers(req.headers);
  if (!acceptOk && (accept === "" || accept.includes("*/*") || accept.includes("application/json"))) h.set("accept", "application/json, text/event-stream");
  if (!typeOk && (type === "" || type.startsWith("application/x-www-form-urlencoded"))) h.set("content-type", "application/json");
  return new Request(req.url, { method: req.method, headers: h });
}

/**
 * Bun sends a response's headers with its first body chunk, and a session's
 * stream may stay silent for long; an SSE comment first lets the client see
 * at once that the stream is open.
 */
function flushed(res: Response): Response {
  if (!res.body || !(res.headers.get("content-type") ?? "").startsWith("text/event-stream")) return res;
  const source = res.body.getReader();
  const opening = new TextEncoder().encode(": open\n\n");
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(opening);
    },
    async pull(controller) {
      const { value, done } = await source.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel(reason) {
      return source.cancel(reason);
    },
  });
  return new Response(body, { status: res.status, headers: res.headers });
}

const SECURITY_ENTRIES = Object.entries(SECURITY_HEADERS);

/**
 * A POST's answer, its body read and parsed first (or refused as JSON-RPC
 * when it cannot be), with the CORS and security headers every /mcp answer
 * carries already in. The everyday tools/call takes the steps POST
 * /api/v1/... takes (api.ts's handleApi): the body awaited, the call
 * awaited, the answer made, all in this one async function; its promise
 * settles with the Response itself, so neither a callback handing back a
 * promise nor a wrapper adding headers (finalAnswer) stands between.
 */
async function posted(rt: Runtime, eras: McpEras, req: Request, h: McpHeaders, ctx: McpCallContext, direct: boolean): Promise<Response> {
  let text: string;
  try {
    text = await readText(rt, req, Number(rt.config.HEARTH_BODY_LIMIT));
  } catch (e) {
    const err = asHearthError(e);
    return ready(rpcError(err.status, -32000, err.message, { error: err.body() }, err.headers));
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (e) {
    return ready(rpcError(400, -32700, `Parse error: the body is not valid JSON (${(e as Error).message})`));
  }
  // Looked up once: a session that is gone is gone for the rest of this request too.
  const session = h.sid !== null ? eras.sessions.live(h.sid) : null;
  const call = direct ? everyday(rt, eras.sessions, req, h, session, ctx, body) : null;
  if (call) {
    const run = startCall(rt, call.entry, call.ctx.caller);
    let result: unknown;
    try {
      const caller = hookedCaller(rt, run, call.meta);
      if (caller instanceof Promise) await caller;
      result = await dispatch(rt, toolInput(run, call.ctx, call.args));
    } catch (e) {
      return refusedAnswer(rt, run, call, e);
    }
    return calledAnswer(rt, run, call, result);
  }
  const res = answer(rt, eras, req, h, session, ctx, body, direct);
  return ready(res instanceof Promise ? await res : res);
}

/** An answer with what withCors and serve.ts would add, added here. */
const ready = (res: Response): Response => (isComplete(res) ? res : withHeaders(withCors(res), SECURITY_ENTRIES, true));

/**
 * What /mcp refuses before either SDK reads it: a batch where the protocol
 * has none, and tools/call params the SDKs would answer with a schema dump
 * (or as an internal error) rather than say what is wrong.
 */
function refusedMessage(h: McpHeaders, body: unknown): Response | null {
  if (Array.isArray(body)) {
    const refused = batchRefusal(h.version, body);
    return refused ? rpcError(400, INVALID_REQUEST, refused) : null;
  }
  const bad = callParamsError(body);
  if (!bad) return null;
  const headers = new Headers(ANSWER_HEADERS);
  if (h.sid) headers.set("mcp-session-id", h.sid);
  return new Response(JSON.stringify(errorAnswer(body, bad)), { status: 200, headers });
}

const isInitialize = (m: unknown) => !!m && typeof m === "object" && (m as { method?: unknown }).method === "initialize";

/**
 * `direct` answers tools/call and tools/list without the SDK's per-request
 * machinery (see direct.ts); off, the SDK answers everything. A POST from a
 * caller identified at once waits only on its body and then on the call: no
 * step between is a turn of its own.
 */
export function handleMcp(rt: Runtime, eras: McpEras, req: Request, address: ClientAddress, direct = true): Promise<Response> {
  try {
    const res = mcpAnswer(rt, eras, req, address, direct);
    return res instanceof Promise ? res : Promise.resolve(res);
  } catch (e) {
    return Promise.reject(e);
  }
}

/** handleMcp's answer, given as it is when it needs no wait. */
function mcpAnswer(rt: Runtime, eras: McpEras, req: Request, address: ClientAddress, direct: boolean): Response | Promise<Response> {
  const url = partsOf(req.url);
  // Most requests carry no query string: its parameters are then not read. A name given more than once counts at its first.
  const query = url.query ? queryValues(url.query) : null;
  const filter = parseFilter(query?.get("tools")?.[0]);
  let mode: ToolsMode;
  try {
    mode = parseMode(query?.get("mode")?.[0] ?? req.headers.get(MODE_HEADER));
  } catch (e) {
    const err = asHearthError(e);
    return rpcError(err.status, -32602, err.message, { error: err.body() });
  }
  if (req.method === "GET" && !(req.headers.get("accept") ?? "").includes("text/event-stream"))
    return identify(rt, req, address)
      .catch(() => stranger(addressOf(address)))
      .then((caller) => mcpPage(rt, req, caller, filter));

  // A page on another origin may call tools with a token, a payment or as a stranger; its
  // session cookie identifies no one here (identifySession), so it cannot act as a signed-in person.
  let found: Caller | Promise<Caller>;
  try {
    // Identifying mostly answers at once (a cached token): waiting on a value that is no promise still costs a turn.
    found = callerOf(rt, req, address);
  } catch (e) {
    return callerRefused(rt, req, e);
  }
  // Made as functions only when identifying waits: an everyday request makes none.
  if (found instanceof Promise)
    return found.then(
      (caller) => identified(rt, eras, req, url.origin, query, filter, mode, direct, caller),
      (e) => callerRefused(rt, req, e),
    );
  return identified(rt, eras, req, url.origin, query, filter, mode, direct, found);
}

/** The refusal of a caller /mcp does not accept, as JSON-RPC, with HTTP's challenge. */
function callerRefused(rt: Runtime, req: Request, e: unknown): Response {
  const err = asHearthError(e);
  const challenge = challengeFor(rt, req, err);
  return rpcError(err.status, -32001, err.message, { error: err.body() }, { ...challenge, ...(err.headers ?? {}) });
}

/** The answer to a request once its caller is known. */
function identified(
  rt: Runtime,
  eras: McpEras,
  req: Request,
  baseUrl: string,
  query: Map<string, string[]> | null,
  filter: Set<string> | null,
  mode: ToolsMode,
  direct: boolean,
  caller: Caller,
): Response | Promise<Response> {
  // /mcp?signin is for connectors that sign in: a stranger there is told to (401 naming the OAuth metadata), as they expect.
  if (!caller.account && query?.has("signin"))
    return callerRefused(rt, req, unauthenticated("this address is for signed-in use: sign in with OAuth (the resource_metadata named here says how) or send a bearer token"));
  const ctx: McpCallContext = { caller, filter, baseUrl, mode };
  const h = headersOf(req);
  if (req.method !== "POST") return answer(rt, eras, req, h, h.sid !== null ? eras.sessions.live(h.sid) : null, ctx, undefined, direct);
  return finalAnswer(posted(rt, eras, req, h, ctx, direct));
}

/** What the SDK's transports are handed; the direct answers never need it. */
const authOf = (ctx: McpCallContext): { authInfo: AuthInfo } => ({
  authInfo: {
    token: "",
    clientId: ctx.caller.account?.username ?? "",
    scopes: ctx.caller.scopes === "*" ? ["*"] : ctx.caller.scopes,
    extra: { hearth: ctx },
  },
});

/** The context of a request in a session: what its client declared at initialize, and how to ask its person. */
const sessionContext = (eras: McpEras, session: Session, ctx: McpCallContext): McpCallContext => ({
  ...ctx,
  client: eras.sessions.client(session),
  ask: eras.sessions.asker(session, ctx.baseUrl),
});

/** The answer to an identified caller's request, its body (a POST's) already read, its session (if it names one) looked up. */
function answer(rt: Runtime, eras: McpEras, req: Request, h: McpHeaders, session: Session | null, ctx: McpCallContext, body: unknown, direct: boolean): Response | Promise<Response> {
  const sid = h.sid;
  const transport = session?.transport ?? null;
  if (req.method === "POST") {
    // A session that is gone is told so first (below), whatever it sent.
    if (!sid || transport) {
      const refused = refusedMessage(h, body);
      if (refused) return refused;
    }
    // A 2026-07-28 request stands alone (modern.ts); a session id beside it changes nothing.
    // Its everyday tools/call is answered at once; the rest goes to the SDK's classifier.
    // It names its revision in a header, which a 2025 request (most of them) never does: that one looks no further here.
    const quick = direct && h.version === MODERN_REVISION ? modernDirectAnswer(rt, ctx, req, body, h) : null;
    if (quick) return quick;
    const era = eraOf(req, body);
    if (era) return eras.modern.fetch(asMcpPost(req), { ...authOf(ctx), parsedBody: body });
  }

  if (sid) {
    if (!transport) return rpcError(404, -32001, "Session not found: start a new one with initialize");
    ctx = sessionContext(eras, session!, ctx);
    if (req.method !== "POST") return transport.handleRequest(req, authOf(ctx)).then(flushed);
    // A request the transport takes as it is is answered directly without a copy (its headers read once).
    const quick = direct ? directAnswer(rt, ctx, body, req, sid) : null;
    if (quick) return quick;
    const post = asMcpPost(req);
    const again = direct && post !== req ? directAnswer(rt, ctx, body, post, sid) : null;
    return again ?? transport.handleRequest(post, { ...authOf(ctx), parsedBody: body });
  }

  if (req.method !== "POST") return rpcError(405, -32000, "Method not allowed: without a session, /mcp takes POST", undefined, { allow: "GET, POST, DELETE" });
  if (!isInitialize(body)) {
    const quick = direct ? directAnswer(rt, ctx, body, req) : null;
    if (quick) return quick;
  }
  const post = asMcpPost(req);
  if (isInitialize(body)) return eras.sessions.open().then((opened) => opened.handleRequest(post, { ...authOf(ctx), parsedBody: body }));
  const quick = direct && post !== req ? directAnswer(rt, ctx, body, post) : null;
  return quick ?? stateless(rt, ctx, post, body);
}

/** Stateless: a transport that answers this one request, as the SDK asks. */
async function stateless(rt: Runtime, ctx: McpCallContext, post: Request, body: unknown): Promise<Response> {
  const server = createMcpServer(rt, contextOf);
  const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
  await server.connect(transport);
  try {
    return await transport.handleRequest(post, { ...authOf(ctx), parsedBody: body });
  } finally {
    void server.close();
  }
}

export function mountMcp(app: App, rt: Runtime) {
  const serve = mcpHandler(rt);
  app.all(
    "/mcp",
    route((c) => serve(c.request, clientAddress(c))),
    { parse: "none" },
  );
}

/** What /mcp keeps per instance: the 2025-11-25 sessions, and the 2026-07-28 handler, which keeps none. */
export interface McpEras {
  sessions: McpSessions;
  modern: McpHttpHandler;
}

/** The /mcp handler for one instance, with its sessions. */
export function mcpHandler(rt: Runtime): (req: Request, address: ClientAddress) => Response | Promise<Response> {
  const eras: McpEras = { sessions: new McpSessions(rt, contextOf), modern: modernHttpHandler(rt, Number(rt.config.HEARTH_BODY_LIMIT)) };
  return (req, address) => mcpAnswer(rt, eras, req, address, true);
}
