// Accounts for people: sign-up under the instance's policy, sign-in with a
// password, invitations. Passwords are kept only as argon2id hashes.
import { and, asc, eq, gt, isNotNull, isNull, ne } from "drizzle-orm";
import type { Store } from "../db/index.ts";
import { accounts, invites, passwordLinks, sessions } from "../db/schema.ts";
import { disabledAccounts } from "../settings/schema.ts";
import { conflict, forbidden, HearthError, invalid, notConfigured, unauthenticated } from "../errors.ts";
import type { Account } from "../plugin.ts";
import type { Runtime } from "../runtime.ts";
import { backoffOf } from "./backoff.ts";
import { passwordCost } from "./cost.ts";
import { knownDevice } from "./devices.ts";
import { hashToken, newId, newSecret } from "./ids.ts";
import { limiterOf, rateLimited } from "./limits.ts";
import { isFirst, USERNAME } from "./tokens.ts";

/**
 * Handles that would mislead as a person's name or a mail address, or that
 * name parts of the instance itself.
 */
export const RESERVED = new Set([
  "abuse", "admin", "administrator", "agent", "anonymous", "api", "auth", "billing", "daemon", "everyone",
  "guest", "help", "hearth", "hostmaster", "info", "instance", "localhost", "mail", "mailer-daemon", "me",
  "moderator", "no-reply", "nobody", "noreply", "null", "operator", "owner", "postmaster", "root", "security",
  "server", "signin", "signup", "staff", "support", "system", "team", "token", "undefined", "webmaster", "www",
]);

export const PASSWORD_MIN = 8;
/** Hashing cost grows with length; a cap keeps one request from tying up the server. */
export const PASSWORD_MAX = 256;

export type SignupPolicy = "open" | "invite" | "closed";

export function signupPolicy(config: Record<string, string>): SignupPolicy {
  const p = (config.HEARTH_SIGNUP ?? "invite").trim().toLowerCase();
  if (p === "open" || p === "invite" || p === "closed") return p;
  throw notConfigured(`HEARTH_SIGNUP must be open, invite or closed (it is "${config.HEARTH_SIGNUP}")`);
}

/** Lowercases and checks a handle chosen at sign-up. */
export function checkUsername(raw: unknown): string {
  if (typeof raw !== "string" || raw.trim() === "") throw invalid("username", "choose a username");
  const u = raw.trim().toLowerCase();
  if (!USERNAME.test(u)) throw invalid("username", "a username is 3 to 32 characters of a-z, 0-9, _ and -");
  if (RESERVED.has(u)) throw invalid("username", `"${u}" is reserved; choose another username`);
  return u;
}

export function checkPassword(raw: unknown, username: string): string {
  if (typeof raw !== "string" || raw === "") throw invalid("password", "choose a password");
  const n = [...raw].length;
  if (n < PASSWORD_MIN) throw invalid("password", `a password needs at least ${PASSWORD_MIN} characters (got ${n})`);
  if (n > PASSWORD_MAX) throw invalid("password", `a password may have at most ${PASSWORD_MAX} characters (got ${n})`);
  if (raw.toLowerCase() === username) throw invalid("password", "the password may not be the username");
  return raw;
}

/** argon2id at Bun's default cost, or at HEARTH_PASSWORD_COST=test the least it allows; verifying reads the cost from the hash itself. */
export function hashPassword(pw: string, config: Record<string, string>): Promise<string> {
  return passwordCost(config) === "test" ? Bun.password.hash(pw, { algorithm: "argon2id", memoryCost: 8, timeCost: 1 }) : Bun.password.hash(pw, { algorithm: "argon2id" });
}

// Verified against when the username is unknown, so a miss costs the same
// time whether or not the account exists (at the cost hashes are made at).
const decoys = new Map<string, Promise<string>>();
const decoyHash = (config: Record<string, string>) => {
  const cost = passwordCost(config);
  if (!decoys.has(cost)) decoys.set(cost, hashPassword(newSecret(), config));
  return decoys.get(cost)!;
};

