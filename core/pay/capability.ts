// ctx.ledger: the credits ledger, for a plugin that shows, grants or charges
// credits (credits, apps). Granted, like every capability, to a plugin naming
// "ledger" in needs; its functions are the core's own and take the call's
// ctx.db, so a charge lands in the call's transaction or not at all.
import { accountMetering, metersAccount } from "./accounts.ts";
import { grantCredits } from "./grant.ts";
import { append, balanceOf, holdAccount, recent, shapeEntry } from "./ledger.ts";
import { topUp } from "./topup.ts";

export const ledger = { balanceOf, holdAccount, append, recent, shapeEntry, grantCredits, topUp, accountMetering, metersAccount };
export type Ledger = typeof ledger;

declare module "../plugin.ts" {
  interface CapabilityTypes {
    ledger: Ledger;
  }
}
