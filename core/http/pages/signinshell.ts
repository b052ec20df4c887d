// What the sign-in pages share: the shell that lets the instance's own
// passkey script run, and the refusal that is JSON for programs and the form
// again for people.
import { asHearthError } from "../../errors.ts";
import { errorResponse } from "../respond.ts";
import type { Posted } from "./form.ts";
import { html, page, PAGE_CSP, type Html } from "./layout.ts";

const rid = () => crypto.randomUUID();

/** The sign-in page may run the instance's own passkey script, and nothing else. */
export const SIGNIN_CSP = PAGE_CSP.replace("default-src 'none';", "default-src 'none'; script-src 'self';");
export const passkeyHead = html`<script src="/passkeys.js" defer></script>`;

/** A sign-in page: the shell with the passkey script allowed. */
export function signinShell(o: { body: Html; status?: number; headers?: Record<string, string>; title?: string }): Response {
  return page({ title: o.title ?? "Sign in", body: o.body, status: o.status, headers: o.headers, csp: SIGNIN_CSP, head: passkeyHead });
}

/** A refusal: JSON for programs, the form again with the message for people. */
export async function refuse(e: unknown, posted: Posted | null, again: (msg: string) => Response | Promise<Response>): Promise<Response> {
  const err = asHearthError(e);
  if (posted?.json !== false) return errorResponse(err, rid());
  const res = await again(err.message);
  const headers = new Headers(res.headers);
  for (const [k, v] of Object.entries(err.headers ?? {})) headers.set(k, v);
  return new Response(res.body, { status: err.status, headers });
}