export async function hasAccounts(store: Store): Promise<boolean> {
  return !!(await store.rdb.select({ id: accounts.id }).from(accounts).limit(1).get());
}

/** Counts an attempt against the client address (sign-in and sign-up share the tighter limit). */
export function limitAttempt(rt: Runtime, address: string): void | Promise<void> {
  return limiterOf(rt).check("signin", `ip:${address}`, rt.clock.now().getTime(), "sign-in attempts");
}

export interface SignUp {
  username: unknown;
  password: unknown;
  invite?: unknown;
}

/** Creates an account with a password; the first account on an instance is its admin. */
export async function signUp(rt: Runtime, input: SignUp): Promise<Account> {
  const username = checkUsername(input.username);
  const password = checkPassword(input.password, username);
  const policy = signupPolicy(rt.config);
  const inviteCode = typeof input.invite === "string" ? input.invite.trim() : "";
  // Refuse early, before paying for a hash, when the answer cannot change.
  if (await hasAccounts(rt.store)) {
    if (policy === "closed") throw forbidden("sign-up is closed on this instance: ask its admin for an account");
    if (policy === "invite" && !inviteCode) throw invalid("invite", "sign-up on this instance needs an invitation code from its admin");
  }
  const hash = await hashPassword(password, rt.config);
  const now = rt.clock.now().getTime();
  return rt.store.write(async () => {
    const db = rt.store.wdb;
    const first = await isFirst(rt.store);
    const account = { id: newId(), username, admin: first, created: now, password: hash };
    if (!first && policy === "closed") throw forbidden("sign-up is closed on this instance: ask its admin for an account");
    // The invitation is spent by one conditional update: of sign-ups with one code at once, one gets it.
    // A refusal below rolls the spending back with the rest.
    if (!first && policy === "invite") {
      const spent = await db
        .update(invites)
        .set({ used: now, usedBy: account.id })
        .where(and(eq(invites.hash, hashToken(inviteCode)), isNull(invites.used), gt(invites.expires, now)))
        .returning({ hash: invites.hash })
        .all();
      if (!spent.length) throw invalid("invite", "this invitation code is not valid: it is unknown, used or expired");
    }
    // The username's unique key decides between sign-ups choosing it at once.
    const made = await db.insert(accounts).values(account).onConflictDoNothing({ target: accounts.username }).returning({ id: accounts.id }).all();
    if (!made.length) throw conflict(`the username "${username}" is taken; choose another`, { field: "username" });
    return { id: account.id, username, admin: first };
  });
}

/**
 * Checks a username and password. Misses slow further tries for that
 * username from that client (429 with Retry-After during the wait), and
 * many misses from clients the account does not recognise slow all of them,
 * but not a device the account signed in from before (see backoff.ts).
 * A refusal never says which of the two was wrong.
 */
export async function signIn(rt: Runtime, input: { username: unknown; password: unknown }, from: { address: string; req?: Request }): Promise<Account> {
  const username = typeof input.username === "string" ? input.username.trim().toLowerCase() : "";
  const password = typeof input.password === "string" ? input.password : "";
  if (!username) throw invalid("username", "enter your username");
  if (!password) throw invalid("password", "enter your password");
  if (password.length > PASSWORD_MAX * 4) throw invalid("password", `a password has at most ${PASSWORD_MAX} characters`);
  const row = await rt.store.rdb.select().from(accounts).where(eq(accounts.username, username)).get();
  const now = rt.clock.now().getTime();
  const client = { address: from.address, device: from.req ? knownDevice(from.req, username, row?.password, now) : null };
  const backoff = backoffOf(rt);
  const wait = await backoff.wait(username, client, now);
  if (wait > 0) throw rateLimited(`too many failed sign-ins for "${username}": try again in ${wait} s`, wait);
  const ok = row?.password ? await Bun.password.verify(password, row.password) : (await Bun.password.verify(password, await decoyHash(rt.config)), false);
  if (!row || !ok) {
    await backoff.fail(username, client, rt.clock.now().getTime());
    throw unauthenticated("the username or password is wrong");
  }
  await backoff.succeed(username, client);
  // Said only to whoever knows the password, so it tells a stranger nothing.
  if (await disabled(rt.store, row.id)) throw forbidden(`the account "${username}" is disabled: ask the instance's admin`);
  return { id: row.id, username: row.username, admin: row.admin };
}

