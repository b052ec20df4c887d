// Paying this instance from inside it: the `x402` capability dispatches a
// tool as the calling account (a stranger, without one) and, when the tool
// asks for payment, has the payer sign and retries with the payment sent
// beside the account's token, so an in-process payment takes exactly the path
// an outside client's does (challenge, verify, run, settle). A tool free for
// the account runs free; a priced one is paid from the payer, never in credits.
import type { CapabilityScope } from "../capabilities.ts";
import { dispatch } from "../dispatch.ts";
import { HearthError, notFound } from "../errors.ts";
import type { MethodEntry } from "../registry.ts";
import type { Runtime } from "../runtime.ts";
import { narrowed } from "../call.ts";
import { paymentCaller, paymentOf, paymentRequiredOf, payingCaller, type PaymentPayload, type PaymentRequired, type SettleResponse } from "./x402.ts";

export interface PaidCall {
  result: unknown;
  /** The settlement when the call was paid; null when it was free. */
  settlement: SettleResponse | null;
  /** What was asked, when the call was paid. */
  required: PaymentRequired | null;
}

export interface InstancePayments {
  /** Calls `tool` ("service_method" or "service/method") on this instance as the caller, paying with what `sign` returns when it costs the caller something. */
  call(tool: string, args: Record<string, unknown>, sign: (required: PaymentRequired) => Promise<PaymentPayload>): Promise<PaidCall>;
}

declare module "../plugin.ts" {
  interface CapabilityTypes {
    x402: InstancePayments;
  }
}

export function findTool(rt: Runtime, tool: string): MethodEntry {
  const entry = tool.includes("/") ? rt.registry.methods.get(tool) : rt.registry.list().find((e) => e.tool === tool);
  if (!entry) throw notFound(`this instance has no tool "${tool}"`);
  return entry;
}

/** ctx.x402: paying this instance's own priced tools as the caller, from the payer rather than in credits. */
export const instancePayments = (s: CapabilityScope): InstancePayments => ({
  async call(tool, args, sign) {
    const entry = findTool(s.rt, tool);
    // Both tries are calls of their own, made from the one paying, so each is priced, charged and limited by itself.
    const base = { service: entry.service, method: entry.name, args, parent: s.call, baseUrl: s.rt.config.HEARTH_PUBLIC_URL || undefined };
    // The account's caller as the call made from this one will have it, so the payment stays with the caller dispatch sees.
    const account = s.caller.account ? narrowed(s.caller, s.call) : null;
    const first = account ? payingCaller(account) : { account: null, scopes: [] as string[], via: "none" as const };
    try {
      return { result: await dispatch(s.rt, { ...base, caller: first }), settlement: null, required: null };
    } catch (e) {
      const required = paymentRequiredOf(e);
      if (!required) throw e;
      const caller = paymentCaller(await sign(required), { field: "payment", caller: account ?? undefined });
      const result = await dispatch(s.rt, { ...base, caller });
      return { result, settlement: paymentOf(caller)?.receipt ?? null, required };
    }
  },
});

export { HearthError };
