// Passkeys (WebAuthn) through @simplewebauthn/server: a person registers one
// on /account and signs in with it on /signin without a username (the
// credential is discoverable: the authenticator offers the accounts it holds
// for this site). A passkey that verified the person (a PIN, a fingerprint)
// is two factors in itself, so it signs in without the TOTP step.
//
// The relying party is this instance: its id is the host name of
// HEARTH_PUBLIC_URL when set, else of the address the request came to, and
// answers are accepted only from that origin.
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server";
import { and, asc, eq } from "drizzle-orm";
import { accounts, passkeys } from "../db/schema.ts";
import { invalid, notFound, unauthenticated } from "../errors.ts";
import type { Account } from "../plugin.ts";
import type { Runtime } from "../runtime.ts";
import { openChallenge, peekChallenge, spendChallenge } from "./challenges.ts";

export const PASSKEY_NAME_MAX = 64;

/**
 * @simplewebauthn/server, loaded when a passkey is first registered or used:
 * with the certificate libraries under it, some 800 modules and 2 MB of heap
 * that an instance nobody signs in to with a passkey never needs.
 */
const webauthn = () => import("@simplewebauthn/server");

/** The relying party id and the one origin answers may come from. */
export function relyingParty(rt: Runtime, req: Request): { id: string; origin: string } {
  const pub = rt.config.HEARTH_PUBLIC_URL;
  if (pub) {
    const u = new URL(pub);
    return { id: u.hostname, origin: u.origin };
  }
  const u = new URL(req.url);
  // Behind a proxy that ends TLS, the browser's origin is https while the request reached us over http.
  if ((req.headers.get("x-forwarded-proto") ?? "").split(",")[0].trim().toLowerCase() === "https") u.protocol = "https:";
  return { id: u.hostname, origin: u.origin };
}

export function checkPasskeyName(raw: unknown): string {
  const name = typeof raw === "string" ? raw.trim() : "";
  if (!name) throw invalid("name", "give the passkey a name you will know it by: \"laptop\", \"phone\", \"security key\"");
  if ([...name].length > PASSKEY_NAME_MAX) throw invalid("name", `a passkey's name has at most ${PASSKEY_NAME_MAX} characters`);
  return name;
}

export interface PasskeyInfo {
  id: string;
  name: string;
  created: number;
  lastUsed: number | null;
}

export async function listPasskeys(rt: Runtime, accountId: string): Promise<PasskeyInfo[]> {
  return rt.store.rdb
    .select({ id: passkeys.id, name: passkeys.name, created: passkeys.created, lastUsed: passkeys.lastUsed })
    .from(passkeys)
    .where(eq(passkeys.account, accountId))
    .orderBy(asc(passkeys.created))
    .all();
}

/** What the browser's navigator.credentials.create needs, and the handle of the step. */
export async function registrationOptions(rt: Runtime, req: Request, account: Account) {
  const rp = relyingParty(rt, req);
  const have = await rt.store.rdb.select({ id: passkeys.id, transports: passkeys.transports }).from(passkeys).where(eq(passkeys.account, account.id)).all();
  const options = await (await webauthn()).generateRegistrationOptions({
    rpName: "Hearth",
    rpID: rp.id,
    userName: account.username,
    userID: new TextEncoder().encode(account.id),
    attestationType: "none",
    // One passkey per authenticator: registering again on the same one is refused by the browser.
    excludeCredentials: have.map((p) => ({ id: p.id, transports: p.transports ? p.transports.split(",") : undefined })),
    authenticatorSelection: { residentKey: "required", userVerification: "preferred" },
  });
  const handle = await openChallenge(rt, "passkey-register", { account: account.id, challenge: options.challenge });
  return { options, handle };
}

/** Verifies the browser's answer and keeps the new passkey under its name. */
export async function finishRegistration(rt: Runtime, req: Request, account: Account, input: { handle: unknown; name: unknown; response: unknown }): Promise<PasskeyInfo> {
  const name = checkPasskeyName(input.name);
  const step = await peekChallenge(rt, "passkey-register", typeof input.handle === "string" ? input.handle : null);
  if (!step || step.account !== account.id || !step.challenge) throw invalid("handle", "this passkey request has expired or was used: try adding the passkey again");
  const rp = relyingParty(rt, req);
  const response = asResponse<RegistrationResponseJSON>(input.response);
  let verified;
  try {
    verified = await (await webauthn()).verifyRegistrationResponse({ response, expectedChallenge: step.challenge, expectedOrigin: rp.origin, expectedRPID: rp.id, requireUserVerification: false });
  } catch (e) {
    throw invalid("response", `the browser's answer did not verify: ${(e as Error).message}`);
  }
  if (!verified.verified) throw invalid("response", "the browser's answer did not verify");
  const cred = verified.registrationInfo.credential;
  const now = rt.clock.now().getTime();
  await rt.store.write(async () => {
    if (!(await spendChallenge(rt, step.hash))) throw invalid("handle", "this passkey request was used already: try adding the passkey again");
    const made = await rt.store.wdb
      .insert(passkeys)
      .values({
        id: cred.id,
        account: account.id,
        name,
        publicKey: Buffer.from(cred.publicKey).toString("base64url"),
        counter: cred.counter,
        transports: cred.transports?.length ? cred.transports.join(",") : null,
        created: now,
      })
      .onConflictDoNothing({ target: passkeys.id })
      .returning({ id: passkeys.id })
      .all();
    if (!made.length) throw invalid("response", "this passkey is registered already");
  });
  return { id: cred.id, name, created: now, lastUsed: null };
}

