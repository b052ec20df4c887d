import { readFileSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { parseEnv } from "node:util";
import { coreSettings, type Setting } from "../config/defaults.ts";

/**
 * Hearth's own folder: the checkout when run from source, the folder holding
 * the binary when compiled (whose code lives in Bun's virtual /$bunfs). The
 * settings file and the data folder default to places in it, so the server
 * and every CLI command agree on them whatever folder they are started from.
 */
export const hearthHome = /^\/\$bunfs\/|~BUN/.test(import.meta.dir) ? dirname(process.execPath) : resolve(import.meta.dir, "..");

/** A path a setting gives: relative ones are taken from Hearth's folder, not the working folder. */
export const homePath = (p: string) => resolve(hearthHome, p);

/**
 * The variables the process's environment set before the settings file was
 * read (they win over the file): what /settings warns of, since a value saved
 * to the file does not take effect while one of them sets it. Null until
 * the file is read.
 */
export let environmentNames: ReadonlySet<string> | null = null;

/** The settings file: HEARTH_CONFIG, else config/hearth.env in Hearth's folder. */
export const settingsFile = (env: Record<string, string | undefined>) => homePath(env.HEARTH_CONFIG || join("config", "hearth.env"));

/**
 * Reads the settings file into `env`; a variable the environment already has
 * keeps its value. Returns the file read, or null when the default file does
 * not exist. A file HEARTH_CONFIG names must exist.
 */
export function loadSettingsFile(env: Record<string, string | undefined> = process.env): string | null {
  const file = settingsFile(env);
  if (env === process.env) environmentNames = new Set(Object.keys(env).filter((k) => env[k] !== undefined));
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT" && !env.HEARTH_CONFIG) return null;
    throw new Error(`settings file ${file}${env.HEARTH_CONFIG ? " (HEARTH_CONFIG)" : ""}: ${(e as Error).message}`);
  }
  for (const [k, v] of Object.entries(parseEnv(text))) if (env[k] === undefined) env[k] = v;
  return file;
}

/** The data folder of resolved settings: HEARTH_DATA, a relative one taken from Hearth's folder. */
export const dataFolder = (config: Readonly<Record<string, string>>) => homePath(config.HEARTH_DATA || "data");

/** Resolves settings: environment first, then the declared default. */
export function resolveConfig(settings: Record<string, Setting>, env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, s] of Object.entries(settings)) out[k] = env[k] ?? s.default;
  // Undeclared variables stay reachable to plugins that read them by name.
  for (const [k, v] of Object.entries(env)) if (v !== undefined && !(k in out)) out[k] = v;
  // The CLI calls, and the links it prints point at, the server these same settings start.
  if ("HEARTH_URL" in settings && !out.HEARTH_URL) out.HEARTH_URL = localUrl(out);
  return Object.freeze(out) as Record<string, string>;
}

export { coreSettings };

/** Addresses that mean every address of the machine when bound. */
export const WILDCARD_HOSTS = new Set(["0.0.0.0", "::", "[::]", ""]);

/** The server these settings start, as reached from this machine: PORT on loopback, or on HOST when it names one address. */
export function localUrl(config: Readonly<Record<string, string>>): string {
  const host = (config.HOST ?? "").trim();
  const name = WILDCARD_HOSTS.has(host) ? "127.0.0.1" : host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  return `http://${name}:${config.PORT || "8080"}`;
}

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
