// x402 for callers without an account, independent of the transport: HTTP
// (PAYMENT-SIGNATURE / X-PAYMENT headers) and MCP (_meta["x402/payment"]) both
// make a payment caller here, dispatch prices the call, and the settlement
// receipt is read back from the caller by whichever transport answers.
import { decodePaymentSignatureHeader, encodePaymentRequiredHeader } from "@x402/core/http";
import type { PaymentPayload, PaymentRequired, PaymentRequirements, SettleResponse } from "@x402/core/types";
import { USDC, V1_NETWORKS } from "./networks.ts";
import { HearthError, invalid } from "../errors.ts";
import { changedCaller } from "../call.ts";
import type { Caller } from "../plugin.ts";
import type { MethodEntry } from "../registry.ts";

/** What a transport hands over: the decoded payload, v1 or v2. */
export interface PaymentContext {
  version: 1 | 2;
  payload: Record<string, unknown>;
  /** Where it came: the header or _meta key a refusal names. */
  field: string;
  /** The settlement, once the call succeeded and was paid. */
  receipt?: SettleResponse;
}

const payments = new WeakMap<Caller, PaymentContext>();

/**
 * A caller that pays for the call with this x402 payload: a stranger, or the
 * identified `caller` (a copy, since callers may be shared between calls)
 * when an account sends a payment. `payload` is the decoded PaymentPayload
 * object (v1 or v2); a malformed one is a 400 naming `field` (the header or
 * _meta key it came in).
 */
export function paymentCaller(payload: unknown, opts: { address?: string; field?: string; caller?: Caller } = {}): Caller {
  const field = opts.field ?? "x402/payment";
  if (!payload || typeof payload !== "object" || Array.isArray(payload)) throw invalid(field, "the payment must be an x402 PaymentPayload object");
  const p = payload as Record<string, unknown>;
  if (p.x402Version !== 1 && p.x402Version !== 2) throw invalid(field, `x402Version must be 1 or 2 (got ${JSON.stringify(p.x402Version)})`);
  if (!p.payload || typeof p.payload !== "object") throw invalid(field, "the payment has no payload (signature and authorization)");
  const base = opts.caller;
  const caller: Caller = base?.account ? changedCaller(base, {}) : { account: null, scopes: [], via: "payment", address: opts.address ?? base?.address };
  payments.set(caller, { version: p.x402Version, payload: p, field });
  return caller;
}

const byX402 = new WeakSet<Caller>();

/**
 * A copy of an account's caller that pays for a priced call with x402 (from
 * its wallet) rather than in credits: such a call is answered with the x402
 * challenge, and a call free for the account runs as it would for it.
 */
export function payingCaller(caller: Caller): Caller {
  const copy = changedCaller(caller, {});
  byX402.add(copy);
  return copy;
}

export function paysByX402(caller: Caller): boolean {
  return byX402.has(caller);
}

/** Decodes a base64 PAYMENT-SIGNATURE / X-PAYMENT header value; a bad one is a 400 naming the header. */
export function decodePaymentHeader(value: string, header: string): unknown {
  try {
    return decodePaymentSignatureHeader(value.trim());
  } catch {
    throw invalid(header, `the ${header} header must be base64-encoded JSON of an x402 PaymentPayload`);
  }
}

export function paymentOf(caller: Caller): PaymentContext | undefined {
  return payments.get(caller);
}

/** The settlement of a paid call, for the transport to return (PAYMENT-RESPONSE, _meta["x402/payment-response"]). */
export function receiptOf(caller: Caller): SettleResponse | undefined {
  return payments.get(caller)?.receipt;
}

/** The PaymentRequired carried by a 402 refusal, for transports that signal it their own way (MCP). */
export function paymentRequiredOf(e: unknown): PaymentRequired | undefined {
  if (!(e instanceof HearthError) || e.kind !== "payment_required" || !e.extra) return undefined;
  const x = e.extra as Record<string, unknown>;
  if (x.x402Version !== 2 || !Array.isArray(x.accepts)) return undefined;
  return { x402Version: 2, error: e.message, resource: x.resource as PaymentRequired["resource"], accepts: x.accepts as PaymentRequirements[] };
}

/** What a call costs, as every payment refusal states it. */
export const statedPrice = (credits: number) => ({ credits, usd: credits / 100 });

/** The x402 terms this instance takes payment on, from its configuration. */
export interface Terms {
  payTo: string;
  network: string;
  asset: string;
  name: string;
  version: string;
  /** Atomic units per credit. */
  unit: bigint;
  maxTimeoutSeconds: number;
}

/**
 * The token payments are taken in and its EIP-712 domain: X402_ASSET, else
 * USDC on X402_NETWORK; its name and version from X402_ASSET_NAME and
 * X402_ASSET_VERSION, else from that USDC when it is the one.
 */
export function assetOf(config: Readonly<Record<string, string>>): { asset: string; name: string; version: string } {
  const usdc = USDC[config.X402_NETWORK];
  const asset = config.X402_ASSET || usdc?.asset || "";
  const known = usdc && usdc.asset.toLowerCase() === asset.toLowerCase() ? usdc : null;
  return { asset, name: config.X402_ASSET_NAME || known?.name || "USD Coin", version: config.X402_ASSET_VERSION || known?.version || "2" };
}

