// Short-lived steps between a request and the next one of the same sign-in
// or passkey ceremony (core/db/schema.ts authChallenges): the browser holds a
// random handle, the store its sha256. Each is taken once, by a conditional
// update, so two answers racing for one step cannot both pass.
import { and, eq, gt, isNull, lt } from "drizzle-orm";
import { authChallenges } from "../db/schema.ts";
import type { Runtime } from "../runtime.ts";
import { hashToken, newSecret } from "./ids.ts";

export type Purpose = "second-factor" | "passkey-register" | "passkey-signin";

/** Minutes a step stays open: time to find the phone or touch the key, not long enough to be worth stealing. */
const OPEN_MINUTES = 5;

/** Opens a step; returns the handle to give the browser. */
export async function openChallenge(rt: Runtime, purpose: Purpose, o: { account?: string; challenge?: string }): Promise<string> {
  const handle = newSecret();
  const now = rt.clock.now().getTime();
  await rt.store.write(async () => {
    // Steps never finished are of no use to anyone: opening one is a quiet moment to drop them.
    await rt.store.wdb.delete(authChallenges).where(lt(authChallenges.expires, now)).run();
    await rt.store.wdb
      .insert(authChallenges)
      .values({ hash: hashToken(handle), purpose, account: o.account ?? null, challenge: o.challenge ?? null, created: now, expires: now + OPEN_MINUTES * 60_000 })
      .run();
  });
  return handle;
}

export interface OpenStep {
  hash: string;
  account: string | null;
  challenge: string | null;
}

/** The open step a handle names, for this purpose, or null (unknown, used, expired). Reading does not use it. */
export async function peekChallenge(rt: Runtime, purpose: Purpose, handle: string | null | undefined): Promise<OpenStep | null> {
  if (!handle || handle.length > 200) return null;
  const row = await rt.store.rdb
    .select({ hash: authChallenges.hash, account: authChallenges.account, challenge: authChallenges.challenge })
    .from(authChallenges)
    .where(and(eq(authChallenges.hash, hashToken(handle)), eq(authChallenges.purpose, purpose), isNull(authChallenges.used), gt(authChallenges.expires, rt.clock.now().getTime())))
    .get();
  return row ?? null;
}

/** Uses a step inside the caller's write: true for the one use that got it, false when it was gone. */
export async function spendChallenge(rt: Runtime, hash: string): Promise<boolean> {
  const now = rt.clock.now().getTime();
  const spent = await rt.store.wdb
    .update(authChallenges)
    .set({ used: now })
    .where(and(eq(authChallenges.hash, hash), isNull(authChallenges.used), gt(authChallenges.expires, now)))
    .returning({ hash: authChallenges.hash })
    .all();
  return spent.length > 0;
}
