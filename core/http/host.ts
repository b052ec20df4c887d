// Refusing Host names the instance was not set up for. A page on a name the
// attacker controls can point that name at 127.0.0.1 (DNS rebinding) and then
// talk to a server on the visitor's machine as if it were its own origin;
// such requests still carry the attacker's name in Host. So when the instance
// listens on loopback, or knows its public name, only those names are
// answered. An address written as an IP is always answered: rebinding needs a name.
import { isIP } from "node:net";
import { forbidden } from "../errors.ts";
import type { Runtime } from "../runtime.ts";
import { errorResponse } from "./respond.ts";

const LOOPBACK = new Set(["localhost", "127.0.0.1", "::1", "[::1]"]);

/** The name in a Host header, lowercase, without port, brackets or a final dot. */
export function hostName(host: string): string {
  let h = host.trim().toLowerCase();
  if (h.startsWith("[")) {
    const end = h.indexOf("]");
    return end < 0 ? h : h.slice(1, end);
  }
  const colon = h.lastIndexOf(":");
  if (colon >= 0 && /^\d*$/.test(h.slice(colon + 1))) h = h.slice(0, colon);
  return h.endsWith(".") ? h.slice(0, -1) : h;
}

function allowedNames(rt: Runtime, listening: string): Set<string> | null {
  const names = new Set<string>(["localhost"]);
  let checked = LOOPBACK.has(listening) || listening.startsWith("127.");
  const pub = rt.config.HEARTH_PUBLIC_URL;
  if (pub) {
    try {
      names.add(hostName(new URL(pub).host));
      checked = true;
    } catch {}
  }
  for (const raw of (rt.config.HEARTH_ALLOWED_HOSTS ?? "").split(",")) {
    const n = raw.trim();
    if (n === "*") return null;
    if (n) {
      names.add(hostName(n));
      checked = true;
    }
  }
  return checked ? names : null;
}

/**
 * The check for one server: null when there is nothing to check (listening on
 * every interface with no public URL or allowed names set), else a function
 * that answers 403 for a Host outside the allowed names and null otherwise.
 */
export function hostGuard(rt: Runtime, listening: string): ((req: Request) => Response | null) | null {
  const names = allowedNames(rt, listening.toLowerCase());
  if (!names) return null;
  const verdicts = new Map<string, boolean>();
  const allowed = (host: string) => {
    let ok = verdicts.get(host);
    if (ok === undefined) {
      const name = hostName(host);
      ok = names.has(name) || isIP(name) !== 0 || name.endsWith(".localhost");
      if (verdicts.size >= 256) verdicts.clear();
      verdicts.set(host, ok);
    }
    return ok;
  };
  return (req) => {
    const host = req.headers.get("host");
    if (host === null || allowed(host)) return null;
    const name = hostName(host).slice(0, 255);
    return errorResponse(
      forbidden(`this instance does not answer to the name "${name}": open it at its own address, or add the name to HEARTH_ALLOWED_HOSTS`),
      crypto.randomUUID(),
    );
  };
}