/** Why these settings cannot take payments (no token known on the network, or USDC of another network), or null. */
export function assetProblem(config: Readonly<Record<string, string>>): string | null {
  const network = config.X402_NETWORK;
  const { asset } = assetOf(config);
  if (!asset) return `X402_ASSET: no USDC is known on X402_NETWORK ${network}; set X402_ASSET to the token's address (and X402_ASSET_NAME, X402_ASSET_VERSION)`;
  for (const [other, usdc] of Object.entries(USDC))
    if (other !== network && usdc.asset.toLowerCase() === asset.toLowerCase())
      return `X402_ASSET ${asset} is USDC on ${other}, not on X402_NETWORK ${network}: leave X402_ASSET empty to take USDC on ${network}`;
  return null;
}

export function termsOf(config: Readonly<Record<string, string>>): Terms | null {
  if (!config.X402_PAY_TO) return null;
  const decimals = Number(config.X402_ASSET_DECIMALS || "6");
  const { asset, name, version } = assetOf(config);
  return {
    payTo: config.X402_PAY_TO,
    network: config.X402_NETWORK,
    asset,
    name,
    version,
    unit: 10n ** BigInt(Math.max(0, decimals - 2)),
    maxTimeoutSeconds: Number(config.X402_MAX_TIMEOUT_SECONDS || "120"),
  };
}

/** The v1 name of a CAIP-2 network ("eip155:8453" -> "base"), for X-PAYMENT v1 payloads. */
export function v1NetworkOf(network: string): string | null {
  const id = Number(network.replace(/^eip155:/, ""));
  for (const [name, chain] of Object.entries(V1_NETWORKS)) if (chain === id) return name;
  return null;
}

export function resourceOf(entry: MethodEntry, baseUrl: string) {
  return { url: `${baseUrl.replace(/\/+$/, "")}/api/v1/${entry.path}`, description: entry.def.description.trim().split("\n")[0], mimeType: "application/json" };
}

export function requirementsOf(t: Terms, credits: number): PaymentRequirements {
  return {
    scheme: "exact",
    network: t.network as PaymentRequirements["network"],
    asset: t.asset,
    amount: (BigInt(credits) * t.unit).toString(),
    payTo: t.payTo,
    maxTimeoutSeconds: t.maxTimeoutSeconds,
    extra: { name: t.name, version: t.version },
  };
}

/** The same terms in v1's shape, which the facilitator expects alongside a v1 payload. */
export function requirementsV1Of(t: Terms, credits: number, resource: { url: string; description: string; mimeType: string }) {
  return {
    scheme: "exact",
    network: v1NetworkOf(t.network) ?? t.network,
    maxAmountRequired: (BigInt(credits) * t.unit).toString(),
    resource: resource.url,
    description: resource.description,
    mimeType: resource.mimeType,
    payTo: t.payTo,
    maxTimeoutSeconds: t.maxTimeoutSeconds,
    asset: t.asset,
    extra: { name: t.name, version: t.version },
  };
}

/**
 * The 402 refusal, read by x402 clients of both versions: v2 clients decode
 * PAYMENT-REQUIRED (base64 PaymentRequired); v1 clients read x402Version and
 * accepts (v1 requirements: maxAmountRequired, resource, a v1 network name)
 * at the top of the body, beside the usual "error", which carries the v2
 * challenge and the price too. A network without a v1 name has no v1 terms,
 * so the top of the body then holds the v2 challenge.
 */
export function challenge(
  t: Terms,
  entry: MethodEntry,
  credits: number,
  baseUrl: string,
  message: string,
  failed?: { settlement: SettleResponse; headers: Record<string, string> },
): HearthError {
  const resource = resourceOf(entry, baseUrl);
  const accepts = [requirementsOf(t, credits)];
  const required: PaymentRequired = { x402Version: 2, error: message, resource, accepts };
  const top = v1NetworkOf(t.network) ? { x402Version: 1, accepts: [requirementsV1Of(t, credits, resource)] } : { x402Version: 2, resource, accepts };
  return new HearthError("payment_required", message, {
    extra: { price: statedPrice(credits), x402Version: 2, resource, accepts, ...(failed ? { "x402/payment-response": failed.settlement } : {}) },
    headers: { "PAYMENT-REQUIRED": encodePaymentRequiredHeader(required), "Cache-Control": "no-store", ...failed?.headers },
    envelope: top,
  });
}

/**
 * The 402 for a metered call by a caller without an account when this
 * instance takes no x402 payments: it states the price and the one way to
 * pay here, and offers no x402 terms it could not honour.
 */
export function noPayments(entry: MethodEntry, credits: number): HearthError {
  return new HearthError(
    "payment_required",
    `${entry.path} costs ${credits} credit${credits === 1 ? "" : "s"} ($${(credits / 100).toFixed(2)}) per call; this instance takes no payment without an account: send "Authorization: Bearer <token>" for an account with credits`,
    { extra: { price: statedPrice(credits) }, headers: { "Cache-Control": "no-store" } },
  );
}

export type { PaymentPayload, PaymentRequired, PaymentRequirements, SettleResponse };
