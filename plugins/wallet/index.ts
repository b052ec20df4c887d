import { Type as T } from "@sinclair/typebox";
import { definePlugin, read, write } from "hearth";
import { assetOf } from "hearth";
import { serversOf } from "./servers.ts";
import type { WalletSign } from "./sign.ts";

// viem and the x402 client weigh ~25 MB once loaded; an instance whose owner
// never opens a wallet should not carry them, so they load on first use.
const chain = () => import("./chain.ts");
const keys = () => import("./keys.ts");
const pay = () => import("./pay.ts");

export default definePlugin({
  name: "wallet",
  description: "A USDC wallet per account, for paying priced servers (this instance among them).",
  needs: ["db", "writes", "x402", "lock", "allowance"],
  // Buying credits (credits/topup) pays the instance from the buyer's wallet: credits declares walletSign to sign with it.
  provides: { capabilities: { walletSign: (): WalletSign => async (ctx, required) => (await pay()).signWith(ctx, required) } },
  settings: ["X402_ASSET", "X402_ASSET_DECIMALS", "X402_NETWORK", "X402_ASSET_NAME", "X402_ASSET_VERSION"],
  config: {
    HEARTH_SECRET: { default: "", description: "Secret the wallet's keys are encrypted with at rest (at least 16 characters); wallets cannot be made without it." },
    CHAIN_RPC_URL: { default: "https://mainnet.base.org", description: "JSON-RPC endpoint of the chain wallets hold USDC on (X402_NETWORK, X402_ASSET)." },
    WALLET_SERVERS: { default: "", description: 'Priced x402 servers wallets may pay besides this one: "name=https://host,other=https://host".' },
    WALLET_CAP_PER_CALL: { default: "0.50", description: "Most USDC one wallet/pay may spend." },
    WALLET_CAP_PER_DAY: { default: "5.00", description: "Most USDC one wallet may spend per UTC day." },
  },
  methods: {
    address: read({
      description:
        "The caller's own receiving address for USDC on the instance's chain; created on first request. Funds sent on another chain arrive at the same address there and cannot be reached.",
      args: T.Object({}),
      access: "account",
      async run(_a, ctx) {
        const { walletAddress } = await keys();
        return { address: await walletAddress(ctx), network: ctx.config.X402_NETWORK, asset: assetOf(ctx.config).asset };
      },
    }),
    balance: read({
      description: "USDC held. Says so plainly when the chain could not be reached, which differs from holding nothing.",
      args: T.Object({}),
      access: "account",
      openWorld: true,
      async run(_a, ctx) {
        const [{ walletAddress }, { usd, usdcBalance }] = await Promise.all([keys(), chain()]);
        const address = await walletAddress(ctx);
        const decimals = Number(ctx.config.X402_ASSET_DECIMALS || "6");
        const asset = assetOf(ctx.config).asset;
        const b = await usdcBalance(ctx.config.CHAIN_RPC_URL, asset as `0x${string}`, address as `0x${string}`, decimals, ctx.log);
        return { address, usdc: usd(b), atomic: b.atomic.toString(), network: ctx.config.X402_NETWORK, asset, as_of: ctx.clock.now().toISOString() };
      },
    }),
    list: read({
      description: "Names of priced servers the wallet may pay; these names are used as `server` in `wallet/pay`.",
      args: T.Object({}),
      access: "account",
      run: (_a, ctx) => serversOf(ctx.config).map((s) => ({ name: s.name, url: s.url ?? ctx.baseUrl, self: s.url === null })),
    }),
    pay: write({
      description:
        "Calls a tool on a listed server and pays from the wallet if the tool asks. Nothing is spent if the tool is free. Payments are capped per call and per day, and each is recorded.",
      args: T.Object({
        server: T.Optional(T.String({ minLength: 1, maxLength: 64, description: 'A name from wallet/list (default: "this", this instance).' })),
        tool: T.String({ minLength: 1, maxLength: 100, description: 'The tool to call, as "service_method".' }),
        args: T.Optional(T.Record(T.String(), T.Unknown(), { description: "The tool's arguments." })),
      }),
      access: "account",
      outbound: true,
      recipient: "server",
      untrusted: true,
      costs: true,
      openWorld: true,
      run: async (args, ctx) => (await pay()).payTool(ctx, args),
    }),
  },
});
