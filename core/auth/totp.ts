// Two-factor sign-in with time-based one-time codes (RFC 6238: SHA-1, six
// digits, 30-second steps, what every authenticator app reads from an
// otpauth:// link) and ten one-use recovery codes for when the phone is lost.
// A code is accepted one step either side of now (clocks drift), and a step
// once used is refused after, so a code seen over a shoulder is spent.
import { and, eq, isNull, lt, or } from "drizzle-orm";
import { Secret, TOTP } from "otpauth";
import { accounts, recoveryCodes, totpSecrets } from "../db/schema.ts";
import { conflict, invalid, unauthenticated } from "../errors.ts";
import type { Account } from "../plugin.ts";
import type { Runtime } from "../runtime.ts";
import { hashToken } from "./ids.ts";

export const RECOVERY_CODES = 10;
const PERIOD = 30;
const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

function totpOf(secret: string, label = "", issuer = "Hearth"): TOTP {
  return new TOTP({ issuer, label, algorithm: "SHA1", digits: 6, period: PERIOD, secret: Secret.fromBase32(secret) });
}

/** The otpauth:// link an authenticator app reads (as a QR code or pasted). */
export function totpUri(secret: string, username: string, host: string): string {
  return totpOf(secret, `${username}@${host}`).toString();
}

export interface TotpState {
  /** Codes are asked for at sign-in. */
  on: boolean;
  since: number | null;
  /** A secret being set up, not yet confirmed with a code. */
  pending: string | null;
  recoveryLeft: number;
}

export async function totpState(rt: Runtime, accountId: string): Promise<TotpState> {
  const row = await rt.store.rdb.select().from(totpSecrets).where(eq(totpSecrets.account, accountId)).get();
  const left = await rt.store.rdb
    .select({ hash: recoveryCodes.hash })
    .from(recoveryCodes)
    .where(and(eq(recoveryCodes.account, accountId), isNull(recoveryCodes.used)))
    .all();
  return { on: !!row?.confirmed, since: row?.confirmed ?? null, pending: row && !row.confirmed ? row.secret : null, recoveryLeft: row?.confirmed ? left.length : 0 };
}

/** Whether sign-in asks this account for a code after its password. */
export async function totpOn(rt: Runtime, accountId: string): Promise<boolean> {
  const row = await rt.store.rdb.select({ confirmed: totpSecrets.confirmed }).from(totpSecrets).where(eq(totpSecrets.account, accountId)).get();
  return !!row?.confirmed;
}

/** Starts setting up: a new secret, replacing one never confirmed. Refused while codes are on. */
export async function startTotp(rt: Runtime, account: Account): Promise<string> {
  const secret = new Secret({ size: 20 }).base32;
  const now = rt.clock.now().getTime();
  await rt.store.write(async () => {
    const db = rt.store.wdb;
    const row = await db.select({ confirmed: totpSecrets.confirmed }).from(totpSecrets).where(eq(totpSecrets.account, account.id)).get();
    if (row?.confirmed) throw conflict("two-factor sign-in is already on: turn it off first to set up another app");
    await db.delete(totpSecrets).where(eq(totpSecrets.account, account.id)).run();
    await db.insert(totpSecrets).values({ account: account.id, secret, created: now }).run();
  });
  return secret;
}

/** The time step a code is for, when it is right for the secret now (one step either side), else null. */
function stepOf(secret: string, code: string, now: number): number | null {
  const delta = totpOf(secret).validate({ token: code, timestamp: now, window: 1 });
  return delta === null ? null : Math.floor(now / 1000 / PERIOD) + delta;
}

const sixDigits = (raw: string) => raw.replace(/\s+/g, "");

/** New recovery codes, shown once; only their hashes are kept. Inside the caller's write, replacing the old ones. */
async function makeRecoveryCodes(rt: Runtime, accountId: string, now: number): Promise<string[]> {
  const codes: string[] = [];
  for (let i = 0; i < RECOVERY_CODES; i++) {
    const bytes = crypto.getRandomValues(new Uint8Array(10));
    const s = [...bytes].map((b) => ALPHABET[b & 31]).join("");
    codes.push(`${s.slice(0, 5)}-${s.slice(5)}`);
  }
  await rt.store.wdb.delete(recoveryCodes).where(eq(recoveryCodes.account, accountId)).run();
  await rt.store.wdb
    .insert(recoveryCodes)
    .values(codes.map((c) => ({ hash: hashToken(normalRecovery(c)), account: accountId, created: now })))
    .run();
  return codes;
}

/** A recovery code as typed (any case, with or without the dash or spaces) in the form it is hashed in. */
const normalRecovery = (raw: string) => raw.toLowerCase().replace(/[\s-]+/g, "");

