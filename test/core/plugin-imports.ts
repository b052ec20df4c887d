// Which imports of files under plugins/ reach past the plugin's own folder to
// anything but `hearth`, its sub-entries and packages. `bun test/core/plugin-imports.ts`
// prints them, counted by the core file or plugin they reach.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { root } from "./imports.ts";

export interface Violation {
  /** The importing file, from the project's root. */
  file: string;
  /** The import as written. */
  spec: string;
  /** The file it names, from the project's root. */
  to: string;
}

const paths = Object.keys(JSON.parse(readFileSync(join(root, "tsconfig.json"), "utf8")).compilerOptions.paths ?? {});
const sdk = (spec: string) => paths.includes(spec) && spec !== "hearth/testing";
const scanner = new Bun.Transpiler({ loader: "ts" });
const ANY = /\b(?:import|export)\s[^;]*?\bfrom\s*["']([^"']+)["']|\bimport\s*\(\s*["']([^"']+)["']\s*\)|^\s*import\s*["']([^"']+)["']/gm;

/** Every import specifier in a file: those that run and those naming only types. */
function specifiers(text: string): string[] {
  const found = new Set(scanner.scanImports(text).map((i) => i.path));
  for (const m of text.matchAll(ANY)) found.add(m[1] ?? m[2] ?? m[3]);
  return [...found];
}

export function pluginFiles(): string[] {
  return readdirSync(join(root, "plugins"), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ts|tsx|js)$/.test(e.name) && !e.name.endsWith(".d.ts"))
    .map((e) => relative(root, join(e.parentPath, e.name)))
    .sort();
}

export function pluginViolations(): Violation[] {
  const out: Violation[] = [];
  for (const file of pluginFiles()) {
    const own = file.split("/").slice(0, 2).join("/") + "/";
    const text = readFileSync(join(root, file), "utf8").replace(/^#!.*/, "");
    for (const spec of specifiers(text)) {
      if (sdk(spec)) continue;
      if (!spec.startsWith(".") && !spec.startsWith("/")) {
        // A package: third-party, or Bun's and Node's own.
        if (spec !== "hearth/testing" && !spec.startsWith("hearth")) continue;
        out.push({ file, spec, to: spec });
        continue;
      }
      const to = relative(root, resolve(root, dirname(file), spec));
      if (to.startsWith(own)) continue;
      out.push({ file, spec, to: existsSync(join(root, to)) ? to : spec });
    }
  }
  return out;
}

if (import.meta.main) {
  const found = pluginViolations();
  const by = new Map<string, number>();
  for (const v of found) by.set(v.to, (by.get(v.to) ?? 0) + 1);
  const files = new Set(found.map((v) => v.file));
  const imports = pluginFiles().flatMap((f) => specifiers(readFileSync(join(root, f), "utf8")).filter(sdk).map(() => f));
  console.log(`plugin files: ${pluginFiles().length}; importing the SDK: ${new Set(imports).size}`);
  console.log(`imports past the SDK: ${found.length}, from ${files.size} files, reaching ${by.size} files (${[...by.keys()].filter((k) => k.startsWith("core/")).length} in core/)`);
  for (const [to, n] of [...by].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))) console.log(`  ${String(n).padStart(3)} ${to}`);
  if (process.argv.includes("--list")) {
    const list: Record<string, string[]> = {};
    for (const v of found) (list[v.file] ??= []).push(v.to);
    console.log(JSON.stringify(list, null, 2));
  }
}
