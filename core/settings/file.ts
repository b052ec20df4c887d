// Writing the settings file (config/hearth.env, or HEARTH_CONFIG) from the
// browser: only the lines of the settings changed are touched, so comments,
// blank lines and variables Hearth does not know stay as the owner left them;
// the new text is written beside the file and renamed over it, so a crash or
// a full disk leaves the old file whole, never half of each.
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { parseEnv } from "node:util";
import { invalid } from "../errors.ts";

/** A line that sets NAME (optionally after `export`), as parseEnv reads it. */
const setter = (name: string) => new RegExp(`^\\s*(?:export\\s+)?${name}\\s*=`);

/**
 * A value as one line of the file that parseEnv reads back unchanged: bare
 * when it can be, else in the first quotes it does not contain. A value
 * with a line break, or with every kind of quote, cannot be written.
 */
export function envValue(name: string, value: string): string {
  if (/[\r\n\0]/.test(value)) throw invalid(name, "a setting is one line: remove the line break");
  if (/^[^\s#"'`\\]*$/.test(value)) return value;
  for (const q of ["'", '"', "`"]) {
    if (value.includes(q)) continue;
    const line = `${q}${value}${q}`;
    if (parseEnv(`X=${line}`).X === value) return line;
  }
  throw invalid(name, "a value may not hold single, double and back quotes all at once");
}

/** The settings file's text with `changes` applied: a value sets the variable, null removes its line. */
export function editSettings(text: string, changes: Record<string, string | null>): string {
  const lines = text === "" ? [] : text.replace(/\n$/, "").split("\n");
  const left = new Map(Object.entries(changes));
  const out: string[] = [];
  for (const line of lines) {
    const name = Object.keys(changes).find((k) => setter(k).test(line));
    if (!name) {
      out.push(line);
      continue;
    }
    // The first line setting a name takes the new value; a later repeat of it (which parseEnv would let win) goes.
    if (!left.has(name)) continue;
    const v = left.get(name)!;
    left.delete(name);
    if (v !== null) out.push(`${name}=${envValue(name, v)}`);
  }
  const added = [...left].filter(([, v]) => v !== null);
  if (added.length && out.length && out.at(-1) !== "") out.push("");
  for (const [k, v] of added) out.push(`${k}=${envValue(k, v!)}`);
  return out.length ? `${out.join("\n")}\n` : "";
}

/** The file's text, or "" when it does not exist yet. */
export function readSettingsText(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return "";
    throw e;
  }
}

/**
 * Applies `changes` to the settings file at once: the whole new text goes to
 * a temporary file in the same folder, is flushed to disk, and replaces the
 * old one by rename. The file may hold secrets, so it is made readable by
 * its owner only. Returns the values the file now sets.
 */
export function writeSettings(file: string, changes: Record<string, string | null>): Record<string, string> {
  const text = editSettings(readSettingsText(file), changes);
  mkdirSync(dirname(file), { recursive: true });
  const temp = join(dirname(file), `.${basename(file)}.${process.pid}.${crypto.randomUUID().slice(0, 8)}.tmp`);
  try {
    const fd = openSync(temp, "w", 0o600);
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, file);
  } catch (e) {
    rmSync(temp, { force: true });
    throw e;
  }
  return parseEnv(text) as Record<string, string>;
}
