// MCP Apps views a plugin provides (`provides.views`), as the core's view
// sources take them. A plugin's source is handed a ViewHost instead of the
// runtime: who asks, read access to the store, its own methods as this
// caller may see them at this endpoint, their tools as tools/list shows them,
// and the head every view carries (its CSP and the MCP Apps bridge). So a
// drop-in plugin offers views through the SDK alone, and the core behind it
// stays free to change.
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { Caller, Db } from "../plugin.ts";
import type { MethodEntry } from "../registry.ts";
import type { Runtime } from "../runtime.ts";
import type { UiContext, UiSource, UiTool, UiView } from "./apps.ts";
import { creditsOf, inFilter, inScope, priceText, toolOf } from "./tools.ts";

/** A view as resources/list names it. */
export type View = UiView;
/** A tool of the plugin's own that opens one of its views, running one of its methods (`entry`, from ViewHost.method). */
export type ViewTool = UiTool;

export interface ViewHost {
  caller: Caller;
  /** Read access to the store, as a read method's ctx.db. */
  db: Db;
  /** A method of this plugin when the caller may see it here (their scopes, the endpoint's filter); null otherwise. */
  method(name: string): MethodEntry | null;
  /** The tool a method is listed as in tools/list, to base a view's own tool on. */
  tool(entry: MethodEntry): Tool;
  /** "Price: …" as tools/list says it for this method, with the instance's overrides. */
  price(entry: MethodEntry): string;
  /**
   * What a view's page carries first, right after its doctype: its CSP as a
   * meta element (the host frames it in a sandbox of its own), the plugin's
   * `scripts` in order, then the MCP Apps client (`McpApps.App`) and `bridge`,
   * given the instance's version, in one script.
   */
  head(o: { csp: string; scripts?: string[]; bridge: (version: string) => string }): Promise<string>;
}

/** A plugin's MCP Apps views: what it lists, reads and links to tools of its own. */
export interface PluginViews {
  /** The views this caller may open. */
  views(h: ViewHost): View[] | Promise<View[]>;
  /** The page behind one of its URIs; null when it is not this source's; why not, when the caller may not have it. */
  read(h: ViewHost, uri: string): Promise<string | { refused: string } | null>;
  /** Tools of its own, each opening one of its views. */
  tools?(h: ViewHost): ViewTool[] | Promise<ViewTool[]>;
}

function hostOf(rt: Runtime, c: UiContext, service: string): ViewHost {
  return {
    caller: c.caller,
    db: rt.store.rdb,
    method(name) {
      const entry = rt.registry.get(service, name);
      // The same rule as for tools: at this endpoint, and in the caller's scope.
      return entry && inFilter(entry, c.filter) && inScope(entry, c.caller) ? entry : null;
    },
    tool: (entry) => toolOf(rt, entry),
    price: (entry) => priceText(creditsOf(rt, entry)),
    async head(o) {
      const { cspMeta, mcpAppsScript, metaCsp, scriptText, VERSION } = await import("./views.ts");
      return `${cspMeta(metaCsp(o.csp))}${(o.scripts ?? []).map((s) => `<script>${scriptText(s)}</script>`).join("")}<script>${scriptText(mcpAppsScript())}\n${o.bridge(VERSION)}</script>`;
    },
  };
}

/** A plugin's views as a source of the core's. */
export function pluginViews(service: string, src: PluginViews): UiSource {
  return {
    views: (rt, c) => src.views(hostOf(rt, c, service)),
    read: (rt, c, uri) => src.read(hostOf(rt, c, service), uri),
    ...(src.tools ? { tools: (rt: Runtime, c: UiContext) => src.tools!(hostOf(rt, c, service)) } : {}),
  };
}