/**
 * Confirms the secret being set up with a code from the app: from then on
 * sign-in asks for codes. Returns the recovery codes, made in the same write.
 */
export async function confirmTotp(rt: Runtime, account: Account, rawCode: unknown): Promise<string[]> {
  const code = typeof rawCode === "string" ? sixDigits(rawCode) : "";
  if (!/^\d{6}$/.test(code)) throw invalid("code", "enter the six-digit code your authenticator app shows");
  const now = rt.clock.now().getTime();
  return rt.store.write(async () => {
    const db = rt.store.wdb;
    const row = await db.select().from(totpSecrets).where(eq(totpSecrets.account, account.id)).get();
    if (!row) throw invalid("code", "start again: there is no authenticator app being set up");
    if (row.confirmed) throw conflict("two-factor sign-in is already on");
    const step = stepOf(row.secret, code, now);
    if (step === null) throw invalid("code", "that code is not right: check that the app shows this account, and that the phone's clock is right");
    await db.update(totpSecrets).set({ confirmed: now, lastStep: step }).where(eq(totpSecrets.account, account.id)).run();
    return makeRecoveryCodes(rt, account.id, now);
  });
}

/**
 * Checks a second factor inside the caller's write: a six-digit code from
 * the app (spending its time step), or a recovery code (spending it).
 * Returns which it was, or null when it is not right.
 */
export async function useSecondFactor(rt: Runtime, accountId: string, raw: string): Promise<"totp" | "recovery" | null> {
  const db = rt.store.wdb;
  const now = rt.clock.now().getTime();
  const code = sixDigits(raw);
  if (/^\d{6}$/.test(code)) {
    const row = await db.select().from(totpSecrets).where(eq(totpSecrets.account, accountId)).get();
    if (!row?.confirmed) return null;
    const step = stepOf(row.secret, code, now);
    if (step === null) return null;
    const spent = await db
      .update(totpSecrets)
      .set({ lastStep: step })
      .where(and(eq(totpSecrets.account, accountId), or(isNull(totpSecrets.lastStep), lt(totpSecrets.lastStep, step))))
      .returning({ account: totpSecrets.account })
      .all();
    return spent.length ? "totp" : null;
  }
  const normal = normalRecovery(raw);
  if (normal.length !== 10) return null;
  const spent = await db
    .update(recoveryCodes)
    .set({ used: now })
    .where(and(eq(recoveryCodes.hash, hashToken(normal)), eq(recoveryCodes.account, accountId), isNull(recoveryCodes.used)))
    .returning({ hash: recoveryCodes.hash })
    .all();
  return spent.length ? "recovery" : null;
}

/**
 * Proof that the person at the keyboard holds the account, for turning codes
 * off or making new recovery codes: a code (app or recovery) or the password.
 */
async function prove(rt: Runtime, accountId: string, raw: unknown): Promise<void> {
  const given = typeof raw === "string" ? raw.trim() : "";
  if (!given) throw invalid("proof", "enter a code from your app, a recovery code, or your password");
  if (given.length > 1024) throw invalid("proof", "that is longer than any code or password here");
  const row = await rt.store.wdb.select({ password: accounts.password }).from(accounts).where(eq(accounts.id, accountId)).get();
  if (row?.password && (await Bun.password.verify(given, row.password))) return;
  if (await useSecondFactor(rt, accountId, given)) return;
  throw unauthenticated("that is not a current code of your app, an unused recovery code, or your password");
}

/** Turns two-factor sign-in off: the secret and the recovery codes go in one write. */
export async function disableTotp(rt: Runtime, account: Account, proof: unknown): Promise<void> {
  await rt.store.write(async () => {
    if (!(await totpOnIn(rt, account.id))) throw conflict("two-factor sign-in is not on");
    await prove(rt, account.id, proof);
    await rt.store.wdb.delete(recoveryCodes).where(eq(recoveryCodes.account, account.id)).run();
    await rt.store.wdb.delete(totpSecrets).where(eq(totpSecrets.account, account.id)).run();
  });
}

/** Replaces the recovery codes (after some were used, or the list was lost). */
export async function renewRecoveryCodes(rt: Runtime, account: Account, proof: unknown): Promise<string[]> {
  return rt.store.write(async () => {
    if (!(await totpOnIn(rt, account.id))) throw conflict("two-factor sign-in is not on: recovery codes come with it");
    await prove(rt, account.id, proof);
    return makeRecoveryCodes(rt, account.id, rt.clock.now().getTime());
  });
}

async function totpOnIn(rt: Runtime, accountId: string): Promise<boolean> {
  const row = await rt.store.wdb.select({ confirmed: totpSecrets.confirmed }).from(totpSecrets).where(eq(totpSecrets.account, accountId)).get();
  return !!row?.confirmed;
}
