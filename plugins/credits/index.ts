// Credits on this instance: what an account holds, admin grants, and top-ups
// paid in USDC from the account's wallet. The ledger itself lives in core/pay,
// since every priced call charges it.
import { Type as T } from "@sinclair/typebox";
import { forbidden, definePlugin, read, write, TOPUP_MAX } from "hearth";

export default definePlugin({
  name: "credits",
  description: "Credits on this instance (a credit is $0.01): the balance and its ledger, admin grants, and top-ups in USDC.",
  needs: ["db", "ledger", "walletSign"],
  // A top-up signs with the caller's wallet key (ctx.walletSign, which the wallet provides), which needs the wallet's settings and HEARTH_SECRET.
  settings: ["HEARTH_SECRET", "WALLET_CAP_PER_CALL", "WALLET_CAP_PER_DAY", "WALLET_SERVERS", "CHAIN_RPC_URL", "HEARTH_METERING", "HEARTH_METER_ACCOUNTS", "X402_PAY_TO", "X402_NETWORK", "X402_ASSET", "X402_ASSET_DECIMALS", "X402_ASSET_NAME", "X402_ASSET_VERSION", "X402_MAX_TIMEOUT_SECONDS", "X402_FACILITATOR_URL"],
  methods: {
    balance: read({
      description: "The caller's credits, whether its priced calls cost credits (metered), and the latest ledger entries, newest first.",
      args: T.Object({ limit: T.Optional(T.Integer({ minimum: 1, maximum: 200, default: 20, description: "Entries to show (default 20, max 200)." })) }),
      access: "account",
      run: async ({ limit }, ctx) => ({
        balance: await ctx.ledger.balanceOf(ctx.db, ctx.account.id),
        metered: ctx.config.HEARTH_METERING !== "off" && (await ctx.ledger.metersAccount(ctx.db, ctx.ledger.accountMetering(ctx.config), ctx.account)),
        entries: (await ctx.ledger.recent(ctx.db, ctx.account.id, limit ?? 20)).map(ctx.ledger.shapeEntry),
      }),
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
      async run({ user, amount, note }, ctx) {
        if (!ctx.account.admin) throw forbidden("only an admin may grant credits");
        return await ctx.ledger.grantCredits(ctx.db, { username: user.toLowerCase(), amount, note, by: ctx.account.username, at: ctx.clock.now().getTime(), requestId: ctx.requestId });
      },
    }),
    topup: write({
      description:
        "Buys credits with USDC from the caller's wallet: send USDC to wallet/address first; this transfers exactly credits x $0.01 to the instance and adds the credits once the transfer settles.",
      args: T.Object({ credits: T.Integer({ minimum: 1, maximum: TOPUP_MAX, description: "Credits to buy (a credit is $0.01)." }) }),
      access: "account",
      costs: true,
      withheldFromAgent: true,
      openWorld: true,
      async run({ credits }, ctx) {
        const out = await ctx.ledger.topUp({
          db: ctx.db,
          config: ctx.config,
          account: ctx.account.id,
          credits,
          requestId: ctx.requestId,
          at: ctx.clock.now().getTime(),
          resourceUrl: `${ctx.baseUrl}/api/v1/${ctx.service}/${ctx.method}`,
          method: `${ctx.service}/${ctx.method}`,
          sign: (required) => ctx.walletSign(ctx, required),
          log: ctx.log,
        });
        return { credits: out.credits, balance: out.balance, transaction: out.settlement.transaction, network: out.settlement.network };
      },
    }),
  },
});
