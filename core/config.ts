import { coreSettings, type Setting } from "../config/defaults.ts";

/** Resolves settings: environment first, then the declared default. */
export function resolveConfig(settings: Record<string, Setting>, env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, s] of Object.entries(settings)) out[k] = env[k] ?? s.default;
  // Undeclared variables stay reachable to plugins that read them by name.
  for (const [k, v] of Object.entries(env)) if (v !== undefined && !(k in out)) out[k] = v;
  return Object.freeze(out) as Record<string, string>;
}

export { coreSettings };
