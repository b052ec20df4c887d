// ctx.walletSign: signing an x402 payment with the caller's wallet key, for a
// plugin that pays from it without going through wallet/pay's caps (credits/topup,
// whose own cap is TOPUP_MAX). Provided by the wallet and given only to a
// plugin naming "walletSign" in needs; the signer (viem) loads on first use.
import type { Ctx } from "hearth";
import type { PaymentPayload, PaymentRequired } from "@x402/core/types";

/** Signs the one accepted payment of `required` with the caller's key, making their wallet first if need be. `ctx` is the calling plugin's, which must read the wallet's settings (HEARTH_SECRET, X402_*). */
export type WalletSign = (ctx: Ctx, required: PaymentRequired) => Promise<PaymentPayload>;

declare module "hearth" {
  interface CapabilityTypes {
    walletSign: WalletSign;
  }
}
