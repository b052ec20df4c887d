// Reading what a page's form (or a program's JSON) posted, and refusing posts
// that another site's page made the browser send.
import { forbidden, invalid } from "../../errors.ts";
import type { Runtime } from "../../runtime.ts";
import { checkDepth } from "../../validate.ts";
import { readText } from "../body.ts";
import { isForeignOrigin } from "../cors.ts";

const FORM_LIMIT = 64 * 1024;

export interface Posted {
  /** true when the body was JSON (the caller is a program and wants JSON back). */
  json: boolean;
  get(name: string): string | undefined;
  all(name: string): string[];
  /** The raw value, for JSON fields that are not strings (scopes as a list, days as a number). */
  value(name: string): unknown;
}

export async function readPosted(rt: Runtime, req: Request): Promise<Posted> {
  const text = await readText(rt, req, FORM_LIMIT);
  const type = (req.headers.get("content-type") ?? "").toLowerCase();
  if (type.includes("application/json")) {
    let o: unknown = {};
    if (text.trim()) {
      try {
        o = JSON.parse(text);
      } catch (e) {
        throw invalid("body", `the body is not valid JSON: ${(e as Error).message}`);
      }
    }
    if (!o || typeof o !== "object" || Array.isArray(o)) throw invalid("body", "the body must be a JSON object");
    const obj = o as Record<string, unknown>;
    // Fields are read with String(), which recurses into arrays.
    for (const k in obj) checkDepth(obj[k], k);
    return {
      json: true,
      get: (n) => (typeof obj[n] === "string" ? (obj[n] as string) : obj[n] === undefined || obj[n] === null ? undefined : String(obj[n])),
      all: (n) => (Array.isArray(obj[n]) ? (obj[n] as unknown[]).map(String) : obj[n] === undefined ? [] : [String(obj[n])]),
      value: (n) => obj[n],
    };
  }
  const params = new URLSearchParams(type.includes("application/x-www-form-urlencoded") || !type ? text : "");
  return {
    json: false,
    get: (n) => params.get(n) ?? undefined,
    all: (n) => params.getAll(n),
    value: (n) => {
      const v = params.getAll(n);
      return v.length === 0 ? undefined : v.length === 1 ? v[0] : v;
    },
  };
}

/**
 * Browsers name the page that made a POST in Origin; one from another site is
 * refused. This guards the forms that work before a session exists (sign-in,
 * sign-up), where there is no CSRF token yet.
 */
export function requireSameOrigin(req: Request) {
  if (isForeignOrigin(req)) throw forbidden("this form was posted from another site; open the page on this instance and try again");
}

/** A path on this instance to go to after signing in; anything else becomes the fallback. */
export function localPath(raw: string | null | undefined, fallback: string): string {
  if (!raw || !raw.startsWith("/") || raw.startsWith("//") || raw.startsWith("/\\") || /[\r\n]/.test(raw)) return fallback;
  return raw;
}
