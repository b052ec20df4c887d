// The protocol errors this server gives itself, and the requests it refuses
// before either SDK reads them. Both SDKs answer a thrown error with its own
// `code`, `message` and `data`; the SDK's McpError would put "MCP error
// <code>:" in front of the message, which a client then repeats in its own.
/** A JSON object: not null, not an array. */
export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Names an object may have and nothing else, checked as `membersWithin` does.
 * Walking an object's keys (for…in, with a Set lookup per key) cost a
 * tools/call about a microsecond for each object it checked; counting the
 * names that are there against the object's own key count (which the engine
 * keeps per shape) costs a fraction of that.
 */
export type Members = readonly string[];

/**
 * Whether `o`'s own keys are all among `names`. A key held with the value
 * undefined counts as not there, so such an object is refused: JSON never
 * holds one, and callers take a refusal as "leave it to the general road".
 */
export function membersWithin(o: Record<string, unknown>, names: Members): boolean {
  let present = 0;
  for (let i = 0; i < names.length; i++) if (o[names[i]] !== undefined && Object.hasOwn(o, names[i])) present++;
  return Object.keys(o).length === present;
}

export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

export const INVALID_REQUEST = -32600;
export const INVALID_PARAMS = -32602;
/** What /mcp answers a caller it does not accept with (beside HTTP's 401 there). */
export const UNAUTHORIZED = -32001;
/** The 2025-11-25 protocol's code for a resource that does not exist (2026-07-28 answers INVALID_PARAMS with the same data). */
export const RESOURCE_NOT_FOUND = -32002;

const kindOf = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "an array" : typeof v === "string" ? "a string" : typeof v === "number" ? "a number" : typeof v === "boolean" ? "a boolean" : typeof v);

/**
 * What is wrong with a tools/call message's params in a way either SDK would
 * only answer with its schema's dump (or as an internal error), said plainly;
 * null when they are well-formed enough for the SDK to take.
 */
export function callParamsError(msg: unknown): RpcError | null {
  if (!isRecord(msg) || msg.method !== "tools/call") return null;
  const p = msg.params;
  if (!isRecord(p)) return new RpcError(INVALID_PARAMS, `Invalid params: tools/call's params must be an object with the tool's name and its arguments (got ${kindOf(p)})`, { field: "params" });
  if (typeof p.name !== "string")
    return new RpcError(INVALID_PARAMS, `Invalid params: tools/call's name must be a tool's name as a string (got ${p.name === undefined ? "none" : kindOf(p.name)}); tools/list names them`, { field: "name" });
  if (p.arguments !== undefined && !isRecord(p.arguments))
    return new RpcError(
      INVALID_PARAMS,
      `Invalid params: tools/call's arguments must be an object of the tool's arguments by name, such as {} for none (got ${kindOf(p.arguments)})`,
      { field: "arguments" },
    );
  return null;
}

/** The JSON-RPC error answer to a message, from an RpcError. */
export function errorAnswer(msg: unknown, e: RpcError) {
  const id = isRecord(msg) && (typeof msg.id === "string" || typeof msg.id === "number") ? msg.id : null;
  const error: Record<string, unknown> = { code: e.code, message: e.message };
  if (e.data !== undefined) error.data = e.data;
  return { jsonrpc: "2.0" as const, id, error };
}

/** Protocol revisions before 2025-06-18, the last that allowed JSON-RPC batches. */
const BATCHING = new Set(["2024-11-05", "2025-03-26"]);

/**
 * A batch is refused from 2025-06-18 on, the revision a request names in
 * MCP-Protocol-Version (a client sends it on every request after
 * initialize); without it the protocol has the server assume 2025-03-26,
 * which allowed them. Initialize itself never came in a batch.
 */
export function batchRefusal(version: string | null, body: unknown[]): string | null {
  if (body.some((m) => isRecord(m) && m.method === "initialize")) return "Invalid Request: initialize must be sent alone, not in a JSON-RPC batch";
  if (version !== null && !BATCHING.has(version))
    return `Invalid Request: MCP ${version} has no JSON-RPC batches (they ended with 2025-06-18): send each message in a request of its own`;
  return null;
}
