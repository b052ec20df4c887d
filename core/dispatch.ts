// The one call path. HTTP, MCP, the CLI, in-page app calls, event prompts and
// the agent all come through here: identify -> scope -> price -> validate -> run.
import { HearthError, unauthenticated } from "./errors.ts";
import { assertScope } from "./auth/tokens.ts";
import type { Caller } from "./plugin.ts";
import type { MethodEntry } from "./registry.ts";
import type { Runtime } from "./runtime.ts";
import { validateArgs } from "./validate.ts";

export interface CallInput {
  service: string;
  method: string;
  args: Record<string, unknown>;
  caller: Caller;
  requestId: string;
  /** The HTTP verb, when the call came over HTTP: GET may not reach a write. */
  verb?: string;
  baseUrl?: string;
}

export function lookup(rt: Runtime, service: string, method: string): MethodEntry {
  const entry = rt.registry.get(service, method);
  if (entry) return entry;
  if (!rt.registry.plugins.has(service)) throw new HearthError("not_found", `no service "${service}"`);
  throw new HearthError("not_found", `no method "${method}" in ${service} (it has: ${rt.registry.plugins.get(service)!.methods.map((m) => m.name).join(", ")})`);
}

export function priceOf(entry: MethodEntry, args: Record<string, unknown>, rt: Runtime, caller: Caller): number {
  const p = entry.def.price ?? 0;
  if (typeof p === "number") return p;
  return p(args, rt.makeCtx(entry.service, "read", caller, "price", entry.name, ""));
}

export async function dispatch(rt: Runtime, input: CallInput): Promise<unknown> {
  const entry = lookup(rt, input.service, input.method);
  const def = entry.def;
  if (input.verb === "GET" && def.kind === "write")
    throw new HearthError("method_not_allowed", `${entry.path} changes something: call it with POST and a JSON body`, { headers: { Allow: "POST" } });

  const caller = input.caller;
  if (def.access === "account" && !caller.account) {
    if (caller.via === "payment") throw new HearthError("forbidden", `${entry.path} needs an account; a payment alone cannot call it`);
    throw unauthenticated(`${entry.path} needs an account: send "Authorization: Bearer <token>"`);
  }
  if (caller.agent && def.withheldFromAgent) throw new HearthError("forbidden", `${entry.path} is withheld from the agent: only a person or a program may call it`);
  if (caller.account || caller.via === "token" || caller.via === "session") assertScope(caller, entry.service);

  const args = validateArgs(entry, input.args);

  const price = rt.config.HEARTH_METERING === "off" ? 0 : rt.metering?.price ? rt.metering.price(entry, args, caller) : priceOf(entry, args, rt, caller);
  let plan: unknown = null;
  if (price > 0) {
    if (rt.metering) plan = await rt.metering.before({ rt, entry, args, caller, price, baseUrl: input.baseUrl });
    else if (!caller.account) throw unauthenticated(`${entry.path} costs ${price} credit(s) per call: send a token`);
  }

  const inWrite = rt.store.inWrite();
  const kind = def.kind === "write" || inWrite ? "write" : "read";
  const m = rt.metering;
  const run = async (charge: boolean) => {
    const ctx = rt.makeCtx(entry.service, kind, caller, input.requestId, entry.name, input.baseUrl ?? "");
    if (plan !== null) ctx.price = price;
    const out = await def.run(args, ctx);
    if (charge && plan !== null) {
      await m?.settle?.(plan, input.requestId);
      await m?.commit?.(plan, input.requestId);
    }
    return out === undefined ? null : out;
  };
  try {
    if (def.kind === "write" && def.transaction !== false && !inWrite) return await rt.store.write(() => run(true));
    if (plan !== null && !inWrite) {
      // A read holds no lock while it works (a provider may take seconds); its
      // payment settles after it, and its charge is one short transaction.
      const out = await run(false);
      await m?.settle?.(plan, input.requestId);
      await rt.store.write(() => m?.commit?.(plan, input.requestId));
      return out;
    }
    return await run(true);
  } catch (e) {
    if (plan !== null) rt.metering?.release?.(plan);
    throw e;
  }
}