/**
 * Sets or changes an account's password (for accounts made without one, and
 * for changes), and signs the account out of every browser in the same
 * write: whoever held a session under the old password signs in with the new
 * one. Returns how many sessions ended.
 */
export async function setPassword(store: Store, config: Record<string, string>, accountId: string, username: string, password: unknown): Promise<number> {
  const hash = await hashPassword(checkPassword(password, username), config);
  return store.write(async () => {
    await store.wdb.update(accounts).set({ password: hash }).where(eq(accounts.id, accountId)).run();
    const ended = await store.wdb.delete(sessions).where(eq(sessions.account, accountId)).returning({ hash: sessions.hash }).all();
    return ended.length;
  });
}

/**
 * A signed-in person changes their own password: the current one is asked
 * for (misses count against sign-in's backoff, as a wrong password at
 * /signin does), and every other session of the account ends in the same
 * write, while the one making the change stays signed in. Returns how many
 * sessions ended.
 */
export async function changePassword(
  rt: Runtime,
  account: Account,
  keep: string,
  input: { current: unknown; password: unknown },
  from: { address: string; req?: Request },
): Promise<number> {
  const current = typeof input.current === "string" ? input.current : "";
  if (!current) throw invalid("current", "enter your current password");
  if (current.length > PASSWORD_MAX * 4) throw invalid("current", `a password has at most ${PASSWORD_MAX} characters`);
  const next = checkPassword(input.password, account.username);
  const row = await rt.store.rdb.select({ password: accounts.password }).from(accounts).where(eq(accounts.id, account.id)).get();
  const now = rt.clock.now().getTime();
  const client = { address: from.address, device: from.req ? knownDevice(from.req, account.username, row?.password, now) : null };
  const backoff = backoffOf(rt);
  const wait = await backoff.wait(account.username, client, now);
  if (wait > 0) throw rateLimited(`too many wrong passwords: try again in ${wait} s`, wait);
  if (!row?.password || !(await Bun.password.verify(current, row.password))) {
    await backoff.fail(account.username, client, rt.clock.now().getTime());
    throw invalid("current", "the current password is wrong");
  }
  await backoff.succeed(account.username, client);
  const hash = await hashPassword(next, rt.config);
  return rt.store.write(async () => {
    await rt.store.wdb.update(accounts).set({ password: hash }).where(eq(accounts.id, account.id)).run();
    const ended = await rt.store.wdb
      .delete(sessions)
      .where(and(eq(sessions.account, account.id), ne(sessions.hash, keep)))
      .returning({ hash: sessions.hash })
      .all();
    return ended.length;
  });
}

export const INVITE_DAYS = 7;

/** An admin makes a one-use invitation code; only its hash is kept. */
export async function createInvite(rt: Runtime, by: Account): Promise<{ code: string; expires: string }> {
  if (!by.admin) throw new HearthError("forbidden", "only an admin can invite people");
  const code = newSecret();
  const now = rt.clock.now().getTime();
  const expires = now + INVITE_DAYS * 86_400_000;
  await rt.store.write(() => rt.store.wdb.insert(invites).values({ hash: hashToken(code), createdBy: by.id, created: now, expires }).run());
  return { code, expires: new Date(expires).toISOString() };
}

/** Hours a link to set a password works for. */
export const PASSWORD_LINK_HOURS = 24;

/** The path of a link to set a password. */
export const passwordLinkPath = (code: string) => `/password?code=${encodeURIComponent(code)}`;

