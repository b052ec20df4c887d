// MCP Apps (the `io.modelcontextprotocol/ui` extension): views a host renders
// in the conversation, offered as `ui://` resources and linked from tools by
// `_meta.ui.resourceUri`. Only a client that declares the extension, at
// initialize or in a request's own `_meta`, sees the links, the views and the
// tools that exist only to open a view; to any other client tools are as before.
//
// The home cards a plugin offers as views (its manifest's `card.view`) are here;
// plugins declare other views in `provides.views` (the apps plugin: one view per hosted app). A view's
// calls (`callServerTool`) come back as ordinary tools/call requests, through
// dispatch with the host's caller, scopes and prices: nothing here runs a method.
import { EXTENSION_ID, RESOURCE_MIME_TYPE, RESOURCE_URI_META_KEY } from "@modelcontextprotocol/ext-apps/server";
import type { CallToolResult, ClientCapabilities, ListResourcesResult, ReadResourceResult, Resource, Tool } from "@modelcontextprotocol/sdk/types.js";
import { cardSources, readCard } from "../http/pages/home/cards.ts";
import type { Caller } from "../plugin.ts";
import type { MethodEntry } from "../registry.ts";
import type { Runtime } from "../runtime.ts";
import { isRecord } from "./rpc.ts";
import { pluginViews } from "./plugin-views.ts";
import { inFilter, inScope } from "./tools.ts";

export { EXTENSION_ID as UI_EXTENSION, RESOURCE_MIME_TYPE as UI_MIME };

/** What a view needs of the request it answers. */
export interface UiContext {
  caller: Caller;
  filter: Set<string> | null;
  baseUrl: string;
  /** What the client declared at initialize, for clients that keep a session. */
  client?: ClientCapabilities;
}

/** Where the 2026-07-28 protocol carries the client's capabilities: in every request's `_meta`. */
const REQUEST_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";

type Meta = Record<string, unknown> | undefined;

/** Whether this request's client renders MCP Apps: it names the extension with the MCP App MIME type among those it takes. */
export function rendersApps(c: UiContext, meta?: Meta): boolean {
  const perRequest = meta?.[REQUEST_CAPABILITIES];
  const caps = isRecord(perRequest) ? (perRequest as ClientCapabilities) : c.client;
  const ui = (caps?.extensions as Record<string, unknown> | undefined)?.[EXTENSION_ID];
  if (!isRecord(ui)) return false;
  return Array.isArray(ui.mimeTypes) && ui.mimeTypes.includes(RESOURCE_MIME_TYPE);
}

/** The resource's `_meta.ui`: the sandbox it asks for. No domains means no network at all, which is what every view here keeps. */
export const VIEW_UI_META = { csp: { connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] }, prefersBorder: true };

export interface UiView {
  uri: string;
  name: string;
  title: string;
  description: string;
}

/** A tool that exists only to open a view (one per hosted app), and the method it runs. */
export interface UiTool {
  tool: Tool;
  /** The view it opens. */
  view: string;
  entry: MethodEntry;
  args: Record<string, unknown>;
  /** What of the method's answer the tool gives back, when not all of it. */
  shape?: (result: unknown) => unknown;
}

export interface UiSource {
  /** The views this caller may open. */
  views(rt: Runtime, c: UiContext): UiView[] | Promise<UiView[]>;
  /** The page behind one of its URIs; null when it is not this source's; why not, when the caller may not have it. */
  read(rt: Runtime, c: UiContext, uri: string): Promise<string | { refused: string } | null>;
  /** Tools of its own, each linked to one of its views. */
  tools?(rt: Runtime, c: UiContext): UiTool[] | Promise<UiTool[]>;
  /** Links from the registry's tools to its views: tool name to URI. */
  links?(rt: Runtime): Map<string, string>;
  /** What to add to a linked tool's successful result's `_meta` for its view. */
  resultMeta?(rt: Runtime, entry: MethodEntry, result: unknown): Record<string, unknown> | undefined;
}

/** The core's own views, then those plugins provide. */
const adapted = new WeakMap<object, UiSource>();
const sourcesOf = (rt: Runtime): UiSource[] => [
  cardViews,
  ...rt.views.map((v) => {
    let s = adapted.get(v);
    if (!s) adapted.set(v, (s = pluginViews(v.service, v.source)));
    return s;
  }),
];

/** The same rule as for tools: at this endpoint, and in the caller's scope. */
export const visible = (c: UiContext, entry: MethodEntry) => inFilter(entry, c.filter) && inScope(entry, c.caller);

const linked = (tool: Tool, uri: string): Tool => ({ ...tool, _meta: { ...tool._meta, ui: { resourceUri: uri }, [RESOURCE_URI_META_KEY]: uri } });

