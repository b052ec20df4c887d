// A priced app is paid for by whoever uses it, and the credits go to its
// creator: two ledger entries in the caller's transaction, so neither lands
// without the other. The payer's balance is held (holdAccount) before it is
// read, under the same key as the core's own charges.
import { HearthError, type Db, type Ledger } from "hearth";

const credits = (n: number) => `${n} credit${n === 1 ? "" : "s"}`;

/** Call inside a write transaction. Refuses with 402 when the payer's balance is short. */
export async function chargeUse(
  db: Db,
  { append, balanceOf, holdAccount }: Ledger,
  u: { payer: string; creator: string | null; price: number; slug: string; what: "open" | "fork"; requestId: string; at: number },
): Promise<{ charged: number; balance: number }> {
  if (u.price <= 0 || u.payer === u.creator) return { charged: 0, balance: await balanceOf(db, u.payer) };
  await holdAccount(db, u.payer);
  const balance = await balanceOf(db, u.payer);
  if (balance < u.price)
    throw new HearthError("payment_required", `the app "${u.slug}" costs ${credits(u.price)} per ${u.what}; the balance is ${credits(balance)}: ask the instance's admin for credits`, {
      extra: { price: u.price, balance },
    });
  const method = u.what === "open" ? "apps/open" : "apps/fork";
  await append(db, { account: u.payer, delta: -u.price, reason: "app", method, requestId: u.requestId, note: `${u.what} ${u.slug}`, at: u.at });
  if (u.creator) await append(db, { account: u.creator, delta: u.price, reason: "app_sale", method, requestId: u.requestId, note: `${u.what} ${u.slug}`, at: u.at });
  return { charged: u.price, balance: balance - u.price };
}
