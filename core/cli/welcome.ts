// What `hearth serve` tells the owner once it listens: where to go next, where
// its data and settings are, and what still needs settings (one line, with
// the details on /status), rather than a warning per unset provider.
import { eq } from "drizzle-orm";
import { hasAccounts } from "../auth/people.ts";
import { accounts } from "../db/schema.ts";
import { unconfigured } from "../http/pages/status.ts";
import type { Runtime } from "../runtime.ts";

const NAMED = 5;

export async function welcomeLines(rt: Runtime, url: string, settings: { file: string; read: boolean }): Promise<string[]> {
  const base = (rt.config.HEARTH_PUBLIC_URL || url).replace(/\/+$/, "");
  const lines: string[] = [];
  if (!(await hasAccounts(rt.store))) lines.push(`Hearth is running: open ${base}/signup to create the admin account`);
  else if (!(await rt.store.rdb.select({ id: accounts.id }).from(accounts).where(eq(accounts.admin, true)).limit(1).get()))
    lines.push(`Hearth is running at ${base}; no account is an admin yet: make one with hearth password --user NAME --admin`);
  else lines.push(`Hearth is running at ${base}`);
  lines.push(`Data in ${rt.dataDir}; settings ${settings.read ? `from ${settings.file}` : `file ${settings.file} (none yet: defaults and the environment)`}`);
  const missing = unconfigured(rt).map((c) => c.name);
  if (missing.length)
    lines.push(`${missing.length} integrations and providers need settings (${missing.slice(0, NAMED).join(", ")}${missing.length > NAMED ? ", …" : ""}): see ${base}/status`);
  return lines;
}
