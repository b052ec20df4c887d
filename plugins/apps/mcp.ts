// Hosted apps in an MCP Apps host: each app the caller may open there (their
// own and the instance's) is a view, ui://hearth/apps/<slug>, opened by a tool
// of its own, apps-<slug>. A view is linked to one tool, fixed in tools/list,
// so each app gets its tool; calling
// it runs apps/read for that app through dispatch (its details, without the
// page, which the host already has as the view). The view is the app's page
// with what its page under /apps has in front: the same CSP (as a meta
// element, the host framing it in its own sandbox) and the same guard, then
// the MCP Apps bridge in place of the host page's.
import { desc, eq, or } from "drizzle-orm";
import type { PluginViews, View, ViewHost, ViewTool } from "hearth";
import { FRAME_GUARD, inertShadowRoots } from "./guard.ts";
import { afterDoctype, FRAME_CSP } from "./pages.ts";
import { apps } from "./schema.ts";

const VIEW = "ui://hearth/apps/";
const TOOL = "apps-";
/** The newest apps offered as tools: enough to find one, few enough not to crowd a model's tool list. */
const OFFERED = 50;

type Row = { slug: string; name: string; description: string; ownerName: string };
const columns = { slug: apps.slug, name: apps.name, description: apps.description, ownerName: apps.ownerName };

/**
 * Which apps a conversation may open: the caller's own and the instance's.
 * There an app's calls are the host's tools/call with the connection's token,
 * and the questions its page under /apps asks before an app uses an account
 * cannot be asked; so someone else's app is opened at its page, or forked to
 * be one's own. (One's own priced app opens free, as at its page.)
 */
const mayOpen = (h: ViewHost) => (h.caller.account ? or(eq(apps.starter, true), eq(apps.owner, h.caller.account.id)) : eq(apps.starter, true));

async function offered(h: ViewHost): Promise<Row[]> {
  return (await h.db.select(columns).from(apps).where(mayOpen(h)).orderBy(desc(apps.created), desc(apps.slug)).limit(OFFERED).all()) as Row[];
}

const view = (a: Row): View => ({ uri: VIEW + a.slug, name: `app-${a.slug}`, title: a.name, description: `${a.description} (a hosted app by ${a.ownerName})` });

/**
 * `hearth` inside a conversation: `hearth.call("service/method", args)` is the
 * host's tools/call of `service_method`, so it reaches the instance as any
 * tool call does, with the host's caller, scopes and prices; `hearth.store`
 * is the host's tools/call of the apps store methods for this app, the same
 * store its page under /apps keeps for the person. Who the person is belongs
 * to that page, where they allow it; here it refuses, saying so.
 */
const MCP_BRIDGE = (version: string, slug: string) => `(() => {
  const app = new McpApps.App({ name: "Hearth app", version: ${version} }, {}, { autoResize: true });
  const ready = app.connect();
  const SLUG = ${JSON.stringify(slug).replace(/</g, "\\u003c")};
  const refuse = (what) => () => Promise.reject(Object.assign(new Error(what + " belongs to the app's own page under /apps: open it there"), { status: 501, kind: "not_configured" }));
  const json = (v) => (v === undefined ? null : JSON.parse(JSON.stringify(v)));
  async function call(method, args) {
    await ready;
    const r = await app.callServerTool({ name: String(method).replace("/", "_"), arguments: json(args || {}) });
    const body = (r && r.structuredContent) || {};
    if (!r.isError) return body.result;
    const x = body.error || {};
    throw Object.assign(new Error(x.message || "refused"), { status: x.status, kind: x.kind, field: x.field });
  }
  const kept = (op, args) => call("apps/store_" + op, Object.assign({ slug: SLUG }, args));
  const store = Object.freeze({
    get: (key) => kept("get", { key: String(key) }),
    set: (key, value) => kept("set", { key: String(key), value: json(value) }),
    remove: (key) => kept("remove", { key: String(key) }),
    keys: (prefix) => kept("keys", prefix == null ? {} : { prefix: String(prefix) }),
  });
  Object.defineProperty(window, "hearth", { value: Object.freeze({ store, call, user: refuse("Knowing who you are") }), enumerable: true });
})();`;

async function appView(host: ViewHost, html: string, slug: string): Promise<string> {
  const h = inertShadowRoots(html);
  const at = afterDoctype(h);
  const first = await host.head({ csp: FRAME_CSP, scripts: [FRAME_GUARD], bridge: (version) => MCP_BRIDGE(version, slug) });
  return h.slice(0, at) + first + h.slice(at);
}

/** The hosted apps as MCP Apps views, each opened by a tool of its own. */
export const appViews: PluginViews = {
  async views(h) {
    return h.method("read") ? (await offered(h)).map(view) : [];
  },
  async tools(h): Promise<ViewTool[]> {
    const entry = h.method("read");
    if (!entry) return [];
    const base = h.tool(entry);
    return (await offered(h)).map((a) => ({
      view: VIEW + a.slug,
      entry,
      args: { slug: a.slug },
      shape: (r) => {
        const { html: _page, ...details } = r as Record<string, unknown>;
        return details;
      },
      tool: {
        // apps/read's tool, with its price and access, named and described for this app.
        ...base,
        name: TOOL + a.slug,
        title: a.name,
        description: `Opens the hosted app "${a.name}" by ${a.ownerName} in the conversation: ${a.description}\n\nAnswers its details as apps/read does, without its page. ${h.price(entry)}`,
        inputSchema: { type: "object", properties: {}, additionalProperties: false },
        annotations: { title: a.name, readOnlyHint: true, destructiveHint: false, openWorldHint: false },
        _meta: { ...base._meta, http: `GET /api/v1/apps/read?slug=${a.slug}` },
      },
    }));
  },
  async read(h, uri) {
    if (!uri.startsWith(VIEW) || !h.method("read")) return null;
    const slug = uri.slice(VIEW.length);
    const app = await h.db.select({ html: apps.html, ownerName: apps.ownerName, owner: apps.owner, starter: apps.starter }).from(apps).where(eq(apps.slug, slug)).get();
    if (!app) return null;
    if (!app.starter && !(h.caller.account && app.owner === h.caller.account.id))
      return {
        refused: `the app "${slug}" is ${app.ownerName}'s: in a conversation an app calls methods with your connection's token without asking you first, so only your own apps and the instance's open here; open it at /apps/${slug}, or fork it (apps/fork) to make it yours`,
      };
    return appView(h, app.html, slug);
  },
};
