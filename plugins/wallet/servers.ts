// Priced servers the wallet may pay, from WALLET_SERVERS ("name=https://host,other=https://...").
// This instance is always one, named "this".
import { invalid } from "hearth";

export const SELF = "this";

export interface Server {
  name: string;
  /** Base URL of an x402 HTTP server; null for this instance, paid in-process. */
  url: string | null;
}

export function serversOf(config: Readonly<Record<string, string>>): Server[] {
  const out: Server[] = [{ name: SELF, url: null }];
  for (const part of (config.WALLET_SERVERS ?? "").split(",").map((s) => s.trim()).filter(Boolean)) {
    const eq = part.indexOf("=");
    const name = eq > 0 ? part.slice(0, eq).trim() : "";
    const url = eq > 0 ? part.slice(eq + 1).trim().replace(/\/+$/, "") : "";
    if (!/^[a-z0-9][a-z0-9_-]*$/.test(name) || !/^https?:\/\//.test(url) || name === SELF) continue;
    out.push({ name, url });
  }
  return out;
}

export function serverNamed(config: Readonly<Record<string, string>>, name: string): Server {
  const all = serversOf(config);
  const s = all.find((x) => x.name === name);
  if (!s) throw invalid("server", `no server "${name}" in the wallet's list (it has: ${all.map((x) => x.name).join(", ")})`);
  return s;
}
