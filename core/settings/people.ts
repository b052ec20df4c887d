// What an admin does to the instance's accounts: list them, disable and
// enable one, reset a password by one-time link, and delete one. A disabled
// or deleted account loses every way in at once: its browser sessions end,
// its tokens are revoked (on every instance, through the token cache) and
// its connected apps are disconnected.
import { and, asc, eq, isNull, sql } from "drizzle-orm";
import { isPg } from "../db/store.ts";
import { endAllSessions } from "../auth/sessions.ts";
import { listGrants, revokeGrant } from "../auth/oauth/grants.ts";
import { hashArgs, previewArgs } from "../audit/preview.ts";
import { AuditLog } from "../audit/log.ts";
import { accounts, passkeys, recoveryCodes, sessions, tokens, totpSecrets } from "../db/schema.ts";
import { conflict, forbidden, invalid, notFound } from "../errors.ts";
import type { Account } from "../plugin.ts";
import type { Runtime } from "../runtime.ts";
import { tell } from "./notices.ts";
import { disabledAccounts } from "./schema.ts";

export interface Person {
  id: string;
  username: string;
  admin: boolean;
  created: number;
  hasPassword: boolean;
  disabled: boolean;
}

export async function listPeople(rt: Runtime): Promise<Person[]> {
  const rows = await rt.store.rdb
    .select({ id: accounts.id, username: accounts.username, admin: accounts.admin, created: accounts.created, password: accounts.password, disabled: disabledAccounts.at })
    .from(accounts)
    .leftJoin(disabledAccounts, eq(disabledAccounts.account, accounts.id))
    .orderBy(asc(accounts.created), asc(accounts.username))
    .all();
  return rows.map((r) => ({ id: r.id, username: r.username, admin: r.admin, created: r.created, hasPassword: !!r.password, disabled: r.disabled !== null }));
}

export async function findPerson(rt: Runtime, username: string | undefined): Promise<Person> {
  const name = (username ?? "").trim().toLowerCase();
  const p = (await listPeople(rt)).find((x) => x.username === name);
  if (!p) throw notFound(`no account named "${name}"`);
  return p;
}

/** Whether an admin disabled the account. */
export async function isDisabled(rt: Runtime, accountId: string): Promise<boolean> {
  return !!(await rt.store.rdb.select({ at: disabledAccounts.at }).from(disabledAccounts).where(eq(disabledAccounts.account, accountId)).get());
}

/** The admin may not shut themselves out, nor leave the instance with no admin who can sign in. */
async function mayCutOff(rt: Runtime, by: Account, p: Person, what: string) {
  if (p.id === by.id) throw forbidden(`you cannot ${what} your own account here: another admin can`);
  if (p.admin) {
    const others = (await listPeople(rt)).filter((x) => x.admin && x.id !== p.id && !x.disabled);
    if (!others.length) throw forbidden(`${p.username} is the only admin left: ${what} another account, or make another admin first`);
  }
}

/** Ends every way the account has in: sessions, tokens, connected apps. */
async function cutOff(rt: Runtime, accountId: string) {
  await endAllSessions(rt, accountId);
  for (const g of await listGrants(rt, accountId)) await revokeGrant(rt, accountId, g.id);
  const live = await rt.store.write(() =>
    rt.store.wdb
      .update(tokens)
      .set({ revoked: rt.clock.now().getTime() })
      .where(and(eq(tokens.account, accountId), isNull(tokens.revoked)))
      .returning({ hash: tokens.hash })
      .all(),
  );
  for (const t of live) rt.tokens.forget(t.hash);
}

export async function disablePerson(rt: Runtime, by: Account, p: Person): Promise<void> {
  await mayCutOff(rt, by, p, "disable");
  await rt.store.write(() => rt.store.wdb.insert(disabledAccounts).values({ account: p.id, at: rt.clock.now().getTime(), by: by.id }).onConflictDoNothing().run());
  await cutOff(rt, p.id);
}

export async function enablePerson(rt: Runtime, p: Person): Promise<void> {
  await rt.store.write(() => rt.store.wdb.delete(disabledAccounts).where(eq(disabledAccounts.account, p.id)).run());
}

export interface TwoFactorReset {
  /** Whether codes from an authenticator app were asked for, before. */
  totp: boolean;
  /** Passkeys removed. */
  passkeys: number;
  /** Browser sessions ended. */
  sessions: number;
}

/**
 * For a person who lost their phone and their recovery codes: turns their
 * two-factor sign-in off (the app's secret and the recovery codes go) and
 * removes their passkeys, so their password alone signs them in again. Done
 * by an admin on /people (`by`), or at the server's shell (`by` null). Their
 * browser sessions end (an admin doing it to themselves keeps the session
 * asking, `keep`), the activity log of the person (and of the admin) records
 * it, and the person is told the next time they sign in. One write: all of
 * it happens, or none.
 */