/** What navigator.credentials.get needs for a sign-in with any passkey of this site, and the step's handle. */
export async function signinOptions(rt: Runtime, req: Request) {
  const rp = relyingParty(rt, req);
  const options = await (await webauthn()).generateAuthenticationOptions({ rpID: rp.id, userVerification: "required" });
  const handle = await openChallenge(rt, "passkey-signin", { challenge: options.challenge });
  return { options, handle };
}

/**
 * Verifies a passkey sign-in and, in the same write that spends the step and
 * moves the passkey's counter on, runs `then` (which starts the session).
 */
export async function finishSignin<T>(rt: Runtime, req: Request, input: { handle: unknown; response: unknown }, then: (account: Account) => Promise<T>): Promise<{ account: Account; result: T }> {
  const step = await peekChallenge(rt, "passkey-signin", typeof input.handle === "string" ? input.handle : null);
  if (!step?.challenge) throw invalid("handle", "this passkey sign-in has expired or was used: try again");
  const response = asResponse<AuthenticationResponseJSON>(input.response);
  const row = await rt.store.rdb
    .select({ id: passkeys.id, publicKey: passkeys.publicKey, counter: passkeys.counter, transports: passkeys.transports, account: accounts.id, username: accounts.username, admin: accounts.admin })
    .from(passkeys)
    .innerJoin(accounts, eq(accounts.id, passkeys.account))
    .where(eq(passkeys.id, response.id))
    .get();
  if (!row) throw unauthenticated("this passkey is not registered here (it may have been removed): sign in with your password");
  const rp = relyingParty(rt, req);
  let verified;
  try {
    verified = await (await webauthn()).verifyAuthenticationResponse({
      response,
      expectedChallenge: step.challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      credential: { id: row.id, publicKey: new Uint8Array(Buffer.from(row.publicKey, "base64url")), counter: row.counter, transports: row.transports?.split(",") },
      requireUserVerification: true,
    });
  } catch (e) {
    throw unauthenticated(`the passkey's answer did not verify: ${(e as Error).message}`);
  }
  if (!verified.verified) throw unauthenticated("the passkey's answer did not verify");
  const account: Account = { id: row.account, username: row.username, admin: row.admin };
  const now = rt.clock.now().getTime();
  const result = await rt.store.write(async () => {
    if (!(await spendChallenge(rt, step.hash))) throw invalid("handle", "this passkey sign-in was used already: try again");
    await rt.store.wdb.update(passkeys).set({ counter: verified.authenticationInfo.newCounter, lastUsed: now }).where(eq(passkeys.id, row.id)).run();
    return then(account);
  });
  return { account, result };
}

export async function renamePasskey(rt: Runtime, accountId: string, id: unknown, rawName: unknown): Promise<void> {
  const name = checkPasskeyName(rawName);
  const done = await rt.store.write(() =>
    rt.store.wdb
      .update(passkeys)
      .set({ name })
      .where(and(eq(passkeys.account, accountId), eq(passkeys.id, String(id ?? ""))))
      .returning({ id: passkeys.id })
      .all(),
  );
  if (!done.length) throw notFound("you have no such passkey");
}

export async function removePasskey(rt: Runtime, accountId: string, id: unknown): Promise<string> {
  const done = await rt.store.write(() =>
    rt.store.wdb
      .delete(passkeys)
      .where(and(eq(passkeys.account, accountId), eq(passkeys.id, String(id ?? ""))))
      .returning({ name: passkeys.name })
      .all(),
  );
  if (!done.length) throw notFound("you have no such passkey");
  return done[0].name;
}

function asResponse<T>(raw: unknown): T {
  if (!raw || typeof raw !== "object" || typeof (raw as { id?: unknown }).id !== "string" || typeof (raw as { response?: unknown }).response !== "object")
    throw invalid("response", "send the browser's credential as JSON (id, rawId, type, response)");
  return raw as T;
}
