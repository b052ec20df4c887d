// Reading the chain over CHAIN_RPC_URL. An unreachable node is a 503 that
// says so: it must never read as a balance of zero.
import { BaseError, createPublicClient, erc20Abi, formatUnits, http, HttpRequestError, TimeoutError } from "viem";
import { upstream } from "../../core/errors.ts";

export interface TokenBalance {
  atomic: bigint;
  decimals: number;
}

function client(rpc: string, timeoutMs: number) {
  return createPublicClient({ transport: http(rpc, { timeout: timeoutMs, retryCount: 0 }) });
}

export async function usdcBalance(rpc: string, asset: `0x${string}`, owner: `0x${string}`, decimals: number, timeoutMs = 8000): Promise<TokenBalance> {
  try {
    const atomic = await client(rpc, timeoutMs).readContract({ address: asset, abi: erc20Abi, functionName: "balanceOf", args: [owner] });
    return { atomic, decimals };
  } catch (e) {
    const text = (e as Error).message?.split("\n")[0] ?? String(e);
    const unreachable = e instanceof BaseError ? e.walk((x) => x instanceof HttpRequestError || x instanceof TimeoutError) : null;
    if (unreachable) throw upstream("upstream_unavailable", `the chain could not be reached at ${rpc}, so the balance is unknown (not zero): ${text}`);
    throw upstream("upstream_failed", `the chain at ${rpc} did not answer balanceOf for ${asset}: ${text}`);
  }
}

export const usd = (b: TokenBalance) => formatUnits(b.atomic, b.decimals);
