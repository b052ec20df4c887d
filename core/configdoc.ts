// Writes config/example.env from the registry: every core setting and every
// setting a plugin declares, with its default. `bun run config:example`;
// a test fails when the committed file is out of date.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
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
  for (const name of reg.services()) section(name, reg.plugins.get(name)!.def.config ?? {});
  return out.join("\n");
}

if (import.meta.main) {
  const { buildRegistry } = await import("./registry.ts");
  const reg = await buildRegistry({ pluginsDir: join(import.meta.dir, "..", "plugins") });
  writeFileSync(join(import.meta.dir, "..", "config", "example.env"), exampleEnv(reg));
  console.log("wrote config/example.env");
}
