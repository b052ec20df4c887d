// Discovery mode: instead of every method's tool up front (a large tools/list
// that fills a model's context before it has asked for anything), three
// tools: find tools by what is needed, read one tool's full definition, and
// call a tool by name. The catalogue searched is exactly what the caller would
// have been listed (the endpoint's ?tools= and the token's scope), and a call
// goes through the same dispatch, scope and price as calling the tool itself.
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { asHearthError, HearthError, invalid } from "../errors.ts";
import type { MethodEntry } from "../registry.ts";
import type { Runtime } from "../runtime.ts";
import { callTool } from "./call.ts";
import { indexTool, rarity, readQuery, score, type Indexed, type Rarity } from "./rank.ts";
import { inFilter, inScope, toolTable } from "./tools.ts";

/** How a client asked for the tool list: every visible tool, or the discovery tools. */
export type ToolsMode = "all" | "discover";

/** `?mode=discover`, the `Hearth-Tools-Mode: discover` header, or `hearth mcp --mode discover`; nothing means all. */
export function parseMode(raw: string | null | undefined, field = "mode"): ToolsMode {
  if (raw === null || raw === undefined || raw === "" || raw === "all") return "all";
  if (raw === "discover") return "discover";
  throw invalid(field, `${field} must be "discover" (three tools to search, describe and call the others) or "all" (every tool listed)`);
}

/** The header a client that cannot change the address sends to choose the mode. */
export const MODE_HEADER = "hearth-tools-mode";

export const SEARCH = "search_tools";
export const DESCRIBE = "describe_tool";
export const CALL = "call_tool";

const NAME = { type: "string", description: "A tool name as search_tools gives it, e.g. notes_add." } as const;

export const discoveryTools: Tool[] = [
  {
    name: SEARCH,
    title: "Search tools",
    description:
      "Finds the tools for a need, among every method of this server (notes, files, calendar, mail, news, weather, text, wallet and more). " +
      "Describe what you want to do in a few words; the answer lists matching tools with a one-line summary and price. Free.",
    inputSchema: {
      type: "object",
      properties: {
        query: { type: "string", minLength: 1, maxLength: 500, description: 'What you need, e.g. "add a note" or "weather tomorrow".' },
        limit: { type: "integer", minimum: 1, maximum: 50, default: 10, description: "At most this many tools." },
      },
      required: ["query"],
      additionalProperties: false,
    },
    annotations: { title: "Search tools", readOnlyHint: true, destructiveHint: false, openWorldHint: false },
  },
  {
    name: DESCRIBE,
    title: "Describe a tool",
    description: "A tool's full definition: what it does, its input schema, its price and who may call it. Free.",
    inputSchema: { type: "object", properties: { name: NAME }, required: ["name"], additionalProperties: false },
    annotations: { title: "Describe a tool", readOnlyHint: true, destructiveHint: false, openWorldHint: false },
  },
  {
    name: CALL,
    title: "Call a tool",
    description:
      "Calls a tool by name with its arguments (as describe_tool gives its input schema). The answer, price and refusals are the tool's own.",
    inputSchema: {
      type: "object",
      properties: { name: NAME, arguments: { type: "object", description: "The tool's arguments.", additionalProperties: true } },
      required: ["name"],
      additionalProperties: false,
    },
    annotations: { title: "Call a tool", readOnlyHint: false, destructiveHint: true, openWorldHint: true },
  },
];

export const isDiscoveryTool = (name: string) => name === SEARCH || name === DESCRIBE || name === CALL;

/** What discovery needs to know about one request; the same fields as server.ts's McpCallContext. */
interface Context {
  caller: Parameters<typeof inScope>[1];
  filter: Set<string> | null;
  baseUrl: string;
}

/** The answer in HTTP's body shape, as every other tool gives it. */
function answer(body: Record<string, unknown>, isError = false): CallToolResult {
  const out: CallToolResult = { content: [{ type: "text", text: JSON.stringify(body) }], structuredContent: body };
  if (isError) out.isError = true;
  return out;
}

const refusal = (e: HearthError) => answer({ error: e.body() }, true);

/** The argument object, checked against the discovery tool's schema by hand: these are the only rules it has. */
function argsOf(raw: unknown, allowed: string[]): Record<string, unknown> {
  if (raw === undefined) return {};
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw invalid("arguments", "arguments must be an object");
  const args = raw as Record<string, unknown>;
  for (const k of Object.keys(args)) if (!allowed.includes(k)) throw invalid(k, `unknown argument "${k}"; this tool takes ${allowed.join(", ")}`);
  return args;
}