export async function resetTwoFactor(rt: Runtime, p: Person, o: { by: Account | null; keep?: string }): Promise<TwoFactorReset> {
  const now = rt.clock.now().getTime();
  return rt.store.write(async () => {
    const db = rt.store.wdb;
    const totp = await db.delete(totpSecrets).where(eq(totpSecrets.account, p.id)).returning({ confirmed: totpSecrets.confirmed }).all();
    await db.delete(recoveryCodes).where(eq(recoveryCodes.account, p.id)).run();
    const keys = await db.delete(passkeys).where(eq(passkeys.account, p.id)).returning({ id: passkeys.id }).all();
    const on = totp.some((t) => t.confirmed !== null);
    if (!on && !keys.length) throw conflict(`${p.username} has no two-factor sign-in and no passkeys: their password alone signs them in already`);
    const ended = await db
      .delete(sessions)
      .where(o.keep ? and(eq(sessions.account, p.id), sql`${sessions.hash} <> ${o.keep}`) : eq(sessions.account, p.id))
      .returning({ hash: sessions.hash })
      .all();
    const self = o.by?.id === p.id;
    const what = [on ? "two-factor sign-in" : null, keys.length ? `${keys.length} passkey${keys.length === 1 ? "" : "s"}` : null].filter(Boolean).join(" and ");
    const who = o.by ? (self ? "You" : `The admin ${o.by.username}`) : "The server's owner, at its command line,";
    if (!self)
      await tell(
        rt,
        p.id,
        `${who} turned off ${on ? "your two-factor sign-in" : "sign-in with your passkeys"}${on && keys.length ? " and removed your passkeys" : ""} on ${new Date(now).toISOString().slice(0, 16).replace("T", " ")} UTC: your password alone signs you in now. Set up an authenticator app or a passkey again below.`,
      );
    const row = (account: string, args: Record<string, unknown>) => ({
      at: now,
      callId: crypto.randomUUID(),
      account,
      via: o.by ? "session" : "local",
      credential: null,
      credentialName: o.by ? "session" : null,
      surface: o.by ? "http" : "local",
      service: "people",
      method: "reset_two_factor",
      args: previewArgs(args),
      argsHash: hashArgs(args),
      credits: 0,
      paid: null,
      outcome: "ok",
      status: 200,
      approved: "policy",
    });
    const args = { user: p.username, by: o.by?.username ?? "command line", removed: what, sessions_ended: ended.length };
    await (rt.audit ?? new AuditLog(rt)).record(o.by && !self ? [row(p.id, args), row(o.by.id, args)] : [row(p.id, args)]);
    return { totp: on, passkeys: keys.length, sessions: ended.length };
  });
}

/** An admin resetting their own second factor from /people proves it is them with their password, as /account asks. */
export async function checkOwnPassword(rt: Runtime, accountId: string, raw: unknown): Promise<void> {
  const given = typeof raw === "string" ? raw : "";
  if (!given) throw invalid("password", "enter your password: turning off your own two-factor sign-in needs it");
  if (given.length > 1024) throw invalid("password", "that is longer than any password here");
  const row = await rt.store.rdb.select({ password: accounts.password }).from(accounts).where(eq(accounts.id, accountId)).get();
  if (!row?.password) throw forbidden("you have no password to sign in with: turn two-factor sign-in off on /account, with a code, instead");
  if (!(await Bun.password.verify(given, row.password))) throw invalid("password", "that is not your password: nothing was changed");
}

/**
 * Hook for the export of one account's data: set by the module that builds
 * the archive, so /people offers it before a deletion. Null while there is none.
 */
export let accountExportLink: ((rt: Runtime, p: Person) => string | null) | null = null;
export function setAccountExportLink(fn: typeof accountExportLink) {
  accountExportLink = fn;
}

/**
 * Deletes the account: its credentials go with it (the database cascades
 * sessions, tokens, invitations and password links), and every plugin
 * table's rows it owns (an `owner` or `account` column) are removed in the
 * same transaction. The credits ledger keeps its entries: money is never
 * rewritten.
 */
export async function deletePerson(rt: Runtime, by: Account, p: Person): Promise<void> {
  await mayCutOff(rt, by, p, "delete");
  await cutOff(rt, p.id);
  const owned = await ownedTables(rt);
  await rt.store.write(async () => {
    const db = rt.store.wdb;
    for (const t of owned) await db.run(sql`DELETE FROM ${sql.identifier(t.table)} WHERE ${sql.identifier(t.column)} = ${p.id}`);
    await db.delete(disabledAccounts).where(eq(disabledAccounts.account, p.id)).run();
    await db.delete(accounts).where(eq(accounts.id, p.id)).run();
  });
}

/**
 * The tables holding records that belong to an account: those with an
 * `owner` or `account` column, found in the database itself so a drop-in's
 * tables are included; the core's own are left to their foreign keys, and
 * the money and activity records to their own rules.
 */
async function ownedTables(rt: Runtime): Promise<{ table: string; column: string }[]> {
  const rows = (
    isPg(rt.store)
      ? await rt.store.rdb.all(sql`SELECT table_name AS "table", column_name AS "column" FROM information_schema.columns WHERE table_schema = current_schema() AND column_name IN ('owner', 'account') ORDER BY table_name`)
      : await rt.store.rdb.all(sql`SELECT m.name AS "table", c.name AS "column" FROM sqlite_master m JOIN pragma_table_info(m.name) c WHERE m.type = 'table' AND c.name IN ('owner', 'account') ORDER BY m.name`)
  ) as { table: string; column: string }[];
  return rows.filter((r) => !KEEP.has(r.table) && !/^sqlite_|_fts/.test(r.table));
}

/** Tables an account's rows stay in (money is never rewritten; the activity log keeps its record) or that cascade from accounts. */
const KEEP = new Set(["pay_ledger", "pay_x402", "audit_log", "audit_entries", "sessions", "tokens", "invites", "password_links", "oauth_grants", "oauth_codes", "disabled_accounts", "accounts"]);