/** tools/list for a client that renders MCP Apps: the same tools, the linked ones carrying their view, then the sources' own. */
export async function linkTools(rt: Runtime, c: UiContext, tools: Tool[]): Promise<Tool[]> {
  const links = new Map<string, string>();
  for (const s of sourcesOf(rt)) for (const [tool, uri] of s.links?.(rt) ?? []) links.set(tool, uri);
  const out = tools.map((t) => (links.has(t.name) ? linked(t, links.get(t.name)!) : t));
  for (const s of sourcesOf(rt)) for (const t of (await s.tools?.(rt, c)) ?? []) if (visible(c, t.entry)) out.push(linked(t.tool, t.view));
  return out;
}

/** A source's own tool by name, for tools/call; null when there is none this caller may see. */
export async function uiTool(rt: Runtime, c: UiContext, name: string): Promise<UiTool | null> {
  for (const s of sourcesOf(rt)) for (const t of (await s.tools?.(rt, c)) ?? []) if (t.tool.name === name && visible(c, t.entry)) return t;
  return null;
}

/** A linked tool's result with what its view reads; a source tool's result shaped as it says. */
export function viewResult(rt: Runtime, entry: MethodEntry, out: CallToolResult, own?: UiTool): CallToolResult {
  if (out.isError) return out;
  const body = out.structuredContent as { result?: unknown } | undefined;
  if (own?.shape && body && "result" in body) {
    const shaped = { result: own.shape(body.result) };
    out = { ...out, structuredContent: shaped, content: [{ type: "text", text: JSON.stringify(shaped) }] };
  }
  let meta: Record<string, unknown> | undefined;
  for (const s of sourcesOf(rt)) {
    const more = s.resultMeta?.(rt, entry, body?.result);
    if (more) meta = { ...meta, ...more };
  }
  return meta ? { ...out, _meta: { ...out._meta, ...meta } } : out;
}

/** resources/list: every view this caller may open. */
export async function listViews(rt: Runtime, c: UiContext): Promise<ListResourcesResult> {
  const resources: Resource[] = [];
  for (const s of sourcesOf(rt))
    for (const v of await s.views(rt, c)) resources.push({ uri: v.uri, name: v.name, title: v.title, description: v.description, mimeType: RESOURCE_MIME_TYPE, _meta: { ui: VIEW_UI_META } });
  return { resources };
}

/** resources/read of a view; null when no source has it, and why not when the caller may not have it. */
export async function readView(rt: Runtime, c: UiContext, uri: string): Promise<ReadResourceResult | { refused: string } | null> {
  for (const s of sourcesOf(rt)) {
    const text = await s.read(rt, c, uri);
    if (text === null) continue;
    if (typeof text !== "string") return text;
    return { contents: [{ uri, mimeType: RESOURCE_MIME_TYPE, text, _meta: { ui: VIEW_UI_META } }] };
  }
  return null;
}

// The home cards as views: each linked from the tool of the method the card calls.
const cardUri = (service: string) => `ui://hearth/cards/${service}`;
const toolOf = (s: { service: string; card: { method: string } }) => `${s.service}_${s.card.method}`;

const cardsOn = (rt: Runtime) => cardSources(rt).filter((s) => s.card.view && rt.registry.get(s.service, s.card.method));

const cardViews: UiSource = {
  views(rt, c) {
    return cardsOn(rt)
      .filter((s) => visible(c, rt.registry.get(s.service, s.card.method)!))
      .map((s) => ({
        uri: cardUri(s.service),
        name: `${s.service}-card`,
        title: `${s.card.title} card`,
        description: `The home screen's ${s.card.title.toLowerCase()} card, showing what ${toolOf(s)} answers.`,
      }));
  },
  async read(rt, c, uri) {
    const s = cardsOn(rt).find((x) => cardUri(x.service) === uri);
    if (!s || !visible(c, rt.registry.get(s.service, s.card.method)!)) return null;
    const { cardView } = await import("./views.ts");
    return cardView({ title: s.card.title, tool: toolOf(s) });
  },
  links(rt) {
    return new Map(cardsOn(rt).map((s) => [toolOf(s), cardUri(s.service)]));
  },
  resultMeta(rt, entry, result) {
    const s = cardsOn(rt).find((x) => x.service === entry.service && x.card.method === entry.name);
    if (!s) return undefined;
    // Read as the home screen reads it; a time without its place's zone is shown at the offset it carries.
    const card = readCard(rt, s, result, null);
    return { "hearth/card": { title: card?.title ?? s.card.title, lead: card?.lead ?? null, lines: (card?.lines ?? []).map((l) => ({ text: l.text, detail: l.detail ?? null })) } };
  },
};
