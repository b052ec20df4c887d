import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { x402Client } from "@x402/core/client";
import { DEFAULT_ASSETS } from "@x402/evm";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { EVM_NETWORK_CHAIN_ID_MAP } from "@x402/evm/v1";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { USDC, V1_NETWORKS } from "../../core/pay/networks.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { challengeOf } from "./client.ts";

test("the v1 network table matches the x402 package's", () => {
  expect(V1_NETWORKS).toEqual({ ...EVM_NETWORK_CHAIN_ID_MAP });
});

test("each network's USDC is the x402 package's default asset there", () => {
  for (const [network, usdc] of Object.entries(USDC)) {
    const theirs = (DEFAULT_ASSETS as Record<string, { asset: string; name: string; version: string; decimals: number; symbol: string }[]>)[network]?.[0];
    expect({ network, ...usdc }).toEqual({ network, asset: theirs?.asset, name: theirs?.name, version: theirs?.version });
    expect([theirs.symbol, theirs.decimals]).toEqual(["USDC", 6]);
  }
});

describe("the asset follows X402_NETWORK", () => {
  const PAY_TO = "0x2222222222222222222222222222222222222222";
  let h: Hearth;
  beforeAll(async () => {
    h = await startHearth({ env: { HEARTH_PLUGINS: `${import.meta.dir}/plugins`, X402_PAY_TO: PAY_TO, X402_NETWORK: "eip155:84532", X402_FACILITATOR_URL: "http://127.0.0.1:9" } });
  });
  afterAll(async () => {
    await h?.stop();
  });

  test("on Base Sepolia the challenge names Base Sepolia's USDC, and the official client, allowing only known assets, signs for it", async () => {
    const r = await h.call("meter/echo", { text: "hi" });
    expect(r.status).toBe(402);
    const c = challengeOf(r.headers);
    expect(c.accepts[0]).toMatchObject({ network: "eip155:84532", asset: USDC["eip155:84532"].asset, extra: { name: "USDC", version: "2" } });
    // x402 v1 clients read the body: the same token under the v1 network name.
    expect(r.body.accepts[0]).toMatchObject({ network: "base-sepolia", asset: USDC["eip155:84532"].asset, extra: { name: "USDC", version: "2" } });
    // @x402/fetch's client with its default spend controls pays only a network's known assets.
    const client = new x402Client().register("eip155:84532", new ExactEvmScheme(privateKeyToAccount(generatePrivateKey())));
    const payload = await client.createPaymentPayload(c);
    expect(payload.accepted.asset).toBe(USDC["eip155:84532"].asset);
  });

  test("USDC of another network named for X402_ASSET stops the start, saying which", async () => {
    const start = startHearth({ env: { X402_PAY_TO: PAY_TO, X402_NETWORK: "eip155:84532", X402_ASSET: USDC["eip155:8453"].asset } });
    await expect(start).rejects.toThrow("is USDC on eip155:8453, not on X402_NETWORK eip155:84532");
  });
});
