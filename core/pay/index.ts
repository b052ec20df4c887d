// Payments: the credits ledger, prices, and x402 for callers without an
// account. Importing this module fills in every runtime's metering, the
// payment identifier, the receipt header, GET /api/v1/prices and the
// `credits` CLI command.
import { runtimeSetups } from "../capabilities.ts";
import { mounts, route } from "../http/app.ts";
import { CORS_HEADERS } from "../http/cors.ts";
import { answerHeaders, attachments } from "../http/identify.ts";
import { jsonResponse } from "../http/respond.ts";
import { mcpHooks } from "../mcp/hooks.ts";
import "./cli.ts";
import "./local.ts";
import { PayMetering, receiptHeaders } from "./metering.ts";
import { mcpPayment } from "./mcp.ts";
import "./migrations.ts";
import { overridesFile, readOverrides } from "./prices.ts";
import { decodePaymentHeader, paymentCaller, paymentOf } from "./x402.ts";

runtimeSetups.push((rt) => {
  rt.metering = new PayMetering(rt, readOverrides(overridesFile(rt), rt.registry));
});

// A payment header pays for the call, whoever sent it: a stranger, or an account that would rather pay this way (one short of credits, say).
attachments.push((_rt, req, caller) => {
  const v2 = req.headers.get("payment-signature");
  const v1 = req.headers.get("x-payment");
  if (!v2 && !v1) return caller;
  const header = v2 ? "PAYMENT-SIGNATURE" : "X-PAYMENT";
  return paymentCaller(decodePaymentHeader((v2 ?? v1)!, header), { caller, field: header });
});

answerHeaders.push((caller) => receiptHeaders(paymentOf(caller)));

// x402's MCP transport: payment in params._meta["x402/payment"], receipt in the result's _meta.
mcpHooks.caller.push((_rt, meta, caller) => mcpPayment.caller(meta, caller));
mcpHooks.errorResult.push((e) => mcpPayment.errorResult(e));
mcpHooks.resultMeta.push((caller) => mcpPayment.resultMeta(caller));

mounts.push((app, rt) => {
  app.get(
    "/api/v1/prices",
    route(() => jsonResponse(200, { result: (rt.metering as PayMetering).prices.list() }, crypto.randomUUID(), CORS_HEADERS)),
  );
});

export { paymentCaller, paymentOf, paymentRequiredOf, receiptOf } from "./x402.ts";
export { mcpPayment };