function toolName(args: Record<string, unknown>): string {
  const name = args.name;
  if (name === undefined) throw invalid("name", "name is required");
  if (typeof name !== "string" || !name) throw invalid("name", "name must be a tool name, such as notes_add");
  return name;
}

/** The entry a caller may see under this name, or a refusal naming the field. */
function visibleEntry(rt: Runtime, c: Context, name: string, scoped = true): MethodEntry {
  const entry = toolTable(rt).byName.get(name);
  if (!entry || !inFilter(entry, c.filter) || (scoped && !inScope(entry, c.caller)))
    throw new HearthError("not_found", `no tool "${name}" here; search_tools finds them`, { field: "name" });
  return entry;
}

/** What each tool is found by, read once per runtime: its service's and method's names, what its service is for, its own description. */
const indexes = new WeakMap<Runtime, { tools: Indexed[]; rare: Rarity }>();
function indexOf(rt: Runtime) {
  let index = indexes.get(rt);
  if (!index) {
    const t = toolTable(rt);
    const tools = t.entries.map((e, i) =>
      indexTool({
        service: e.service,
        method: e.name,
        title: t.tools[i].title ?? "",
        about: rt.registry.plugins.get(e.service)?.def.description ?? "",
        description: e.def.description,
        args: Object.keys((e.schema as { properties?: Record<string, unknown> }).properties ?? {}),
        write: e.def.kind !== "read",
      }),
    );
    index = { tools, rare: rarity(tools) };
    indexes.set(rt, index);
  }
  return index;
}

/**
 * Ranks the tools this caller may see by how well they answer the request
 * (rank.ts): its verb against what each method does, its other words against
 * the tool's names, its service's purpose ("calendar" finds the events
 * service) and its description.
 */
function search(rt: Runtime, c: Context, query: string, limit: number) {
  const q = readQuery(query);
  const t = toolTable(rt);
  const index = indexOf(rt);
  const scored: { score: number; i: number }[] = [];
  for (let i = 0; i < t.entries.length; i++) {
    const e = t.entries[i];
    if (!inFilter(e, c.filter) || !inScope(e, c.caller)) continue;
    const s = score(index.tools[i], q, index.rare);
    if (s > 0) scored.push({ score: s, i });
  }
  scored.sort((a, b) => b.score - a.score || a.i - b.i);
  return scored.slice(0, limit).map(({ i }) => {
    const e = t.entries[i];
    return {
      name: e.tool,
      summary: e.def.description.trim().split(/\n|(?<=\.)\s/)[0],
      kind: e.def.kind,
      access: e.def.access,
      price: t.tools[i]._meta?.price,
    };
  });
}

/** tools/call of a discovery tool. */
export async function callDiscoveryTool(
  rt: Runtime,
  c: Context,
  params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> },
): Promise<CallToolResult> {
  try {
    if (params.name === SEARCH) {
      const args = argsOf(params.arguments, ["query", "limit"]);
      if (typeof args.query !== "string" || !args.query.trim()) throw invalid("query", "query is required: say in a few words what you need");
      if (args.query.length > 500) throw invalid("query", "query is over 500 characters");
      const limit = args.limit ?? 10;
      if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > 50) throw invalid("limit", "limit must be a whole number from 1 to 50");
      const tools = search(rt, c, args.query, limit);
      return answer({ result: { tools, ...(tools.length ? {} : { hint: "no tool matched; try other words, such as a service name (notes, files, weather)" }) } });
    }
    if (params.name === DESCRIBE) {
      const entry = visibleEntry(rt, c, toolName(argsOf(params.arguments, ["name"])));
      const t = toolTable(rt);
      return answer({ result: t.tools[t.entries.indexOf(entry)] });
    }
    const args = argsOf(params.arguments, ["name", "arguments"]);
    // Scope is left to dispatch, which refuses an out-of-scope call with 403 naming the service, as a direct call is.
    const entry = visibleEntry(rt, c, toolName(args), false);
    if (args.arguments !== undefined && (typeof args.arguments !== "object" || args.arguments === null || Array.isArray(args.arguments)))
      throw invalid("arguments", "arguments must be an object of the tool's arguments");
    return callTool(rt, { entry, args: args.arguments as Record<string, unknown> | undefined, meta: params._meta, caller: c.caller, baseUrl: c.baseUrl });
  } catch (e) {
    return refusal(asHearthError(e));
  }
}
