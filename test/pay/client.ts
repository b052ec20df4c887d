// A paying x402 client as a stranger would run it: the official x402 client
// with the EVM exact scheme signs EIP-3009 authorizations with a viem account.
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentPayload, PaymentRequired } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { ExactEvmSchemeV1 } from "@x402/evm/v1";
import type { PrivateKeyAccount } from "viem/accounts";
import { NETWORK } from "./chain/evm.ts";

export function payer(account: PrivateKeyAccount) {
  // The test token is not one of the library's known assets, so its allow-list is turned off.
  const client = new x402Client()
    .register(NETWORK as `${string}:${string}`, new ExactEvmScheme(account))
    .registerV1("base-sepolia", new ExactEvmSchemeV1(account))
    .setSpendControls(false);
  return {
    address: account.address,
    /** The x402 client itself, for the transports' own wrappers (@x402/fetch, @x402/axios). */
    client,
    /** Signs for the first of the challenge's accepted terms. */
    pay: (required: PaymentRequired): Promise<PaymentPayload> => client.createPaymentPayload(required),
    header: (p: PaymentPayload) => encodePaymentSignatureHeader(p),
  };
}

export const challengeOf = (headers: Headers): PaymentRequired => decodePaymentRequiredHeader(headers.get("payment-required")!);
export const receiptOf = (headers: Headers, name = "payment-response") => decodePaymentResponseHeader(headers.get(name)!);
