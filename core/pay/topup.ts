// Top-up: an account turns USDC into credits. The flow: the account's wallet
// (wallet/address) receives USDC on the instance's chain; credits/topup signs
// an EIP-3009 transfer of exactly credits x $0.01 from that wallet to the
// instance (X402_PAY_TO); the facilitator verifies and settles it on chain;
// once settled, one "topup" ledger entry adds the credits, in the same
// transaction as the record of the settled authorization. The sender is known
// because the account's own key signed, so nobody can claim another's transfer.
import { HTTPFacilitatorClient } from "@x402/core/http";
import { HearthError, invalid, notConfigured, upstream } from "../errors.ts";
import type { Db, Logger } from "../plugin.ts";
import { append, balanceOf } from "./ledger.ts";
import { reasonCode, scrub } from "../upstream/redact.ts";
import { payX402 } from "./schema.ts";
import { requirementsOf, termsOf, type PaymentPayload, type PaymentRequired, type SettleResponse } from "./x402.ts";

export const TOPUP_MAX = 100_000;

export async function topUp(input: {
  db: Db;
  config: Readonly<Record<string, string>>;
  account: string;
  credits: number;
  requestId: string;
  at: number;
  resourceUrl: string;
  /** The method taking the top-up ("<service>/<method>"), recorded with the payment. */
  method: string;
  sign: (required: PaymentRequired) => Promise<PaymentPayload>;
  /** Where the facilitator's own words go, its address's secrets cut out. */
  log?: Logger;
}): Promise<{ credits: number; balance: number; settlement: SettleResponse }> {
  const terms = termsOf(input.config);
  if (!terms) throw notConfigured("top-ups pay the instance's address: set X402_PAY_TO (and X402_FACILITATOR_URL)");
  if (!Number.isInteger(input.credits) || input.credits < 1 || input.credits > TOPUP_MAX) throw invalid("credits", `credits must be a whole number from 1 to ${TOPUP_MAX}`);
  const requirements = requirementsOf(terms, input.credits);
  const payload = await input.sign({
    x402Version: 2,
    resource: { url: input.resourceUrl, description: `${input.credits} credits on this instance`, mimeType: "application/json" },
    accepts: [requirements],
  });
  const facilitator = new HTTPFacilitatorClient({ url: input.config.X402_FACILITATOR_URL, timeoutMs: 30_000 });
  const said = (step: string, text: unknown) =>
    text && input.log?.warn("payment facilitator", { step, said: scrub(String(text).slice(0, 500), [input.config.X402_FACILITATOR_URL]) });
  // The caller is told the facilitator's reason code, never its own words or its address.
  let settlement: SettleResponse;
  try {
    const verified = await facilitator.verify(payload, requirements);
    if (!verified.isValid) {
      said("verify", verified.invalidMessage);
      throw new HearthError("payment_required", `the top-up was refused: ${reasonCode(verified.invalidReason, "the facilitator found it invalid")}`);
    }
    settlement = await facilitator.settle(payload, requirements);
  } catch (e) {
    if (e instanceof HearthError) throw e;
    const r = e as { invalidReason?: string; errorReason?: string; invalidMessage?: string; errorMessage?: string; message?: string };
    said("topup", r.invalidMessage ?? r.errorMessage ?? r.message);
    if (r.invalidReason || r.errorReason) throw new HearthError("payment_required", `the top-up was refused: ${reasonCode(r.invalidReason ?? r.errorReason, "the facilitator refused it")}`);
    throw upstream("upstream_unavailable", "the payment facilitator (X402_FACILITATOR_URL) could not be reached");
  }
  if (!settlement.success) {
    said("settle", settlement.errorMessage);
    throw new HearthError("payment_required", `the top-up did not settle: ${reasonCode(settlement.errorReason, "settle_failed")}`);
  }
  const auth = (payload.payload as { authorization: { from: string; nonce: string } }).authorization;
  await input.db
    .insert(payX402)
    .values({
      network: terms.network,
      asset: terms.asset.toLowerCase(),
      payer: auth.from.toLowerCase(),
      nonce: auth.nonce.toLowerCase(),
      amount: requirements.amount,
      credits: input.credits,
      method: input.method,
      requestId: input.requestId,
      transaction: settlement.transaction,
      at: input.at,
    })
    .run();
  await append(input.db, { account: input.account, delta: input.credits, reason: "topup", requestId: input.requestId, note: `USDC ${settlement.transaction}`, at: input.at });
  return { credits: input.credits, balance: await balanceOf(input.db, input.account), settlement };
}
