// What /mcp's own answers (directly answered tools/call, in a session or
// stateless, in either protocol era) share: the JSON-RPC members they accept
// and the headers they are made with.
import { CORS_HEADERS } from "../http/cors.ts";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { answerTemplate } from "../http/respond.ts";
import { structuredText } from "./call.ts";
import { isRecord, membersWithin, type Members } from "./rpc.ts";

/** The members of a request in its everyday form; any other leaves the message to the SDK. */
export const ENVELOPE: Members = ["jsonrpc", "id", "method", "params"];
/** The members of tools/call params in their everyday form. */
export const CALL_PARAMS: Members = ["name", "arguments", "_meta"];
export { isRecord, membersWithin };

const JSON_TYPE = /^application\/([\w.+-]*\+)?json\b/i;
/** Whether a Content-Type names JSON (application/json, or a +json type); the form every client sends is told without the expression. */
export const isJsonType = (type: string): boolean => type === "application/json" || type.startsWith("application/json;") || JSON_TYPE.test(type);
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
export function toolResultJson(r: CallToolResult, tail?: (meta: Record<string, unknown> | undefined) => string): string | null {
  const text = structuredText(r);
  if (text === undefined) return null;
  if (!membersWithin(r as Record<string, unknown>, RESULT_MEMBERS)) return null;
  if (r.content.length !== 1 || (r.isError !== undefined && r.isError !== true)) return null;
  let out = `{"content":[{"type":"text","text":${JSON.stringify(text)}}],"structuredContent":${text}`;
  if (r.isError) out += `,"isError":true`;
  if (tail) out += tail(r._meta);
  else if (r._meta !== undefined) out += `,"_meta":${JSON.stringify(r._meta)}`;
  return out + "}";
}
const RESULT_MEMBERS: Members = ["content", "structuredContent", "isError", "_meta"];

/** A JSON-RPC answer's text around a result already in JSON, members in the order the SDK's JSON mode sends them. */
export const answerJson = (resultJson: string, id: string | number): string => `{"result":${resultJson},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`;
