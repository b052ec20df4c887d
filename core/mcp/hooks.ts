// Hooks other modules (payments) declare on tools/call. Kept apart from the
// MCP SDK so that declaring them costs nothing until /mcp is first used.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Caller } from "../plugin.ts";
import type { Runtime } from "../runtime.ts";

/**
 * Where modules take part in a tools/call without editing this file: payments
 * over MCP travel in the request's `_meta`, their refusal has its own result
 * shape, and their receipt goes back in the result's `_meta`.
 */
export interface McpHooks {
  /** May replace the identified caller from the request's `_meta`; returns it unchanged to decline. */
  caller: ((rt: Runtime, meta: Record<string, unknown> | undefined, caller: Caller) => Caller | Promise<Caller>)[];
  /** May give the tool result for a refusal; its structuredContent keeps HTTP's "error" beside its own members. */
  errorResult: ((e: unknown) => CallToolResult | undefined)[];
  /** What to merge into a successful result's `_meta` for this caller. */
  resultMeta: ((caller: Caller) => Record<string, unknown> | undefined)[];
}