/**
 * Makes a one-use link code to set an account's password; only its hash is
 * kept, and the account's earlier links that were not used end with it.
 */
export async function createPasswordLink(rt: Runtime, account: { id: string }): Promise<{ code: string; expires: string }> {
  const code = newSecret();
  const now = rt.clock.now().getTime();
  const expires = now + PASSWORD_LINK_HOURS * 3_600_000;
  await rt.store.write(async () => {
    await rt.store.wdb.update(passwordLinks).set({ used: now }).where(and(eq(passwordLinks.account, account.id), isNull(passwordLinks.used))).run();
    await rt.store.wdb.insert(passwordLinks).values({ hash: hashToken(code), account: account.id, created: now, expires }).run();
  });
  return { code, expires: new Date(expires).toISOString() };
}

const LINK_REFUSED = "this link to set a password is not valid: it was used already, has expired, or was replaced by a newer one";

/** The account a link is for while it still works; a refusal naming the code otherwise. */
export async function passwordLinkAccount(rt: Runtime, code: unknown): Promise<Account> {
  if (typeof code !== "string" || !code) throw invalid("code", "this address lacks its code: open the whole link you were given");
  const row = await rt.store.rdb
    .select({ id: accounts.id, username: accounts.username, admin: accounts.admin })
    .from(passwordLinks)
    .innerJoin(accounts, eq(accounts.id, passwordLinks.account))
    .where(and(eq(passwordLinks.hash, hashToken(code)), isNull(passwordLinks.used), gt(passwordLinks.expires, rt.clock.now().getTime())))
    .get();
  if (!row) throw invalid("code", LINK_REFUSED);
  return row;
}

/**
 * Sets the password a link was made for and spends the link, in one write:
 * of two uses at once one wins, and the account is signed out of every
 * browser, as any change of password does.
 */
export async function usePasswordLink(rt: Runtime, code: unknown, password: unknown): Promise<Account> {
  const account = await passwordLinkAccount(rt, code);
  if (await disabled(rt.store, account.id)) throw forbidden(`the account "${account.username}" is disabled: ask the instance's admin`);
  const hash = await hashPassword(checkPassword(password, account.username), rt.config);
  const now = rt.clock.now().getTime();
  return rt.store.write(async () => {
    const db = rt.store.wdb;
    const spent = await db
      .update(passwordLinks)
      .set({ used: now })
      .where(and(eq(passwordLinks.hash, hashToken(code as string)), isNull(passwordLinks.used), gt(passwordLinks.expires, now)))
      .returning({ account: passwordLinks.account })
      .all();
    if (!spent.length) throw invalid("code", LINK_REFUSED);
    await db.update(accounts).set({ password: hash }).where(eq(accounts.id, account.id)).run();
    await db.delete(sessions).where(eq(sessions.account, account.id)).run();
    return account;
  });
}

/** Whether an admin disabled the account (core/settings/people.ts). */
async function disabled(store: Store, accountId: string): Promise<boolean> {
  return !!(await store.rdb.select({ at: disabledAccounts.at }).from(disabledAccounts).where(eq(disabledAccounts.account, accountId)).get());
}

/** Whether an account can sign in on the web: it has a password. */
export async function hasPassword(store: Store, accountId: string): Promise<boolean> {
  return !!(await store.rdb.select({ id: accounts.id }).from(accounts).where(and(eq(accounts.id, accountId), isNotNull(accounts.password))).get());
}

/**
 * The first admin, when no admin of the instance has a password: nobody can
 * sign in to run it on the web until one is set at the shell. Null otherwise.
 */
export async function lockedOutAdmin(store: Store): Promise<Account | null> {
  const admins = await store.rdb.select().from(accounts).where(eq(accounts.admin, true)).orderBy(asc(accounts.created)).all();
  if (!admins.length || admins.some((a) => a.password)) return null;
  return { id: admins[0].id, username: admins[0].username, admin: true };
}
