// Reading the chain over CHAIN_RPC_URL. An unreachable node is a 503 that
// says so: it must never read as a balance of zero.
import { BaseError, createPublicClient, erc20Abi, formatUnits, http, HttpRequestError, TimeoutError } from "viem";
import { upstream, type Logger, scrub } from "hearth";

export interface TokenBalance {
  atomic: bigint;
  decimals: number;
}

function client(rpc: string, timeoutMs: number) {
  return createPublicClient({ transport: http(rpc, { timeout: timeoutMs, retryCount: 0 }) });
}

/**
 * The caller is told which step failed, never the node's address (RPC URLs
 * usually carry a key in their path) nor the node's own text, which quotes
 * the address and the calldata; the log keeps that text with the address cut out.
 */
export async function usdcBalance(rpc: string, asset: `0x${string}`, owner: `0x${string}`, decimals: number, log?: Logger, timeoutMs = 8000): Promise<TokenBalance> {
  try {
    const atomic = await client(rpc, timeoutMs).readContract({ address: asset, abi: erc20Abi, functionName: "balanceOf", args: [owner] });
    return { atomic, decimals };
  } catch (e) {
    log?.warn("chain read failed", { call: "balanceOf", error: scrub(String((e as Error)?.message ?? e).slice(0, 1000), [rpc]) });
    const unreachable = e instanceof BaseError ? e.walk((x) => x instanceof HttpRequestError || x instanceof TimeoutError) : null;
    if (unreachable) throw upstream("upstream_unavailable", "the chain's RPC node (CHAIN_RPC_URL) could not be reached, so the balance is unknown (not zero)");
    throw upstream("upstream_failed", "the chain's RPC node (CHAIN_RPC_URL) did not answer balanceOf for USDC, so the balance is unknown (not zero)");
  }
}

export const usd = (b: TokenBalance) => formatUnits(b.atomic, b.decimals);
