// Payments: the credits ledger, prices, and x402 for callers without an
// account. The module fills in every runtime's metering, the payment
// identifier, the receipt header, GET /api/v1/prices, ctx.x402 and the
// `credits` CLI command.
import { route } from "../http/app.ts";
import { CORS_HEADERS } from "../http/cors.ts";
import type { Attachment } from "../http/identify.ts";
import { jsonResponse } from "../http/respond.ts";
import { defineModule } from "../module.ts";
import { creditsCommand } from "./cli.ts";
import { ledger } from "./capability.ts";
import { instancePayments } from "./local.ts";
import { PayMetering, receiptHeaders } from "./metering.ts";
import { mcpPayment } from "./mcp.ts";
import { payMigrations } from "./migrations.ts";
import { overridesFile, readOverrides } from "./prices.ts";
import { assetProblem, decodePaymentHeader, paymentCaller, paymentOf } from "./x402.ts";

// A payment header pays for the call, whoever sent it: a stranger, or an account that would rather pay this way (one short of credits, say).
const paymentHeader: Attachment = (_rt, req, caller) => {
  const v2 = req.headers.get("payment-signature");
  const v1 = req.headers.get("x-payment");
  if (!v2 && !v1) return caller;
  const header = v2 ? "PAYMENT-SIGNATURE" : "X-PAYMENT";
  return paymentCaller(decodePaymentHeader((v2 ?? v1)!, header), { caller, field: header });
};

export const payModule = defineModule({
  name: "pay",
  setup(rt) {
    // Payments on a token the chain does not have would all fail: taking them, the instance does not start; wallets alone are warned.
    const problem = assetProblem(rt.config);
    if (problem && rt.config.X402_PAY_TO) throw new Error(problem);
    if (problem) rt.log.warn("x402 settings", { problem });
    rt.metering = new PayMetering(rt, readOverrides(overridesFile(rt), rt.registry));
  },
  provides: {
    migrations: { pay: payMigrations },
    capabilities: { x402: instancePayments, ledger: () => ledger },
    attachments: [paymentHeader],
    answerHeaders: [(caller) => receiptHeaders(paymentOf(caller))],
    // x402's MCP transport: payment in params._meta["x402/payment"], receipt in the result's _meta.
    mcp: {
      caller: [(_rt, meta, caller) => mcpPayment.caller(meta, caller)],
      errorResult: [(e) => mcpPayment.errorResult(e)],
      resultMeta: [(caller) => mcpPayment.resultMeta(caller)],
    },
    mounts: [
      (app, rt) => {
        app.get(
          "/api/v1/prices",
          route(() => jsonResponse(200, { result: (rt.metering as PayMetering).prices.list() }, crypto.randomUUID(), CORS_HEADERS)),
        );
      },
    ],
    cli: { credits: creditsCommand },
  },
});

export { paymentCaller, paymentOf, paymentRequiredOf, receiptOf } from "./x402.ts";
export { mcpPayment };
