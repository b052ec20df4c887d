// The page a browser gets at /mcp: how to connect a client, and the tools.
import type { Caller } from "../plugin.ts";
import type { Runtime } from "../runtime.ts";
import { creditsOf, inFilter, inScope, priceText, toolTable } from "./tools.ts";

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/** Client configurations, shared with the stdio command's help so both say the same. */
export function clientConfigs(endpoint: string) {
  const http = { mcpServers: { hearth: { type: "http", url: endpoint, headers: { Authorization: "Bearer YOUR_TOKEN" } } } };
  const cursor = { mcpServers: { hearth: { url: endpoint, headers: { Authorization: "Bearer YOUR_TOKEN" } } } };
  const stdio = { mcpServers: { hearth: { command: "hearth", args: ["mcp"], env: { HEARTH_DATA: "/path/to/data", HEARTH_TOKEN: "YOUR_TOKEN" } } } };
  return {
    claudeCode: `claude mcp add --transport http hearth ${endpoint} --header "Authorization: Bearer YOUR_TOKEN"`,
    claudeCodeStdio: `claude mcp add hearth --env HEARTH_DATA=/path/to/data --env HEARTH_TOKEN=YOUR_TOKEN -- hearth mcp`,
    claudeDesktop: JSON.stringify(stdio, null, 2),
    cursor: JSON.stringify(cursor, null, 2),
    http: JSON.stringify(http, null, 2),
  };
}

export function mcpPage(rt: Runtime, url: URL, caller: Caller, filter: Set<string> | null): Response {
  const origin = rt.config.HEARTH_PUBLIC_URL || url.origin;
  const endpoint = `${origin}/mcp${url.search}`;
  const cfg = clientConfigs(endpoint);
  const t = toolTable(rt);
  const rows: string[] = [];
  for (const e of t.entries) {
    if (!inFilter(e, filter) || !inScope(e, caller)) continue;
    const kind = e.def.kind === "read" ? "read" : e.def.destructive ? "write, deletes" : "write";
    rows.push(
      `<tr><td><code>${esc(e.tool)}</code></td><td>${esc(e.def.description)}</td><td>${kind}${e.def.openWorld ? ", reaches outside" : ""}</td>` +
        `<td>${esc(priceText(creditsOf(rt, e)).replace(/^Price: /, ""))}</td><td>${e.def.access === "account" ? "account" : "anyone"}</td></tr>`,
    );
  }
  const services = [...new Set(t.entries.map((e) => e.service))];
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Hearth MCP</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:62rem;margin:2rem auto;padding:0 1rem;color:#222}
pre{background:#f4f2ee;padding:.8rem;overflow-x:auto;border-radius:4px}
code{font-family:ui-monospace,monospace;font-size:.92em}
table{border-collapse:collapse;width:100%}td,th{text-align:left;vertical-align:top;padding:.35rem .5rem;border-bottom:1px solid #ddd}
h2{margin-top:2rem}
</style></head><body>
<h1>Hearth over MCP</h1>
<p>Every Hearth method is a tool named <code>&lt;service&gt;_&lt;method&gt;</code>, with the same answer and the same price as
<code>/api/v1/&lt;service&gt;/&lt;method&gt;</code>. This endpoint speaks MCP over Streamable HTTP:</p>
<pre>${esc(endpoint)}</pre>
<p>Send your token as <code>Authorization: Bearer YOUR_TOKEN</code>. Without one, only the methods open to anyone answer.
Add <code>?tools=${esc(services.slice(0, 2).join(",") || "notes")}</code> to the address to offer only some services' tools.</p>

<h2>Claude Code</h2>
<pre>${esc(cfg.claudeCode)}</pre>
<p>Or run it on this machine over stdio, against the local data folder:</p>
<pre>${esc(cfg.claudeCodeStdio)}</pre>

<h2>Claude Desktop</h2>
<p>In <code>claude_desktop_config.json</code> (stdio; <code>--user NAME</code> in <code>args</code> instead of the token acts as that account):</p>
<pre>${esc(cfg.claudeDesktop)}</pre>

<h2>Cursor</h2>
<p>In <code>.cursor/mcp.json</code> or <code>~/.cursor/mcp.json</code>:</p>
<pre>${esc(cfg.cursor)}</pre>

<h2>Any client</h2>
<pre>${esc(cfg.http)}</pre>
<pre>${esc(`curl -X POST ${endpoint} -H 'Authorization: Bearer YOUR_TOKEN' -d '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'`)}</pre>

<h2>Tools (${rows.length})</h2>
<table><thead><tr><th>Tool</th><th>What it does</th><th>Kind</th><th>Price</th><th>Who</th></tr></thead>
<tbody>
${rows.join("\n")}
</tbody></table>
</body></html>`;
  return new Response(html, { headers: { "content-type": "text/html; charset=utf-8" } });
}
