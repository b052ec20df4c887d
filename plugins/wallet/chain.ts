// Reading the chain over CHAIN_RPC_URL. An unreachable node is a 503 that
// says so: it must never read as a balance of zero.
import { createPublicClient, erc20Abi, formatUnits, http } from "viem";
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
    const name = (e as Error).name ?? "";
    const text = (e as Error).message?.split("\n")[0] ?? String(e);
    if (/HttpRequestError|TimeoutError|FetchError|SocketError/.test(name) || /fetch failed|ECONNREFUSED|Unable to connect|timed out/i.test(text))
      throw upstream("upstream_unavailable", `the chain could not be reached at ${rpc}, so the balance is unknown (not zero): ${text}`);
    throw upstream("upstream_failed", `the chain at ${rpc} did not answer balanceOf for ${asset}: ${text}`);
  }
}

export const usd = (b: TokenBalance) => formatUnits(b.atomic, b.decimals);
