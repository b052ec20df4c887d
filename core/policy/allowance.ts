// ctx.allowance: what a method that pays out of the instance (wallet/pay)
// asks before it pays. The amount is known only once the server asked for
// it, after dispatch's policy check, so the payer tells its credential's day
// here, in the call's own transaction, before the payment is made.
import type { CapabilityScope } from "../capabilities.ts";
import { HearthError } from "../errors.ts";
import { usdcAtomic } from "./rules.ts";

export interface Allowance {
  /**
   * Takes `atomic` USDC (the token's smallest units) from the caller's
   * credential's day, refusing with 403 past its policy's limit. In a write
   * method's transaction: a payment that is then not made rolls back with it.
   */
  usdc(atomic: bigint, what: string): Promise<void>;
}

declare module "../plugin.ts" {
  interface CapabilityTypes {
    allowance: Allowance;
  }
}

const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export const allowanceOf = (s: CapabilityScope): Allowance => ({
  async usdc(atomic, what) {
    const policies = s.rt.policies;
    if (!policies || !s.caller.account) return;
    const found = policies.of(s.caller);
    const r = found instanceof Promise ? await found : found;
    if (!r.own || !r.credential || r.policy.usdcPerDay === null) return;
    const decimals = Number(s.rt.config.X402_ASSET_DECIMALS || "6");
    const limit = usdcAtomic(r.policy.usdcPerDay, decimals);
    const day = utcDay(s.rt.clock.now().getTime());
    if (await policies.reserveUsdc(r.credential, day, atomic, limit)) return;
    // A payment asks its amount inside the paying call's transaction, where no approval can be waited for: past the limit is a refusal.
    throw new HearthError(
      "forbidden",
      `${what} is refused: it would take this credential past its ${r.policy.usdcPerDay} USDC for today (UTC); nothing was paid. The owner can change it on /token.`,
      { extra: { policy: "limit" } },
    );
  },
});
