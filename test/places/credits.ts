// Credits for test accounts, straight through the core ledger, so priced
// calls can be paid for and their charges read back.
import { grantCredits } from "../../core/pay/grant.ts";
import { balanceOf } from "../../core/pay/ledger.ts";
import type { startHearth } from "../harness.ts";
import { sqlAll, sqlGet } from "../sql.ts";

type Hearth = Awaited<ReturnType<typeof startHearth>>;

/** A token for a new account holding `credits`. */
export async function funded(h: Hearth, username: string, credits: number): Promise<string> {
  const token = await h.token(username);
  await h.rt.store.write(() => grantCredits(h.rt.store.wdb, { username, amount: credits, by: "test", at: h.rt.clock.now().getTime() }));
  return token;
}

export async function balance(h: Hearth, username: string): Promise<number> {
  const row = (await sqlGet(h.rt, "SELECT id FROM accounts WHERE username = ?", username)) as { id: string };
  return balanceOf(h.rt.store.rdb, row.id);
}
