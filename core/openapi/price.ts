// The price a method is listed at, as every surface states it: the instance's
// override, the declared number, or null when it depends on the arguments.
import type { MethodEntry } from "../registry.ts";
import type { Runtime } from "../runtime.ts";

interface Listing {
  prices?: { listed(entry: MethodEntry): number | null };
}

export function listedPrice(rt: Runtime, entry: MethodEntry): number | null {
  if (rt.config.HEARTH_METERING === "off") return 0;
  const prices = (rt.metering as Listing | null)?.prices;
  if (prices) return prices.listed(entry);
  const p = entry.def.price ?? 0;
  return typeof p === "number" ? p : null;
}

