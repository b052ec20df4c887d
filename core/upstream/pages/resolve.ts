// Name lookups for fetching a page: the system's resolver, or the DNS
// servers WEB_FETCH_DNS names. A failed lookup is the outside world's
// failure, never the caller's: a name DNS says does not exist is 502, DNS
// that cannot be asked (no answer, refused, a server failure) is 503; both
// may be tried again.
import { lookup as systemLookup, promises as dns, type LookupAddress } from "node:dns";
import { HearthError, upstream } from "../../errors.ts";

/** Codes that mean DNS answered: there is no such name, or it has no address. */
const NO_SUCH_NAME = new Set(["ENOTFOUND", "EAI_NONAME", "ENODATA", "EAI_NODATA", "ENONAME"]);

/** A lookup that failed, carried through the socket's error to where the call's answer is made. */
export class LookupFailed extends Error {
  constructor(
    readonly host: string,
    readonly code: string | undefined,
  ) {
    super(`lookup of ${host} failed (${code ?? "unknown"})`);
  }

  answer(): HearthError {
    if (this.code && NO_SUCH_NAME.has(this.code)) return upstream("upstream_failed", `${this.host} does not resolve to any address: DNS has no such name`);
    return upstream("upstream_unavailable", `${this.host} could not be looked up: DNS did not answer (${this.code ?? "no reason given"})`);
  }
}

/** The servers of a comma-separated setting (host or host:port). */
export function dnsServers(raw: string | undefined): string[] {
  return (raw ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

export type Resolve = (host: string, family: number) => Promise<LookupAddress[]>;

const resolvers = new Map<string, Resolve>();

const system: Resolve = (host, family) =>
  new Promise((resolve, reject) => systemLookup(host, { all: true, family }, (err, addresses) => (err ? reject(err) : resolve(addresses))));

/**
 * Every address of a name, from the given servers or, with none, the
 * system's resolver. Servers that do not answer are given up on within half
 * the fetch's time, so the answer says DNS failed rather than timing out.
 */
export function resolverFor(servers: string[], timeoutMs: number): Resolve {
  if (!servers.length) return system;
  // Two tries when each still gets a second (the resolver counts in whole seconds), else one.
  const half = Math.max(100, Math.floor(timeoutMs / 2));
  const tries = half >= 2000 ? 2 : 1;
  const perTry = Math.floor(half / tries);
  const key = `${servers.join(",")} ${perTry} ${tries}`;
  let r = resolvers.get(key);
  if (!r) {
    const res = new dns.Resolver({ timeout: perTry, tries });
    res.setServers(servers);
    r = async (host, family) => {
      const asked = await Promise.allSettled([
        family === 6 ? Promise.resolve([]) : res.resolve4(host).then((a) => a.map((address) => ({ address, family: 4 }))),
        family === 4 ? Promise.resolve([]) : res.resolve6(host).then((a) => a.map((address) => ({ address, family: 6 }))),
      ]);
      const found = asked.flatMap((a) => (a.status === "fulfilled" ? a.value : []));
      if (found.length) return found;
      const errors = asked.flatMap((a) => (a.status === "rejected" ? [a.reason as NodeJS.ErrnoException] : []));
      // The name exists nowhere only when every question said so; any other failure is DNS's.
      throw errors.find((e) => !NO_SUCH_NAME.has(e.code ?? "")) ?? errors[0] ?? Object.assign(new Error(`no address for ${host}`), { code: "ENODATA" });
    };
    resolvers.set(key, r);
  }
  return r;
}
