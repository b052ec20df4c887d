// x402 over MCP, per the x402 MCP transport: the payment arrives in a
// tools/call's params._meta["x402/payment"], as a PaymentPayload object or,
// as older clients (agents/x402's withX402Client) send it, its base64 JSON;
// payment required is a tool result with isError true carrying
// PaymentRequired in structuredContent, in _meta["x402/error"] (where those
// clients look) and in content[0].text as {"x402/error": {code: 402, message,
// data}}; the settlement goes back in the result's _meta["x402/payment-response"].
import type { Caller } from "../plugin.ts";
import { paymentCaller, paymentOf, paymentRequiredOf, type PaymentRequired, type SettleResponse } from "./x402.ts";
import { decodePaymentSignatureHeader } from "@x402/core/http";
import { HearthError, invalid } from "../errors.ts";

export const META_PAYMENT = "x402/payment";
export const META_PAYMENT_RESPONSE = "x402/payment-response";
export const META_ERROR = "x402/error";

export interface PaymentToolResult {
  [key: string]: unknown;
  isError: true;
  structuredContent: Record<string, unknown>;
  content: { type: "text"; text: string }[];
  _meta: Record<string, unknown>;
}

/** A payment given as a string: base64 JSON of the PaymentPayload, as in the HTTP headers. */
function decodePayment(value: string, field: string): unknown {
  try {
    return decodePaymentSignatureHeader(value.trim());
  } catch {
    throw invalid(field, `${field} must be an x402 PaymentPayload object or its base64-encoded JSON`);
  }
}

export const mcpPayment = {
  /**
   * The caller a tools/call runs as: a payment in _meta pays for the call,
   * whether a stranger or an account sent it; without one the identified
   * caller stays as it is. A malformed payment throws a 400 naming
   * "_meta.x402/payment".
   */
  caller(meta: Record<string, unknown> | undefined | null, identified: Caller): Caller {
    const payment = meta?.[META_PAYMENT];
    if (payment === undefined || payment === null) return identified;
    const field = `_meta.${META_PAYMENT}`;
    return paymentCaller(typeof payment === "string" ? decodePayment(payment, field) : payment, { caller: identified, field });
  },

  /** The tool result for a refusal that x402 clients can pay, or undefined for any other refusal. */
  errorResult(e: unknown): PaymentToolResult | undefined {
    const required = paymentRequiredOf(e);
    if (!required) return undefined;
    const settlement = (e as HearthError).extra?.[META_PAYMENT_RESPONSE] as SettleResponse | undefined;
    const structured: Record<string, unknown> = settlement ? { ...required, [META_PAYMENT_RESPONSE]: settlement } : { ...required };
    return {
      isError: true,
      structuredContent: structured,
      content: [{ type: "text", text: JSON.stringify({ [META_ERROR]: { code: 402, message: required.error ?? "Payment required", data: structured } }) }],
      _meta: { [META_ERROR]: structured },
    };
  },

  /** What to merge into a successful result's _meta: the settlement receipt of a paid call. */
  resultMeta(caller: Caller): Record<string, unknown> | undefined {
    const receipt = paymentOf(caller)?.receipt;
    return receipt ? { [META_PAYMENT_RESPONSE]: receipt } : undefined;
  },
};
