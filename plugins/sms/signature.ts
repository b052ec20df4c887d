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

/**
 * Whether `given` signs this request. Twilio may have been given the address
 * with or without the scheme's default port, so both forms are tried, as
 * Twilio's own libraries do.
 */
export function validSignature(token: string, url: string, params: URLSearchParams, given: string | null): boolean {
  if (!given) return false;
  const got = Buffer.from(given);
  return portForms(url).some((u) => {
    const want = Buffer.from(twilioSignature(token, u, params));
    return want.length === got.length && timingSafeEqual(want, got);
  });
}

function portForms(url: string): string[] {
  const u = new URL(url);
  const port = u.protocol === "https:" ? "443" : u.protocol === "http:" ? "80" : "";
  if (!port || u.port) return [url];
  return [url, `${u.protocol}//${u.hostname}:${port}${u.pathname}${u.search}`];
}
