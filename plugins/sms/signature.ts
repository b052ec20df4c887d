// Twilio's webhook signature (X-Twilio-Signature): HMAC-SHA1, keyed with the
// auth token, over the full URL Twilio requested followed by every POST
// parameter's name and value, sorted by name; base64.
import { createHmac, timingSafeEqual } from "node:crypto";

export function twilioSignature(token: string, url: string, params: URLSearchParams): string {
  const names = [...new Set(params.keys())].sort();
  let data = url;
  for (const name of names) for (const value of params.getAll(name)) data += name + value;
  return createHmac("sha1", token).update(Buffer.from(data, "utf8")).digest("base64");
}

export function validSignature(token: string, url: string, params: URLSearchParams, given: string | null): boolean {
  if (!given) return false;
  const want = Buffer.from(twilioSignature(token, url, params));
  const got = Buffer.from(given);
  return want.length === got.length && timingSafeEqual(want, got);
}
