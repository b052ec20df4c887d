// Recognising a browser that has signed in to an account before, so sign-in
// backoff can tell the person from strangers failing on their account. After
// a sign-in the browser keeps a cookie naming the account, when it was made
// and a random id, signed with a key derived from the account's password hash:
// nothing new is stored, nobody without the database can forge one, and a
// password change retires every such cookie.
import { createHmac } from "node:crypto";
import { eq } from "drizzle-orm";
import { accounts } from "../db/schema.ts";
import type { Account } from "../plugin.ts";
import type { Runtime } from "../runtime.ts";
import { safeEqual } from "./ids.ts";
import { isSecure, readCookie } from "./sessions.ts";

export const DEVICE_COOKIE = "hearth_device";
const DEVICE_DAYS = 365;

function mac(passwordHash: string, username: string, issued: string, id: string): string {
  return createHmac("sha256", `hearth device\n${passwordHash}`).update(`${username}\n${issued}\n${id}`).digest("base64url");
}

/** The Set-Cookie value that marks this browser as one the account signed in from, or null for an account without a password. */
export async function deviceCookie(rt: Runtime, req: Request, account: Account): Promise<string | null> {
  const row = await rt.store.rdb.select({ password: accounts.password }).from(accounts).where(eq(accounts.id, account.id)).get();
  if (!row?.password) return null;
  const issued = rt.clock.now().getTime().toString(36);
  const id = Buffer.from(crypto.getRandomValues(new Uint8Array(12))).toString("base64url");
  const value = `${account.username}.${issued}.${id}.${mac(row.password, account.username, issued, id)}`;
  // Only sign-in reads it.
  return [`${DEVICE_COOKIE}=${value}`, "Path=/signin", "HttpOnly", "SameSite=Strict", `Max-Age=${DEVICE_DAYS * 86_400}`, ...(isSecure(rt, req) ? ["Secure"] : [])].join("; ");
}

/** The device id when the request carries a valid cookie for this account (by its password hash), else null. */
export function knownDevice(req: Request, username: string, passwordHash: string | null | undefined, now: number): string | null {
  if (!passwordHash) return null;
  const raw = readCookie(req, DEVICE_COOKIE);
  if (!raw || raw.length > 300) return null;
  const parts = raw.split(".");
  if (parts.length !== 4) return null;
  const [name, issued, id, sig] = parts;
  if (name !== username) return null;
  const at = parseInt(issued, 36);
  if (!Number.isFinite(at) || at > now + 60_000 || now - at > DEVICE_DAYS * 86_400_000) return null;
  return safeEqual(sig, mac(passwordHash, name, issued, id)) ? id : null;
}
