// The capability `methods`: what the instance's methods are (kind, access,
// price, arguments), for plugins that describe or check calls to other
// services without making them (an app's in-page calls, say).
import { notFound } from "./errors.ts";
import { defineModule } from "./module.ts";
import type { Runtime } from "./runtime.ts";
import { validateArgs } from "./validate.ts";

export interface MethodInfo {
  /** "<service>/<method>" */
  path: string;
  kind: "read" | "write";
  access: "public" | "account";
  description: string;
  /** Credits per call as listed; null when it depends on the arguments. */
  price: number | null;
  args: string[];
  required: string[];
  withheldFromAgent: boolean;
}

export interface Methods {
  get(path: string): MethodInfo | null;
  list(): MethodInfo[];
  /** The arguments as the method would take them (defaults filled in, query-style strings coerced); a 400 naming the field otherwise. */
  validate(path: string, args: Record<string, unknown>): Record<string, unknown>;
}

declare module "./plugin.ts" {
  interface CapabilityTypes {
    methods: Methods;
  }
}

function makeMethods(rt: Runtime): Methods {
  const info = (path: string): MethodInfo | null => {
    const e = rt.registry.methods.get(path);
    if (!e) return null;
    const p = rt.config.HEARTH_METERING === "off" ? 0 : (e.def.price ?? 0);
    return {
      path: e.path,
      kind: e.def.kind,
      access: e.def.access,
      description: e.def.description,
      price: typeof p === "number" ? p : null,
      args: e.argNames,
      required: e.required,
      withheldFromAgent: !!e.def.withheldFromAgent,
    };
  };
  return {
    get: info,
    list: () => rt.registry.list().map((e) => info(e.path)!),
    validate(path, args) {
      const e = rt.registry.methods.get(path);
      if (!e) throw notFound(`no method "${path}"`);
      return validateArgs(e, args) as Record<string, unknown>;
    },
  };
}

export const methodsModule = defineModule({ name: "methods", provides: { capabilities: { methods: (s) => makeMethods(s.rt) } } });
