// Identifiers and secrets. Ids are short and URL-safe; tokens carry 256 bits.
import { timingSafeEqual } from "node:crypto";

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

/** A random 16-character id (80 bits), lowercase Crockford base32. */
export function newId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  let s = "";
  for (const b of bytes) s += ALPHABET[b & 31];
  return s;
}

export function newToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return "hth_" + Buffer.from(bytes).toString("base64url");
}

export function hashToken(token: string): string {
  return new Bun.CryptoHasher("sha256").update(token).digest("hex");
}

/** A 256-bit secret for cookies, CSRF tokens and invitation codes. */
export function newSecret(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
}

/**
 * Compares two secrets in time that depends only on their lengths, so a
 * guesser learns nothing from how fast a wrong guess is refused.
 */
export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  if (x.length !== y.length) return false;
  return timingSafeEqual(x, y);
}
