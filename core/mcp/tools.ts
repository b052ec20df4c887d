// MCP tools derived from the registry and nothing else: one tool per method,
// named <service>_<method>, so a drop-in plugin's methods appear with no edit.
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { Caller } from "../plugin.ts";
import type { MethodEntry } from "../registry.ts";
import type { Runtime } from "../runtime.ts";

/** Credits per call as the instance charges it; null when the price depends on the arguments. */
export function creditsOf(rt: Runtime, entry: MethodEntry): number | null {
  if (rt.config.HEARTH_METERING === "off") return 0;
  // The payments module lists prices with the instance's overrides applied; the declared price stands in without it.
  const prices = (rt.metering as unknown as { prices?: { listed?(e: MethodEntry): number | null } } | null)?.prices;
  if (prices?.listed) return prices.listed(entry);
  const p = entry.def.price ?? 0;
  return typeof p === "number" ? p : null;
}

export function priceText(credits: number | null): string {
  if (credits === null) return "Price: depends on the arguments; the answer says what was charged.";
  if (credits === 0) return "Price: free.";
  return `Price: ${credits} credit${credits === 1 ? "" : "s"} ($${(credits / 100).toFixed(2)}) per call.`;
}

/** The classes a method declares, by name ("outbound", "costs"), as the tool list and the price list show them. */
export function classList(entry: MethodEntry): string[] {
  return Object.entries(entry.classes).flatMap(([k, on]) => (on ? [k] : []));
}

export function toolOf(rt: Runtime, entry: MethodEntry): Tool {
  const def = entry.def;
  const credits = creditsOf(rt, entry);
  const access = def.access === "account" ? "Needs an account (a Bearer token)." : "Open to anyone.";
  const readOnly = def.kind === "read";
  const title = `${entry.service} ${entry.name.replace(/_/g, " ")}`;
  return {
    name: entry.tool,
    title,
    description: `${def.description.trim()}\n\n${priceText(credits)} ${access}`,
    // The registry's published schema, the same one OpenAPI and the agent show.
    inputSchema: entry.schema as Tool["inputSchema"],
    // Any call may wait on its credential's policy; a client that can poll may ask for a task (core/mcp/tasks.ts). 2026-07-28 drops this member.
    execution: { taskSupport: "optional" },
    annotations: {
      title,
      readOnlyHint: readOnly,
      // The protocol's defaults assume the worst, so both are stated.
      destructiveHint: !readOnly && entry.classes.destructive,
      // Reaching a provider, sending outside and answering with outside content all touch the open world.
      openWorldHint: def.openWorld === true || entry.classes.outbound || entry.classes.untrusted,
    },
    _meta: {
      price: credits === null ? { credits: null, varies: true } : { credits, usd: credits / 100 },
      access: def.access,
      classes: classList(entry),
      http: `${readOnly ? "GET" : "POST"} /api/v1/${entry.path}`,
    },
  };
}

/** Tool definitions are pure functions of the registry, so they are built once per runtime. */
const cache = new WeakMap<Runtime, { tools: Tool[]; entries: MethodEntry[]; byName: Map<string, MethodEntry> }>();

export function toolTable(rt: Runtime) {
  let t = cache.get(rt);
  if (!t) {
    const entries = rt.registry.list();
    t = { entries, tools: entries.map((e) => toolOf(rt, e)), byName: new Map(entries.map((e) => [e.tool, e])) };
    cache.set(rt, t);
  }
  return t;
}

/** `?tools=news,web`: service names (or whole tool names) to expose; null means every one. */
export function parseFilter(raw: string | null | undefined): Set<string> | null {
  if (!raw) return null;
  const names = raw
    .split(",")
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  return names.length ? new Set(names) : null;
}

export function inFilter(entry: MethodEntry, filter: Set<string> | null): boolean {
  return !filter || filter.has(entry.service) || filter.has(entry.tool);
}

/** A token limited to some services sees only those; a stranger sees everything it could try. */
export function inScope(entry: MethodEntry, caller: Caller): boolean {
  if (caller.scopes === "*") return true;
  if (!caller.account && caller.via !== "token" && caller.via !== "session") return true;
  return caller.scopes.includes(entry.service);
}

export function visibleTools(rt: Runtime, caller: Caller, filter: Set<string> | null): Tool[] {
  const t = toolTable(rt);
  if (!filter && caller.scopes === "*") return t.tools;
  const out: Tool[] = [];
  for (let i = 0; i < t.entries.length; i++) if (inFilter(t.entries[i], filter) && inScope(t.entries[i], caller)) out.push(t.tools[i]);
  return out;
}
