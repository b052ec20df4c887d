// A local EVM for tests: ganache on loopback with a few funded accounts and
// TestUSDC (EIP-3009) deployed, plus a fixture x402 facilitator that runs the
// official x402 EVM facilitator code (real EIP-712 signature checks, real
// transferWithAuthorization settlement on this chain).
import { x402Facilitator } from "@x402/core/facilitator";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { registerExactEvmScheme } from "@x402/evm/exact/facilitator";
import ganache from "ganache";
import { createPublicClient, createWalletClient, defineChain, http, publicActions, type Abi, type Hex } from "viem";
import { privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import compiled from "./TestUSDC.json" with { type: "json" };

/** 84532 has a v1 network name ("base-sepolia"), so X-PAYMENT v1 payloads can be tested too. */
export const CHAIN_ID = 84532;
export const NETWORK = `eip155:${CHAIN_ID}`;
export const abi = compiled.abi as Abi;

// Fixed keys so failures are reproducible; these hold value only on the test chain.
const KEYS: Hex[] = [
  "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318",
  "0x6c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362319",
  "0x7c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f36231a",
  "0x8c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f36231b",
];

export interface Chain {
  rpc: string;
  usdc: `0x${string}`;
  /** [0] deploys and runs the facilitator, [1] is the instance's payTo, [2] and [3] pay. */
  accounts: PrivateKeyAccount[];
  mint(to: `0x${string}`, atomic: bigint): Promise<void>;
  balance(of: `0x${string}`): Promise<bigint>;
  stop(): Promise<void>;
}

export async function startChain(): Promise<Chain> {
  const server = ganache.server({
    logging: { quiet: true },
    chain: { chainId: CHAIN_ID, hardfork: "shanghai" },
    wallet: { accounts: KEYS.map((secretKey) => ({ secretKey, balance: "0x56BC75E2D63100000" })) },
    miner: { instamine: "eager" },
  });
  await server.listen(0, "127.0.0.1");
  const rpc = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const chain = defineChain({ id: CHAIN_ID, name: "test", nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: [rpc] } } });
  const accounts = KEYS.map((k) => privateKeyToAccount(k));
  const deployer = createWalletClient({ account: accounts[0], chain, transport: http(rpc, { timeout: 0 }) }).extend(publicActions);
  const hash = await deployer.deployContract({ abi, bytecode: compiled.bytecode as Hex, args: ["USD Coin", "2"] });
  const receipt = await deployer.waitForTransactionReceipt({ hash });
  const usdc = receipt.contractAddress!;
  const reader = createPublicClient({ chain, transport: http(rpc, { timeout: 0 }) });
  return {
    rpc,
    usdc,
    accounts,
    async mint(to, atomic) {
      const h = await deployer.writeContract({ address: usdc, abi, functionName: "mint", args: [to, atomic] });
      await deployer.waitForTransactionReceipt({ hash: h });
    },
    async balance(of) {
      return (await reader.readContract({ address: usdc, abi, functionName: "balanceOf", args: [of] })) as bigint;
    },
    async stop() {
      await server.close();
    },
  };
}

/** A facilitator on loopback serving POST /verify, POST /settle and GET /supported as the x402 spec has them. */
export function startFacilitator(chain: Chain) {
  const c = defineChain({ id: CHAIN_ID, name: "test", nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: [chain.rpc] } } });
  // No time limit of viem's own (10 s) on the chain's answers: the chain runs in this loaded test process, and a request
  // it answered late would make the facilitator call a good payment invalid (a 402) or a settlement failed. How long
  // the instance waits for the facilitator is the instance's to decide (core/pay/metering.ts).
  const client = createWalletClient({ account: chain.accounts[0], chain: c, transport: http(chain.rpc, { timeout: 0 }) }).extend(publicActions);
  const signer = toFacilitatorEvmSigner({
    address: chain.accounts[0].address,
    readContract: (a) => client.readContract(a as never),
    verifyTypedData: (a) => client.verifyTypedData(a as never),
    writeContract: (a) => client.writeContract(a as never),
    sendTransaction: (a) => client.sendTransaction(a as never),
    waitForTransactionReceipt: (a) => client.waitForTransactionReceipt(a),
    getCode: (a) => client.getCode(a),
  });
  const facilitator = registerExactEvmScheme(new x402Facilitator(), { signer, networks: NETWORK as `${string}:${string}` });
  const calls = { verify: 0, settle: 0 };
  /** Set to make the next settle fail the way a facilitator reports it (say, the payer's funds moved after verify). */
  const fail = { nextSettle: null as string | null };
  // One settlement at a time, as a facilitator sending from one account queues its transactions (two at once would race for its nonce).
  let settling: Promise<unknown> = Promise.resolve();
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const path = new URL(req.url).pathname;
      if (req.method === "GET" && path === "/supported") return Response.json(facilitator.getSupported());
      if (req.method !== "POST" || (path !== "/verify" && path !== "/settle")) return new Response("not found", { status: 404 });
      const body = (await req.json()) as { paymentPayload: never; paymentRequirements: never };
      try {
        if (path === "/verify") {
          calls.verify++;
          return Response.json(await facilitator.verify(body.paymentPayload, body.paymentRequirements));
        }
        calls.settle++;
        if (fail.nextSettle) {
          const errorReason = fail.nextSettle;
          fail.nextSettle = null;
          return Response.json({ success: false, errorReason, errorMessage: "the transfer reverted", transaction: "", network: NETWORK });
        }
        const settled = settling.then(() => facilitator.settle(body.paymentPayload, body.paymentRequirements));
        settling = settled.catch(() => {});
        return Response.json(await settled);
      } catch (e) {
        const err = e as { invalidReason?: string; errorReason?: string; message: string };
        if (path === "/verify") return Response.json({ isValid: false, invalidReason: err.invalidReason ?? "unexpected_verify_error", invalidMessage: err.message });
        return Response.json({ success: false, errorReason: err.errorReason ?? "unexpected_settle_error", errorMessage: err.message, transaction: "", network: NETWORK });
      }
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, calls, fail, stop: () => server.stop(true) };
}

/** The settings that make an instance take x402 payments on this chain through this facilitator, paid to `payTo`. */
export function x402Settings(chain: Chain, facilitator: { url: string }, payTo: string): Record<string, string> {
  return { X402_PAY_TO: payTo, X402_FACILITATOR_URL: facilitator.url, X402_NETWORK: NETWORK, X402_ASSET: chain.usdc };
}
