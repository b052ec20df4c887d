// The page a browser gets at /mcp: how to connect a client, and the tools,
// in the same page shell as the instance's other pages.
import { findSession } from "../auth/sessions.ts";
import { html, page, type Html } from "../http/pages/layout.ts";
import type { Caller } from "../plugin.ts";
import type { Runtime } from "../runtime.ts";
import { creditsOf, inFilter, inScope, priceText, toolTable } from "./tools.ts";

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

const STYLE = html`<style>
main,header{max-width:62rem}
pre{white-space:pre-wrap;overflow-wrap:anywhere;padding:.75rem;border:1px solid var(--line);border-radius:.4rem;background:var(--field);font:.9rem/1.4 ui-monospace,SFMono-Regular,Menlo,monospace}
code{overflow-wrap:break-word}
</style>`;

export async function mcpPage(rt: Runtime, req: Request, caller: Caller, filter: Set<string> | null): Promise<Response> {
  const url = new URL(req.url);
  const origin = rt.config.HEARTH_PUBLIC_URL || url.origin;
  const endpoint = `${origin}/mcp${url.search}`;
  const cfg = clientConfigs(endpoint);
  const t = toolTable(rt);
  const rows: Html[] = [];
  for (const e of t.entries) {
    if (!inFilter(e, filter) || !inScope(e, caller)) continue;
    const kind = e.def.kind === "read" ? "read" : e.def.destructive ? "write, removes or overwrites" : "write";
    const price = priceText(creditsOf(rt, e))
      .replace(/^Price: /, "")
      .replace(/\.$/, "");
    rows.push(
      html`<tr><td data-label="Tool"><code>${e.tool}</code></td><td data-label="What it does">${e.def.description}</td><td data-label="Kind">${kind}${e.def.openWorld ? ", reaches outside" : ""}</td><td data-label="Price">${price}</td><td data-label="Who">${e.def.access === "account" ? "account" : "anyone"}</td></tr>\n`,
    );
  }
  const services = [...new Set(t.entries.map((e) => e.service))];
  const body = html`<p>Every Hearth method is a tool named <code>&lt;service&gt;_&lt;method&gt;</code>, with the same answer and the same price as
<code>/api/v1/&lt;service&gt;/&lt;method&gt;</code>. This endpoint speaks MCP over Streamable HTTP:</p>
<pre>${endpoint}</pre>
<p>Send your token as <code>Authorization: Bearer YOUR_TOKEN</code> (make one on the <a href="/token">token page</a>). Without one, only the methods open to anyone answer.
Add <code>?tools=${services.slice(0, 2).join(",") || "SERVICE"}</code> to the address to offer only some services' tools.</p>
<p><strong>Connectors that sign in.</strong> A client that supports MCP authorization (a chat app's "add connector" screen, <code>mcp-remote</code>) needs no token: give it <code>${origin}/mcp?signin</code>.
It is sent to sign in here and choose the services it may use; it then shows under <em>Connected apps</em> on the <a href="/token">token page</a>, where you can disconnect it.</p>
<p><strong>Fewer tools up front.</strong> With <code>?mode=discover</code> (or the header <code>Hearth-Tools-Mode: discover</code>; <code>hearth mcp --mode discover</code> over stdio)
the tool list holds three tools instead of ${t.entries.length}: <code>search_tools</code> finds tools for a need, <code>describe_tool</code> gives one tool's input schema and price,
and <code>call_tool</code> calls it by name, at the same price and within the same scope as calling it directly. It keeps a model's context small; the other settings above still apply.</p>
<p>Both protocol eras are served here: clients of the 2025-11-25 revision open a session with <code>initialize</code>; clients of 2026-07-28 send each request on its own, with no session.</p>

<h2>Claude Code</h2>
<pre>${cfg.claudeCode}</pre>
<p>Or on the machine that holds the data folder, over stdio (no server needed; <code>--user NAME</code> after <code>mcp</code> instead of the token acts as that account):</p>
<pre>${cfg.claudeCodeStdio}</pre>

<h2>Claude Desktop</h2>
<p>In <code>claude_desktop_config.json</code> (Settings, Developer, Edit Config), on the machine that holds the data folder:</p>
<pre>${cfg.claudeDesktop}</pre>
<p>Or to this server over HTTP, through <code>mcp-remote</code> (needs Node):</p>
<pre>${cfg.claudeDesktopHttp}</pre>

<h2>Cursor</h2>
<p>In <code>~/.cursor/mcp.json</code>, or <code>.cursor/mcp.json</code> in a project:</p>
<pre>${cfg.cursor}</pre>
<p>Or over stdio:</p>
<pre>${cfg.cursorStdio}</pre>
<p><code>hearth</code> is the single binary (<code>bun run build</code> makes <code>dist/hearth</code>); from a checkout, use <code>"command": "bun"</code> with <code>"args": ["/path/to/hearth/core/cli/main.ts", "mcp"]</code>.</p>

<h2>Any client</h2>
<pre>${`curl -X POST '${endpoint}' -H 'Authorization: Bearer YOUR_TOKEN' -d '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'`}</pre>

<h2>Tools (${rows.length})</h2>
<table><thead><tr><th scope="col">Tool</th><th scope="col">What it does</th><th scope="col">Kind</th><th scope="col">Price</th><th scope="col">Who</th></tr></thead>
<tbody>
${rows}</tbody></table>`;
  const s = await findSession(rt, req);
  return page({ title: "Connect over MCP", body, account: s?.account ?? null, csrf: s?.csrf, head: STYLE });
}
