// wallet/pay: call a tool on a listed server and pay for it from the wallet
// when it asks, within the per-call and per-day caps. This instance is paid
// in-process through dispatch; other servers over the x402 HTTP transport.
import { x402Client } from "@x402/core/client";
import type { PaymentPayload, PaymentRequired, PaymentRequirements, SettleResponse } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { and, eq, gte } from "drizzle-orm";
import { formatUnits, parseUnits } from "viem";
import { forbidden, invalid, type Ctx } from "hearth";
import { assetOf } from "hearth";
import { ensureWallet, signerOf } from "./keys.ts";
import { walletPayments } from "./schema.ts";
import { callRemote } from "./remote.ts";
import { SELF, serverNamed } from "./servers.ts";

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

function decimalsOf(ctx: Ctx) {
  return Number(ctx.config.X402_ASSET_DECIMALS || "6");
}

function cap(ctx: Ctx, name: "WALLET_CAP_PER_CALL" | "WALLET_CAP_PER_DAY"): bigint {
  try {
    return parseUnits(ctx.config[name] || "0", decimalsOf(ctx));
  } catch {
    throw invalid(name, `${name} must be an amount of USDC like "1.50" (got "${ctx.config[name]}")`);
  }
}

async function spentToday(ctx: Ctx): Promise<bigint> {
  const now = ctx.clock.now();
  const dayStart = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const rows = await ctx.db
    .select({ amount: walletPayments.amount })
    .from(walletPayments)
    .where(and(eq(walletPayments.account, ctx.account.id), gte(walletPayments.at, dayStart)))
    .all();
  return rows.reduce((sum, r) => sum + BigInt(r.amount), 0n);
}

/** Signs an EIP-3009 authorization for the (single) accepted terms with the caller's wallet key, making the wallet if needed. */
export async function signWith(ctx: Ctx, required: PaymentRequired): Promise<PaymentPayload> {
  await ensureWallet(ctx.db, ctx);
  const signer = (await signerOf(ctx.db, ctx))!;
  const network = ctx.config.X402_NETWORK as PaymentRequirements["network"];
  // The caps are the wallet's limits; the library's own allow-list would only know public tokens.
  const client = new x402Client()
    .register(network, new ExactEvmScheme(signer))
    .setSpendControls({ allowedAssets: [{ network, asset: assetOf(ctx.config).asset }], maxAmountPerPayment: false });
  return client.createPaymentPayload(required);
}

export interface PayOutcome {
  server: string;
  tool: string;
  result: unknown;
  paid: { usdc: string; atomic: string; to: string; network: string; transaction: string } | null;
}

export async function payTool(ctx: Ctx, input: { server?: string; tool: string; args?: Record<string, unknown> }): Promise<PayOutcome> {
  const server = serverNamed(ctx.config, input.server ?? SELF);
  const network = ctx.config.X402_NETWORK;
  const asset = assetOf(ctx.config).asset;
  const decimals = decimalsOf(ctx);
  const usd = (a: bigint) => `$${formatUnits(a, decimals)}`;
  let chosen: PaymentRequirements | null = null;

  const sign = async (required: PaymentRequired): Promise<PaymentPayload> => {
    const req = required.accepts.find((a) => a.scheme === "exact" && a.network === network && same(a.asset, asset));
    if (!req) {
      const offered = required.accepts.map((a) => `${a.scheme} on ${a.network} in ${a.asset}`).join("; ");
      throw invalid("tool", `${input.tool} on ${server.name} asks for a payment this wallet cannot make (offered: ${offered || "nothing"}; the wallet holds ${asset} on ${network})`);
    }
    const amount = BigInt(req.amount);
    const perCall = cap(ctx, "WALLET_CAP_PER_CALL");
    if (amount > perCall) throw forbidden(`${input.tool} on ${server.name} costs ${usd(amount)}, over the per-call cap of ${usd(perCall)} (WALLET_CAP_PER_CALL)`);
    const perDay = cap(ctx, "WALLET_CAP_PER_DAY");
    // Held until this call's payment is recorded, so two payments at once cannot both fit under the cap.
    await ctx.lock(`spend:${ctx.account.id}`);
    const spent = await spentToday(ctx);
    if (spent + amount > perDay)
      throw forbidden(`${input.tool} on ${server.name} costs ${usd(amount)}; with ${usd(spent)} paid today that is over the per-day cap of ${usd(perDay)} (WALLET_CAP_PER_DAY)`);
    // The credential's own day, in one conditional update before anything is signed: rolled back with this call if the payment is not made.
    await ctx.allowance.usdc(amount, `${input.tool} on ${server.name} for ${usd(amount)}`);
    chosen = req;
    return signWith(ctx, { ...required, accepts: [req] });
  };

  const { result, settlement } = server.url ? await callRemote(server, input.tool, input.args ?? {}, sign) : await ctx.x402.call(input.tool, input.args ?? {}, sign);
  if (!settlement || !chosen) return { server: server.name, tool: input.tool, result, paid: null };
  const req = chosen as PaymentRequirements;
  await ctx.db
    .insert(walletPayments)
    .values({
      account: ctx.account.id,
      server: server.name,
      tool: input.tool,
      amount: req.amount,
      payTo: req.payTo,
      network: req.network,
      asset: req.asset,
      transaction: settlement.transaction,
      at: ctx.clock.now().getTime(),
    })
    .run();
  return {
    server: server.name,
    tool: input.tool,
    result,
    paid: { usdc: formatUnits(BigInt(req.amount), decimals), atomic: req.amount, to: req.payTo, network: req.network, transaction: settlement.transaction },
  };
}
