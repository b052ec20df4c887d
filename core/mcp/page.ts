// The page a browser gets at /mcp: how to connect a client, and the tools.
import type { Caller } from "../plugin.ts";
import type { Runtime } from "../runtime.ts";
import { creditsOf, inFilter, inScope, priceText, toolTable } from "./tools.ts";

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/** Client configurations for this endpoint, as each client's documentation asks for them. */
export function clientConfigs(endpoint: string) {
  const json = (v: unknown) => JSON.stringify(v, null, 2);
  const stdio = { command: "hearth", args: ["mcp"], env: { HEARTH_DATA: "/path/to/data", HEARTH_TOKEN: "YOUR_TOKEN" } };
  // Claude Desktop's file takes only commands; mcp-remote carries the header. Spaces stay in env, not args, for clients that split args.
  const remoteArgs = ["-y", "mcp-remote", endpoint, "--header", "Authorization:${AUTH_HEADER}"];
  if (endpoint.startsWith("http://") && !/^http:\/\/(localhost|127\.0\.0\.1|\[::1\])[:/]/.test(endpoint)) remoteArgs.push("--allow-http");
  return {
    // Quoted: a "?" in the address is a wildcard to some shells.
    // The name comes first: --env and --header take any number of values and would swallow it.
    claudeCode: `claude mcp add hearth --transport http '${endpoint}' --header "Authorization: Bearer YOUR_TOKEN"`,
    claudeCodeStdio: "claude mcp add hearth --transport stdio --env HEARTH_DATA=/path/to/data --env HEARTH_TOKEN=YOUR_TOKEN -- hearth mcp",
    claudeDesktop: json({ mcpServers: { hearth: stdio } }),
    claudeDesktopHttp: json({ mcpServers: { hearth: { command: "npx", args: remoteArgs, env: { AUTH_HEADER: "Bearer YOUR_TOKEN" } } } }),
    cursor: json({ mcpServers: { hearth: { url: endpoint, headers: { Authorization: "Bearer YOUR_TOKEN" } } } }),
    cursorStdio: json({ mcpServers: { hearth: stdio } }),
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
        `<td>${esc(
          priceText(creditsOf(rt, e))
            .replace(/^Price: /, "")
            .replace(/\.$/, ""),
        )}</td><td>${e.def.access === "account" ? "account" : "anyone"}</td></tr>`,
    );
  }
  const services = [...new Set(t.entries.map((e) => e.service))];
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Hearth MCP</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:62rem;margin:2rem auto;padding:0 1rem;color:#222}
pre{background:#f4f2ee;padding:.8rem;white-space:pre-wrap;overflow-wrap:anywhere;border-radius:4px}
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
<p>Or on the machine that holds the data folder, over stdio (no server needed; <code>--user NAME</code> after <code>mcp</code> instead of the token acts as that account):</p>
<pre>${esc(cfg.claudeCodeStdio)}</pre>

<h2>Claude Desktop</h2>
<p>In <code>claude_desktop_config.json</code> (Settings, Developer, Edit Config), on the machine that holds the data folder:</p>
<pre>${esc(cfg.claudeDesktop)}</pre>
<p>Or to this server over HTTP, through <code>mcp-remote</code> (needs Node):</p>
<pre>${esc(cfg.claudeDesktopHttp)}</pre>

<h2>Cursor</h2>
<p>In <code>~/.cursor/mcp.json</code>, or <code>.cursor/mcp.json</code> in a project:</p>
<pre>${esc(cfg.cursor)}</pre>
<p>Or over stdio:</p>
<pre>${esc(cfg.cursorStdio)}</pre>
<p><code>hearth</code> is the single binary (<code>bun run build</code> makes <code>dist/hearth</code>); from a checkout, use <code>"command": "bun"</code> with <code>"args": ["/path/to/hearth/core/cli/main.ts", "mcp"]</code>.</p>

<h2>Any client</h2>
<pre>${esc(`curl -X POST '${endpoint}' -H 'Authorization: Bearer YOUR_TOKEN' -d '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'`)}</pre>

<h2>Tools (${rows.length})</h2>
<table><thead><tr><th>Tool</th><th>What it does</th><th>Kind</th><th>Price</th><th>Who</th></tr></thead>
<tbody>
${rows.join("\n")}
</tbody></table>
</body></html>`;
  return new Response(html, { headers: { "content-type": "text/html; charset=utf-8" } });
}
