import { expect, test } from "bun:test";
import { EVM_NETWORK_CHAIN_ID_MAP } from "@x402/evm/v1";
import { V1_NETWORKS } from "../../core/pay/networks.ts";

test("the v1 network table matches the x402 package's", () => {
  expect(V1_NETWORKS).toEqual({ ...EVM_NETWORK_CHAIN_ID_MAP });
});
