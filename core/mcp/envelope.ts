// What /mcp's own answers (directly answered tools/call, in a session or
// stateless, in either protocol era) share: the JSON-RPC members they accept
// and the headers they are made with.
import { CORS_HEADERS } from "../http/cors.ts";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { SERVER_INFO_META_KEY } from "@modelcontextprotocol/server";
import { answerTemplate, completeAnswer } from "../http/respond.ts";
import { structuredText } from "./call.ts";
import { isRecord, membersWithin, type Members } from "./rpc.ts";
import { SERVER_INFO } from "./server.ts";

/** The members of a request in its everyday form; any other leaves the message to the SDK. */
export const ENVELOPE: Members = ["jsonrpc", "id", "method", "params"];
/** The members of tools/call params in their everyday form. */
export const CALL_PARAMS: Members = ["name", "arguments", "_meta"];
export { isRecord, membersWithin };

const JSON_TYPE = /^application\/([\w.+-]*\+)?json\b/i;
/** Whether a Content-Type names JSON (application/json, or a +json type); the form every client sends is told without the expression. */
export const isJsonType = (type: string): boolean => type === "application/json" || type.startsWith("application/json;") || JSON_TYPE.test(type);
/** The request headers /mcp reads, each read once. */
export interface McpHeaders {
  /** MCP-Protocol-Version. */
  version: string | null;
  /** Mcp-Session-Id. */
  sid: string | null;
  accept: string;
  /** Content-Type. */
  type: string;
}
export function headersOf(req: Request): McpHeaders {
  const h = req.headers;
  return { version: h.get("mcp-protocol-version"), sid: h.get("mcp-session-id"), accept: h.get("accept") ?? "", type: h.get("content-type") ?? "" };
}

/** The SDK's JSON answer's header, with the ones /mcp adds to every answer already in. */
export const ANSWER_HEADERS = answerTemplate({ "content-type": "application/json" }, CORS_HEADERS);

/**
 * The JSON text of a tool result made by callTool, its body serialised once:
 * that text is already the result's text block, and goes into the answer
 * both as structuredContent and, escaped as a string, as the block's text.
 * The members come in the order JSON.stringify gives the object, with
 * `tail` (members a revision adds, already as JSON) after them. Null for any
 * other result, which is serialised whole.
 */
export function toolResultJson(r: CallToolResult, tail?: Tail): string | null {
  const text = structuredText(r);
  if (text === undefined) return null;
  if (!membersWithin(r as Record<string, unknown>, RESULT_MEMBERS)) return null;
  if (r.content.length !== 1 || (r.isError !== undefined && r.isError !== true)) return null;
  return resultJson(text, r.isError === true, r._meta, tail);
}
const RESULT_MEMBERS: Members = ["content", "structuredContent", "isError", "_meta"];

/** Members a revision adds to a result after its own, as JSON, given the result's `_meta`. */
type Tail = (meta: Record<string, unknown> | undefined) => string;

/** A tool result's JSON around its body's JSON `text`: the body as structuredContent, and as its one text block. */
export function resultJson(text: string, isError: boolean, meta: Record<string, unknown> | undefined, tail?: Tail): string {
  let out = `{"content":[{"type":"text","text":${JSON.stringify(text)}}],"structuredContent":${text}`;
  if (isError) out += `,"isError":true`;
  if (tail) out += tail(meta);
  else if (meta !== undefined) out += `,"_meta":${JSON.stringify(meta)}`;
  return out + "}";
}

/** The server's stamp in a 2026-07-28 result's _meta, as JSON once. */
const STAMP_JSON = JSON.stringify({ [SERVER_INFO_META_KEY]: SERVER_INFO });
/**
 * What 2026-07-28 adds to a result, after its own members: `resultType`, and
 * the server's stamp merged into `_meta` (where a result that has one keeps it).
 */
export const stamped: Tail = (meta) =>
  meta === undefined
    ? `,"resultType":"complete","_meta":${STAMP_JSON}`
    : `,"_meta":${JSON.stringify({ ...meta, [SERVER_INFO_META_KEY]: SERVER_INFO })},"resultType":"complete"`;

/** A JSON-RPC answer's text around a result already in JSON, members in the order the SDK's JSON mode sends them. */
export const answerJson = (resultJson: string, id: string | number): string => `{"result":${resultJson},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`;

/** The answer carrying a tool result, in the 2025 form or, `modern`, 2026-07-28's (resultType, the server's stamp). */
export function toolAnswer(result: CallToolResult, id: string | number, modern: boolean, headers: Headers): Response {
  const spliced = toolResultJson(result, modern ? stamped : undefined);
  if (spliced !== null) return completeAnswer(new Response(answerJson(spliced, id), { status: 200, headers }));
  const out = modern ? { ...result, resultType: "complete", _meta: { ...result._meta, [SERVER_INFO_META_KEY]: SERVER_INFO } } : result;
  return completeAnswer(new Response(JSON.stringify({ result: out, jsonrpc: "2.0", id }), { status: 200, headers }));
}

/** The JSON-RPC error answer to a request answered here whose call threw: its own code, message and data, or an internal error. */
export function failureAnswer(e: { code?: unknown; message?: string; data?: unknown }, id: string | number, headers: Headers): Response {
  const error: Record<string, unknown> = { code: Number.isSafeInteger(e.code) ? e.code : INTERNAL_ERROR, message: e.message ?? "Internal error" };
  if (e.data !== undefined) error.data = e.data;
  return completeAnswer(new Response(JSON.stringify({ jsonrpc: "2.0", id, error }), { status: 200, headers }));
}
const INTERNAL_ERROR = -32603;
