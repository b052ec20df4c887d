// Helpers for the identity tests: sign up or in over the real HTTP routes and
// keep the session cookie and CSRF token a browser would hold.
import { join } from "node:path";
import type { Hearth } from "../harness.ts";

export const GUESTBOOK = join(import.meta.dir, "fixtures");

export interface Signed {
  cookie: string;
  csrf: string;
  setCookie: string;
}

export async function post(h: Hearth, path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(h.url + path, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body), redirect: "manual" });
  const text = await res.text();
  let json: any = text;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, body: json, headers: res.headers };
}

export async function get(h: Hearth, path: string, headers: Record<string, string> = {}) {
  const res = await fetch(h.url + path, { headers, redirect: "manual" });
  const text = await res.text();
  let json: any = text;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, body: json, headers: res.headers, text };
}

/** Posts a form the way a browser does (urlencoded, same Origin). */
export async function form(h: Hearth, path: string, fields: [string, string][], headers: Record<string, string> = {}) {
  const res = await fetch(h.url + path, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: h.url, accept: "text/html", ...headers },
    body: new URLSearchParams(fields).toString(),
    redirect: "manual",
  });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

function signed(r: { status: number; body: any; headers: Headers }): Signed {
  if (r.status !== 200) throw new Error(`sign-in failed: ${r.status} ${JSON.stringify(r.body)}`);
  const setCookie = r.headers.get("set-cookie") ?? "";
  return { cookie: setCookie.split(";")[0], csrf: r.body.result.csrf, setCookie };
}

export async function signUp(h: Hearth, username: string, password = "a long passphrase", extra: Record<string, string> = {}): Promise<Signed> {
  return signed(await post(h, "/signup", { username, password, ...extra }));
}

export async function signIn(h: Hearth, username: string, password = "a long passphrase"): Promise<Signed> {
  return signed(await post(h, "/signin", { username, password }));
}
