// Whose priced calls cost credits. On a default install the accounts are the
// owner's own, so priced methods are free for them while callers without an
// account still pay per call; an owner who hosts others meters them with
// HEARTH_METER_ACCOUNTS, and an admin may choose for any one account.
import { eq } from "drizzle-orm";
import { mapAnswer } from "../answer.ts";
import { accounts } from "../db/schema.ts";
import { notFound } from "../errors.ts";
import type { Account, Db } from "../plugin.ts";
import { payAccounts } from "./schema.ts";

export type AccountMetering = "off" | "on" | "all";

/** HEARTH_METER_ACCOUNTS, checked: a value it does not know stops the start with the setting named. */
export function accountMetering(config: Readonly<Record<string, string>>): AccountMetering {
  const v = (config.HEARTH_METER_ACCOUNTS ?? "off").trim().toLowerCase() || "off";
  if (v === "off" || v === "on" || v === "all") return v;
  throw new Error(`HEARTH_METER_ACCOUNTS must be off, on or all (it is "${config.HEARTH_METER_ACCOUNTS}")`);
}

/** Whether this account's priced calls cost credits: the admin's choice for it, else the instance's setting (admins only under "all"). */
export function metersAccount(db: Db, setting: AccountMetering, account: Account): Promise<boolean> {
  const chosen = db.select({ metered: payAccounts.metered }).from(payAccounts).where(eq(payAccounts.account, account.id)).get();
  return mapAnswer(chosen, (chosen) => (chosen ? chosen.metered : setting === "all" || (setting === "on" && !account.admin)));
}

/** Records an admin's choice for one account; null goes back to the instance's setting. Call inside a write transaction. */
export async function chooseMetering(db: Db, input: { username: string; metered: boolean | null; by: string; at: number }, setting: AccountMetering) {
  const acct = await db.select({ id: accounts.id, username: accounts.username, admin: accounts.admin }).from(accounts).where(eq(accounts.username, input.username)).get();
  if (!acct) throw notFound(`no account named "${input.username}"`);
  if (input.metered === null) await db.delete(payAccounts).where(eq(payAccounts.account, acct.id)).run();
  else
    await db
      .insert(payAccounts)
      .values({ account: acct.id, metered: input.metered, by: input.by, at: input.at })
      .onConflictDoUpdate({ target: payAccounts.account, set: { metered: input.metered, by: input.by, at: input.at } })
      .run();
  return { user: acct.username, metered: await metersAccount(db, setting, acct), chosen: input.metered !== null };
}

/** "on", "off" or "default" as the CLI takes it; undefined for anything else. */
export function parseChoice(raw: string | undefined): boolean | null | undefined {
  if (raw === "on") return true;
  if (raw === "off") return false;
  if (raw === "default") return null;
  return undefined;
}

/** One sentence on who pays for priced calls here, for the home page and /status. */
export function whoPays(config: Readonly<Record<string, string>>): { accounts: AccountMetering; strangers: "x402" | "account"; text: string } {
  if (config.HEARTH_METERING === "off") return { accounts: "off", strangers: "account", text: "Metering is off: every method is free for everyone." };
  const setting = accountMetering(config);
  const strangers = config.X402_PAY_TO ? "x402" : "account";
  const mine =
    setting === "off"
      ? "Accounts here call every method free"
      : setting === "on"
        ? "Priced methods cost credits for accounts other than the admins' (an admin grants them)"
        : "Priced methods cost credits for every account (an admin grants them)";
  const others = strangers === "x402" ? "callers without an account pay per call with x402 (USDC)" : "callers without an account cannot pay here, so priced methods need an account";
  return { accounts: setting, strangers, text: `${mine}; ${others}.` };
}
