// Writes config/example.env from the registry: every core setting and every
// setting a plugin declares, with its default. `bun run config:example`;
// a test fails when the committed file is out of date. With HEARTH_PLUGINS
// set, the drop-ins it names are listed too, after the built-in plugins
// (`HEARTH_PLUGINS=/path/to/bookmarks bun run config:example`); a path
// after the command writes there instead (`bun run config:example my.env`).
import { writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { coreSettings } from "../config/defaults.ts";
import type { Registry } from "./registry.ts";

export function exampleEnv(reg: Registry): string {
  const out = [
    "# Hearth settings. Every variable is optional; the value shown is the default.",
    "# Copy the lines you change into config/hearth.env (or the file HEARTH_CONFIG names);",
    "# a variable set in the environment wins over that file.",
    "# Generated from the registry by `bun run config:example`.",
    "",
  ];
  const section = (title: string, settings: Record<string, { default: string; description: string }>) => {
    const keys = Object.keys(settings);
    if (!keys.length) return;
    out.push(`# --- ${title} ---`);
    for (const k of keys) out.push(`# ${settings[k].description}`, `${settings[k].default === "" ? "# " : ""}${k}=${settings[k].default}`, "");
  };
  section("core", coreSettings);
  const plugins = reg.services().map((name) => reg.plugins.get(name)!);
  for (const p of plugins) if (p.builtin) section(p.def.name, p.def.config ?? {});
  for (const p of plugins) if (!p.builtin) section(`${p.def.name} (drop-in: ${dirname(p.file)})`, p.def.config ?? {});
  return out.join("\n");
}

if (import.meta.main) {
  const { buildRegistry } = await import("./registry.ts");
  const reg = await buildRegistry({ pluginsDir: join(import.meta.dir, "..", "plugins"), extra: process.env.HEARTH_PLUGINS });
  const file = process.argv[2] ? resolve(process.argv[2]) : join(import.meta.dir, "..", "config", "example.env");
  writeFileSync(file, exampleEnv(reg));
  console.log(`wrote ${file}`);
}
