// Connects the SDK's own MCP client to a running Hearth, as any MCP client would.
import { PATIENCE_MS } from "./patient.ts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult, ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";

/**
 * Each request may take as long as the runner lets a test take: the SDK's own
 * limit (60 s) is shorter than a loaded machine may need to start a server or
 * answer, and the test is about the answer, not the machine's speed.
 */
export const PATIENT = { timeout: PATIENCE_MS };

/** `capabilities`: what the client declares at initialize (an extension it supports, say). */
export async function mcpClient(base: string, o: { token?: string; query?: string; headers?: Record<string, string>; capabilities?: ClientCapabilities } = {}) {
  const headers: Record<string, string> = { ...o.headers };
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp${o.query ?? ""}`), { requestInit: { headers } });
  const client = new Client({ name: "hearth-test", version: "1.0.0" }, o.capabilities ? { capabilities: o.capabilities } : undefined);
  await client.connect(transport, PATIENT);
  return {
    client,
    transport,
    call: (name: string, args: Record<string, unknown> = {}) => client.callTool({ name, arguments: args }, undefined, PATIENT) as Promise<CallToolResult>,
    close: () => client.close(),
  };
}

/** A JSON-RPC request over plain HTTP, without the SDK, as curl would send it. */
export async function rpc(base: string, method: string, params?: unknown, headers: Record<string, string> = {}, path = "/mcp") {
  const res = await fetch(`${base}${path}`, {
    method: "POST",
    headers,
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, ...(params ? { params } : {}) }),
  });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, body, headers: res.headers };
}
