// Paying other servers: over the x402 HTTP transport (POST
// /api/v1/<service>/<method>, PAYMENT-REQUIRED / PAYMENT-SIGNATURE /
// PAYMENT-RESPONSE) or, for a server URL ending in /mcp, over the x402 MCP
// transport (a tool error carrying PaymentRequired, the payment in
// params._meta["x402/payment"], the receipt in the result's _meta).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentPayload, PaymentRequired, SettleResponse } from "@x402/core/types";
import { HearthError, invalid, upstream } from "hearth";
import type { Server } from "./servers.ts";

type Sign = (r: PaymentRequired) => Promise<PaymentPayload>;

export async function callRemote(server: Server, tool: string, args: Record<string, unknown>, sign: Sign): Promise<{ result: unknown; settlement: SettleResponse | null }> {
  return /\/mcp$/.test(server.url!) ? callMcp(server, tool, args, sign) : callHttp(server, tool, args, sign);
}

/** Another server's tool over HTTP: "service_method" is POST /api/v1/service/method, paid per the x402 HTTP transport. */
async function callHttp(server: Server, tool: string, args: Record<string, unknown>, sign: (r: PaymentRequired) => Promise<PaymentPayload>) {
  const m = /^([a-z][a-z0-9]*)[_/]([a-z][a-z0-9_]*)$/.exec(tool);
  if (!m) throw invalid("tool", `tool must be "service_method" (got "${tool}")`);
  const url = `${server.url}/api/v1/${m[1]}/${m[2]}`;
  const post = async (headers: Record<string, string>) => {
    try {
      return await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(args), signal: AbortSignal.timeout(30_000) });
    } catch (e) {
      throw upstream("upstream_unavailable", `${server.name} could not be reached`);
    }
  };
  const answer = async (res: Response, settlement: SettleResponse | null) => {
    const body = (await res.json().catch(() => null)) as { result?: unknown; error?: { message?: string } } | null;
    if (res.ok) return { result: body && "result" in body ? body.result : body, settlement };
    const why = body?.error?.message ?? `HTTP ${res.status}`;
    if (res.status >= 500) throw upstream("upstream_failed", `${server.name} failed ${tool}: ${why}`);
    throw new HearthError("upstream_failed", `${server.name} refused ${tool} (${res.status}): ${why}`, { retry: false });
  };
  const first = await post({});
  if (first.status !== 402) return answer(first, null);
  const header = first.headers.get("payment-required");
  let required: PaymentRequired;
  try {
    required = header ? decodePaymentRequiredHeader(header) : ((await first.json()) as PaymentRequired);
  } catch {
    throw upstream("upstream_failed", `${server.name} asked for payment without a readable x402 challenge`);
  }
  const payload = await sign(required);
  const paid = await post({ "PAYMENT-SIGNATURE": encodePaymentSignatureHeader(payload) });
  const receipt = paid.headers.get("payment-response");
  // A server that took the payment without a receipt is still recorded as paid.
  const settled: SettleResponse | null = !paid.ok
    ? null
    : receipt
      ? decodePaymentResponseHeader(receipt)
      : { success: true, transaction: "", network: payload.accepted.network };
  return answer(paid, settled);
}

const isRequired = (v: unknown): v is PaymentRequired => !!v && typeof v === "object" && "x402Version" in v && Array.isArray((v as PaymentRequired).accepts);

/** Where the x402 MCP transport puts PaymentRequired in a tool error, in the order clients must look. */
function requiredOf(result: { structuredContent?: unknown; content?: unknown }): PaymentRequired | null {
  const sc = result.structuredContent as Record<string, unknown> | undefined;
  if (isRequired(sc)) return sc;
  const wrapped = (sc?.["x402/error"] as { data?: unknown } | undefined)?.data;
  if (isRequired(wrapped)) return wrapped;
  const first = (result.content as { type?: string; text?: string }[] | undefined)?.[0];
  if (first?.type === "text" && first.text) {
    try {
      const parsed = JSON.parse(first.text) as Record<string, unknown>;
      if (isRequired(parsed)) return parsed;
      const data = (parsed["x402/error"] as { data?: unknown } | undefined)?.data;
      if (isRequired(data)) return data;
    } catch {
      return null;
    }
  }
  return null;
}

async function callMcp(server: Server, tool: string, args: Record<string, unknown>, sign: Sign) {
  if (!/^[a-zA-Z0-9_.-]{1,100}$/.test(tool)) throw invalid("tool", `tool must be an MCP tool name (got "${tool}")`);
  const client = new Client({ name: "hearth-wallet", version: "1" });
  try {
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url!)));
    } catch (e) {
      throw upstream("upstream_unavailable", `${server.name} could not be reached`);
    }
    const call = (meta?: Record<string, unknown>) =>
      client.callTool({ name: tool, arguments: args, ...(meta ? { _meta: meta } : {}) }, undefined, { timeout: 30_000 }) as Promise<{
        isError?: boolean;
        structuredContent?: unknown;
        content?: unknown;
        _meta?: Record<string, unknown>;
      }>;
    const answer = (r: Awaited<ReturnType<typeof call>>) => {
      if (r.isError) {
        const text = (r.content as { text?: string }[] | undefined)?.[0]?.text ?? "an error";
        throw new HearthError("upstream_failed", `${server.name} refused ${tool}: ${text.slice(0, 300)}`, { retry: false });
      }
      return r.structuredContent ?? r.content;
    };
    const first = await call();
    const required = first.isError ? requiredOf(first) : null;
    if (!required) return { result: answer(first), settlement: null };
    const payload = await sign(required);
    const paid = await call({ "x402/payment": payload });
    const result = answer(paid);
    const receipt = paid._meta?.["x402/payment-response"] as SettleResponse | undefined;
    return { result, settlement: receipt ?? { success: true, transaction: "", network: payload.accepted.network } };
  } finally {
    await client.close().catch(() => {});
  }
}
