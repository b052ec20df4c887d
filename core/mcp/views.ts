// What MCP Apps views are made of: each is one self-contained page (hosts
// frame it with no network by default) carrying the MCP Apps package's own
// browser bundle inline for its side of the protocol with the host, and the
// home cards' view. Loaded only when a view is read: the bundle is half a
// megabyte of text.
import * as withDeps from "@modelcontextprotocol/ext-apps/app-with-deps" with { type: "text" };
import pkg from "../../package.json" with { type: "json" };

/**
 * The package's bundle is an ES module ending in one `export{…}`; run as the
 * body of a function that returns those names instead, it becomes a classic
 * script that defines `McpApps` before anything after it runs, as a hosted
 * app's own scripts expect of `hearth`.
 */
function classicBundle(): string {
  const src = (withDeps as unknown as { default: string }).default;
  const m = /export\s*\{([^{}]*)\}\s*;?\s*$/.exec(src);
  if (!m || src.includes("<!--")) throw new Error("the MCP Apps browser bundle is not in the shape this module inlines");
  const names = m[1].split(",").map((p) => {
    const [local, exported = local] = p.trim().split(/\s+as\s+/);
    return `${JSON.stringify(exported)}: ${local}`;
  });
  const body = src.slice(0, m.index).replace(/<\/script/gi, "<\\/script");
  return `const McpApps = (() => {\n${body}\nreturn { ${names.join(", ")} };\n})();`;
}

let bundle: string | null = null;

/** The package's `App` class and its transport as `McpApps`, for an inline classic script. */
export const mcpAppsScript = () => (bundle ??= classicBundle());

/** A meta CSP keeps what a header would: `sandbox` and `frame-ancestors` have no effect there, and the host frames the page in its own sandbox. */
export const metaCsp = (csp: string) =>
  csp
    .split(";")
    .map((d) => d.trim())
    .filter((d) => d && !/^(sandbox|frame-ancestors)\b/.test(d))
    .join("; ");

export const cspMeta = (csp: string) => `<meta http-equiv="Content-Security-Policy" content="${csp}">`;
export const scriptText = (js: string) => js.replace(/<\/script/gi, "<\\/script");
export const VERSION = JSON.stringify(pkg.version);

/** A card: its own inline code and styles only, no network. */
export const CARD_VIEW_CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; connect-src 'none'; worker-src 'none'; form-action 'none'; base-uri 'none'";

const CARD_STYLE = `:root{color-scheme:light dark;--line:#8884;--muted:#777}
body{margin:0;font:15px/1.4 system-ui,sans-serif;background:transparent}
.card{padding:.8rem 1rem}
h2{margin:0 0 .4rem;font-size:1.1rem}
ul{list-style:none;margin:0;padding:0}
li{padding:.3rem 0;border-top:1px solid var(--line);display:flex;flex-wrap:wrap;justify-content:space-between;gap:0 .75rem}
li:first-child{border-top:0}
.when,#status{color:var(--muted);font-size:.93rem}
.lead{margin:.2rem 0 .5rem}
button{margin-top:.5rem}`;

/**
 * A home card that shows a tool's answer. The server reads the answer as the
 * home screen does and sends the card's lines in the result's
 * `_meta["hearth/card"]`; the page only lays them out, as text. "Refresh"
 * calls the tool again through the host with the same arguments.
 */
export function cardView(o: { title: string; tool: string }): string {
  const script = `const { App } = McpApps;
const app = new App({ name: "Hearth card", version: ${VERSION} }, {}, { autoResize: true });
const TOOL = ${JSON.stringify(o.tool)};
const $ = (id) => document.getElementById(id);
let args = {};
function show(r) {
  const card = r && r._meta && r._meta["hearth/card"];
  const body = (r && r.structuredContent) || {};
  $("status").textContent = "";
  if (r.isError || !card) {
    $("lines").replaceChildren();
    $("lead").hidden = true;
    $("status").textContent = (body.error && body.error.message) || "Nothing to show now.";
    return;
  }
  $("title").textContent = card.title;
  $("lead").textContent = card.lead || "";
  $("lead").hidden = !card.lead;
  $("lines").replaceChildren(...card.lines.map((l) => {
    const li = document.createElement("li");
    const text = document.createElement("span");
    text.textContent = l.text;
    li.append(text);
    if (l.detail) { const d = document.createElement("span"); d.className = "when"; d.textContent = l.detail; li.append(d); }
    return li;
  }));
  if (!card.lines.length && !card.lead) $("status").textContent = "Nothing to show now.";
  $("refresh").hidden = false;
}
app.ontoolinput = (p) => { args = (p && p.arguments) || {}; };
app.ontoolresult = show;
$("refresh").addEventListener("click", async () => {
  $("refresh").disabled = true;
  try { show(await app.callServerTool({ name: TOOL, arguments: args })); }
  catch (e) { $("status").textContent = String((e && e.message) || e); }
  finally { $("refresh").disabled = false; }
});
app.connect().catch((e) => { $("status").textContent = String((e && e.message) || e); });`;
  const title = o.title.replace(/[<>&"]/g, "");
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">${cspMeta(CARD_VIEW_CSP)}<title>${title}</title><style>${CARD_STYLE}</style></head>
<body><section class="card" aria-labelledby="title"><h2 id="title">${title}</h2><p class="lead" id="lead" hidden></p><ul id="lines"></ul><p id="status" role="status">Waiting for the answer…</p><button id="refresh" type="button" hidden>Refresh</button></section>
<script>${scriptText(mcpAppsScript())}
${script}</script></body></html>`;
}
