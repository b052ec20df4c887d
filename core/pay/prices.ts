// Prices: each method declares its own; an instance may override any of them
// from a JSON file ({"service/method": credits}), and HEARTH_METERING=off makes
// everything free. Every listing of prices is derived from the registry here.
import { existsSync, readFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { priceOf } from "../dispatch.ts";
import type { Caller } from "../plugin.ts";
import type { MethodEntry, Registry } from "../registry.ts";
import type { Runtime } from "../runtime.ts";
import { mapAnswer } from "../answer.ts";
import { classList } from "../mcp/tools.ts";
import { accountMetering, metersAccount, type AccountMetering } from "./accounts.ts";

export const DEFAULT_PRICES_FILE = join(import.meta.dir, "..", "..", "config", "prices.json");

export class PriceFileError extends Error {}

/** Reads an overrides file; a bad entry stops the start with the file and key named. */
export function readOverrides(file: string, registry: Registry): Map<string, number> {
  const out = new Map<string, number>();
  if (!existsSync(file)) return out;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, "utf8"));
  } catch (e) {
    throw new PriceFileError(`price overrides ${file}: not valid JSON: ${(e as Error).message}`);
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new PriceFileError(`price overrides ${file}: must be an object of "service/method": credits`);
  for (const [key, value] of Object.entries(parsed as Record<string, unknown>)) {
    if (key.startsWith("$")) continue;
    if (!/^[a-z][a-z0-9]*\/[a-z][a-z0-9_]*$/.test(key)) throw new PriceFileError(`price overrides ${file}: "${key}" is not a "service/method" name`);
    if (typeof value !== "number" || !Number.isInteger(value) || value < 0)
      throw new PriceFileError(`price overrides ${file}: "${key}" must be a whole number of credits, 0 or more (got ${JSON.stringify(value)})`);
    // A method from a plugin this instance does not load is allowed: the file may serve several instances.
    if (registry.methods.has(key)) out.set(key, value);
  }
  return out;
}

export function overridesFile(rt: Runtime): string {
  const f = rt.config.HEARTH_PRICES;
  if (!f) return DEFAULT_PRICES_FILE;
  return isAbsolute(f) ? f : resolve(f);
}

export class Prices {
  /** HEARTH_METER_ACCOUNTS, read once so a bad value stops the start. */
  readonly accounts: AccountMetering;

  constructor(
    private rt: Runtime,
    readonly overrides: Map<string, number>,
  ) {
    this.accounts = accountMetering(rt.config);
  }

  get metered(): boolean {
    return this.rt.config.HEARTH_METERING !== "off";
  }

  /** Credits this call costs: nothing for an account that is not metered. */
  of(entry: MethodEntry, args: Record<string, unknown>, caller: Caller): number | Promise<number> {
    if (!this.metered) return 0;
    const price = this.overrides.get(entry.path) ?? priceOf(entry, args, this.rt, caller);
    return price instanceof Promise ? price.then((p) => this.forCaller(p, caller)) : this.forCaller(price, caller);
  }

  /** Only a priced call by an account waits on whether that account is metered. */
  private forCaller(price: number, caller: Caller): number | Promise<number> {
    if (price > 0 && caller.account) return mapAnswer(metersAccount(this.rt.store.rdb, this.accounts, caller.account), (metered) => (metered ? price : 0));
    return price;
  }

  /** The listed price: a number, or null when it depends on the arguments. */
  listed(entry: MethodEntry): number | null {
    if (!this.metered) return 0;
    const o = this.overrides.get(entry.path);
    if (o !== undefined) return o;
    const p = entry.def.price ?? 0;
    return typeof p === "number" ? p : null;
  }

  /** The price list, as GET /api/v1/prices serves it. */
  list() {
    return {
      metered: this.metered,
      credit_usd: 0.01,
      methods: this.rt.registry.list().map((e) => {
        const credits = this.listed(e);
        return {
          method: e.path,
          tool: e.tool,
          access: e.def.access,
          kind: e.def.kind,
          classes: classList(e),
          credits,
          ...(credits === null ? { varies: "depends on the arguments; the price is stated when the call is refused for payment" } : { usd: credits / 100 }),
        };
      }),
    };
  }
}
