import { Type as T } from "@sinclair/typebox";
import { desc, eq } from "drizzle-orm";
import { forbidden } from "../../core/errors.ts";
import { definePlugin, read, write } from "../../core/plugin.ts";
import { grantCredits } from "../../core/pay/grant.ts";
import { balanceOf, recent, shapeEntry } from "../../core/pay/ledger.ts";
import { topUp, TOPUP_MAX } from "../../core/pay/topup.ts";
import { usd, usdcBalance } from "./chain.ts";
import { ensureWallet, findWallet } from "./keys.ts";
import { payTool, signWith } from "./pay.ts";
import { walletPayments } from "./schema.ts";
import { serversOf } from "./servers.ts";

export default definePlugin({
  name: "wallet",
  description: "A USDC wallet per account for paying priced servers, and the account's credits on this instance.",
  needs: ["db", "call", "x402"],
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
        const address = findWallet(ctx)?.address ?? ((await ctx.call("wallet", "create")) as { address: string }).address;
        return { address, network: ctx.config.X402_NETWORK, asset: ctx.config.X402_ASSET };
      },
    }),
    create: write({
      description: "Creates the caller's wallet if it has none and returns its address (wallet/address does this on first request).",
      args: T.Object({}),
      access: "account",
      run: (_a, ctx) => ({ address: ensureWallet(ctx), network: ctx.config.X402_NETWORK }),
    }),
    balance: read({
      description: "USDC held. Says so plainly when the chain could not be reached, which differs from holding nothing.",
      args: T.Object({}),
      access: "account",
      openWorld: true,
      async run(_a, ctx) {
        const address = findWallet(ctx)?.address ?? ((await ctx.call("wallet", "create")) as { address: string }).address;
        const decimals = Number(ctx.config.X402_ASSET_DECIMALS || "6");
        const b = await usdcBalance(ctx.config.CHAIN_RPC_URL, ctx.config.X402_ASSET as `0x${string}`, address as `0x${string}`, decimals);
        return { address, usdc: usd(b), atomic: b.atomic.toString(), network: ctx.config.X402_NETWORK, asset: ctx.config.X402_ASSET, as_of: ctx.clock.now().toISOString() };
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
        "Calls a tool on a listed server and pays from the wallet if the tool asks. Nothing is spent if the tool is free. Payments are capped per call and per day.",
      args: T.Object({
        server: T.Optional(T.String({ minLength: 1, maxLength: 64, description: 'A name from wallet/list (default: "this", this instance).' })),
        tool: T.String({ minLength: 1, maxLength: 100, description: 'The tool to call, as "service_method".' }),
        args: T.Optional(T.Record(T.String(), T.Unknown(), { description: "The tool's arguments." })),
      }),
      access: "account",
      openWorld: true,
      run: (args, ctx) => payTool(ctx, args),
    }),
    topup: write({
      description:
        "Buys credits on this instance with USDC from the caller's wallet: send USDC to wallet/address first; this transfers exactly credits x $0.01 to the instance and adds the credits once the transfer settles.",
      args: T.Object({ credits: T.Integer({ minimum: 1, maximum: TOPUP_MAX, description: "Credits to buy (a credit is $0.01)." }) }),
      access: "account",
      withheldFromAgent: true,
      openWorld: true,
      async run({ credits }, ctx) {
        const out = await topUp({
          db: ctx.db,
          config: ctx.config,
          account: ctx.account.id,
          credits,
          requestId: ctx.requestId,
          at: ctx.clock.now().getTime(),
          resourceUrl: `${ctx.baseUrl}/api/v1/wallet/topup`,
          sign: (required) => signWith(ctx, required),
        });
        return { credits: out.credits, balance: out.balance, transaction: out.settlement.transaction, network: out.settlement.network };
      },
    }),
    payments: read({
      description: "Payments the wallet has made, newest first.",
      args: T.Object({ limit: T.Optional(T.Integer({ minimum: 1, maximum: 200, default: 50 })) }),
      access: "account",
      run: ({ limit }, ctx) =>
        ctx.db
          .select()
          .from(walletPayments)
          .where(eq(walletPayments.account, ctx.account.id))
          .orderBy(desc(walletPayments.id))
          .limit(limit ?? 50)
          .all()
          .map((p) => ({ server: p.server, tool: p.tool, atomic: p.amount, to: p.payTo, network: p.network, transaction: p.transaction, at: new Date(p.at).toISOString() })),
    }),
    credits: read({
      description: "The caller's credits on this instance (a credit is $0.01) and the latest ledger entries.",
      args: T.Object({ limit: T.Optional(T.Integer({ minimum: 1, maximum: 200, default: 20 })) }),
      access: "account",
      run: ({ limit }, ctx) => ({ balance: balanceOf(ctx.db, ctx.account.id), entries: recent(ctx.db, ctx.account.id, limit ?? 20).map(shapeEntry) }),
    }),
    grant: write({
      description: "Admin only: grants credits to an account (a negative amount takes them back); the ledger keeps every grant.",
      args: T.Object({
        user: T.String({ minLength: 1, maxLength: 64, description: "Username to credit." }),
        amount: T.Integer({ description: "Credits to add (negative to take back)." }),
        note: T.Optional(T.String({ maxLength: 200, description: "Why, kept in the ledger." })),
      }),
      access: "account",
      withheldFromAgent: true,
      run({ user, amount, note }, ctx) {
        if (!ctx.account.admin) throw forbidden("only an admin may grant credits");
        return grantCredits(ctx.db, { username: user.toLowerCase(), amount, note, by: ctx.account.username, at: ctx.clock.now().getTime(), requestId: ctx.requestId });
      },
    }),
  },
});
