// Handles and addresses. A handle is an account's username; handle+tag reaches
// the same account under a tag. Usernames never hold "+", so the first "+"
// always separates the tag.
import { USERNAME } from "../auth/tokens.ts";

export const TAG = /^[a-z0-9_-]{1,32}$/;

export interface LocalPart {
  handle: string;
  tag: string | null;
}

/** Splits "handle" or "handle+tag" (any case); null when it is neither. */
export function parseLocal(local: string): LocalPart | null {
  const lower = local.toLowerCase();
  const plus = lower.indexOf("+");
  const handle = plus < 0 ? lower : lower.slice(0, plus);
  const tag = plus < 0 ? null : lower.slice(plus + 1);
  if (!USERNAME.test(handle)) return null;
  if (tag !== null && !TAG.test(tag)) return null;
  return { handle, tag };
}

/** A mailbox as written in an envelope or header: local@domain. Null when it is not one. */
export function splitAddress(addr: string): { local: string; domain: string } | null {
  const m = /^([^\s@<>()",;:]+)@([a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+)$/i.exec(addr.trim());
  if (!m) return null;
  return { local: m[1], domain: m[2].toLowerCase() };
}

export const sameDomain = (a: string, b: string) => a.toLowerCase().replace(/\.$/, "") === b.toLowerCase().replace(/\.$/, "");

/** handle[+tag]@domain, or handle[+tag] when the instance has no mail domain. */
export function addressOf(domain: string | null, handle: string, tag?: string | null): string {
  const local = tag ? `${handle}+${tag}` : handle;
  return domain ? `${local}@${domain}` : local;
}

/** A Message-ID without its angle brackets, or null for an empty header. */
export function bareId(id: string | null | undefined): string | null {
  if (!id) return null;
  const t = id.trim().replace(/^<|>$/g, "");
  return t || null;
}
