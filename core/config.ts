import { readFileSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
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

/**
 * A JSON list a setting may point at: the file it names (relative to the
 * working folder), or the copy shipped in config/ (imported by the caller, so
 * the single binary carries it) when the setting is empty.
 */
export function settingJson(value: string | undefined, shipped: { name: string; data: unknown }, what: string): { file: string; data: unknown } {
  if (!value) return { file: shipped.name, data: shipped.data };
  const file = isAbsolute(value) ? value : resolve(value);
  let data = readJson.get(file);
  if (data === undefined) {
    try {
      data = JSON.parse(readFileSync(file, "utf8")) as unknown;
    } catch (e) {
      throw new Error(`${what} ${file}: ${(e as Error).message}`);
    }
    readJson.set(file, data);
  }
  return { file, data };
}
const readJson = new Map<string, unknown>();
