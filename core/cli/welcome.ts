// What `hearth serve` tells the owner once it listens: every address it
// answers at, where to go next, where its data and settings are, and what
// still needs settings (one line, with the details on /status), rather than
// a warning per unset provider.
import { eq } from "drizzle-orm";
import { networkInterfaces } from "node:os";
import { hasAccounts, lockedOutAdmin } from "../auth/people.ts";
import { WILDCARD_HOSTS } from "../config.ts";
import { accounts } from "../db/schema.ts";
import { unconfigured } from "../http/pages/status.ts";
import type { Runtime } from "../runtime.ts";
import { sandboxOrigin } from "../http/sandbox.ts";

const NAMED = 5;

/**
 * The addresses a server bound to `hostname` answers at: that one, or, bound
 * to every address, each of the machine's (loopback first; IPv6 ones only
 * when bound to ::, and not link-local ones, which need a zone to be reached).
 */
export function addressesOf(hostname: string, port: number | string): string[] {
  const at = (a: string) => `http://${a.includes(":") ? `[${a}]` : a}:${port}`;
  if (!WILDCARD_HOSTS.has(hostname)) return [at(hostname.replace(/^\[|\]$/g, ""))];
  const v6 = hostname !== "0.0.0.0";
  const found = Object.values(networkInterfaces())
    .flat()
    .filter((a) => !!a && (a.family === "IPv4" || (v6 && a.family === "IPv6" && !/^fe[89ab]/i.test(a.address))))
    .map((a) => a!)
    .sort((a, b) => Number(b.internal) - Number(a.internal) || Number(a.family === "IPv6") - Number(b.family === "IPv6"));
  const urls = [...new Set(found.map((a) => at(a.address)))];
  return urls.length ? urls : [at("127.0.0.1")];
}

export async function welcomeLines(rt: Runtime, url: string, settings: { file: string; read: boolean }): Promise<string[]> {
  const local = addressesOf(rt.config.HOST, new URL(url).port);
  const base = (rt.config.HEARTH_PUBLIC_URL || local[0] || url).replace(/\/+$/, "");
  const others = local.filter((u) => u !== base);
  const lines: string[] = [];
  if (!(await hasAccounts(rt.store))) lines.push(`Hearth is running: open ${base}/signup to create the admin account`);
  else if (!(await rt.store.rdb.select({ id: accounts.id }).from(accounts).where(eq(accounts.admin, true)).limit(1).get()))
    lines.push(`Hearth is running at ${base}; no account is an admin yet: make one with hearth password --user NAME --admin`);
  else {
    const locked = await lockedOutAdmin(rt.store);
    lines.push(
      locked
        ? `Hearth is running at ${base}; its admin, ${locked.username}, has no password yet: run hearth password --user ${locked.username} --link and open the link it prints`
        : `Hearth is running at ${base}`,
    );
  }
  if (others.length) lines.push(`Also at ${others.join(", ")}`);
  const sandbox = sandboxOrigin(rt, base);
  if (sandbox) lines.push(`Pages others wrote are served apart, in an origin of their own, at ${sandbox} (HEARTH_SANDBOX_PORT)`);
  lines.push(`Data in ${rt.dataDir}; settings ${settings.read ? `from ${settings.file}` : `file ${settings.file} (none yet: defaults and the environment)`}`);
  const missing = unconfigured(rt).map((c) => c.name);
  if (missing.length)
    lines.push(`${missing.length} integrations and providers need settings (${missing.slice(0, NAMED).join(", ")}${missing.length > NAMED ? ", …" : ""}): see ${base}/status`);
  return lines;
}
