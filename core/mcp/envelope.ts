// What /mcp's own answers (directly answered tools/call, in a session or
// stateless, in either protocol era) share: the JSON-RPC members they accept
// and the headers they are made with.
import { CORS_HEADERS } from "../http/cors.ts";
import { answerTemplate } from "../http/respond.ts";

/** The members of a request in its everyday form; any other leaves the message to the SDK. */
export const ENVELOPE = new Set(["jsonrpc", "id", "method", "params"]);
/** The members of tools/call params in their everyday form. */
export const CALL_PARAMS = new Set(["name", "arguments", "_meta"]);
export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

const JSON_TYPE = /^application\/([\w.+-]*\+)?json\b/i;
/** Whether a Content-Type names JSON (application/json, or a +json type); the form every client sends is told without the expression. */
export const isJsonType = (type: string): boolean => type === "application/json" || type.startsWith("application/json;") || JSON_TYPE.test(type);
/** The SDK's JSON answer's header, with the ones /mcp adds to every answer already in. */
export const ANSWER_HEADERS = answerTemplate({ "content-type": "application/json" }, CORS_HEADERS);
