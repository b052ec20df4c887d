// x402 over MCP, per the x402 MCP transport: the payment arrives in a
// tools/call's params._meta["x402/payment"]; payment required is a tool result
// with isError true carrying PaymentRequired (structuredContent, and
// content[0].text as {"x402/error": {code: 402, message, data}}); the
// settlement goes back in the result's _meta["x402/payment-response"].
import type { Caller } from "../plugin.ts";
import { paymentCaller, paymentOf, paymentRequiredOf, type PaymentRequired, type SettleResponse } from "./x402.ts";
import { HearthError } from "../errors.ts";

export const META_PAYMENT = "x402/payment";
export const META_PAYMENT_RESPONSE = "x402/payment-response";

export interface PaymentToolResult {
  [key: string]: unknown;
  isError: true;
  structuredContent: Record<string, unknown>;
  content: { type: "text"; text: string }[];
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
    return paymentCaller(payment, { caller: identified, field: `_meta.${META_PAYMENT}` });
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
      content: [{ type: "text", text: JSON.stringify({ "x402/error": { code: 402, message: required.error ?? "Payment required", data: structured } }) }],
    };
  },

  /** What to merge into a successful result's _meta: the settlement receipt of a paid call. */
  resultMeta(caller: Caller): Record<string, unknown> | undefined {
    const receipt = paymentOf(caller)?.receipt;
    return receipt ? { [META_PAYMENT_RESPONSE]: receipt } : undefined;
  },
};
