// A server installed with `bun install --production` (no dev tools) starts:
// every package that code reached from `hearth` (core/cli/main.ts) or from a
// built-in plugin imports when it runs, statically, dynamically or by
// require(), is one of package.json's dependencies. Imports that only name
// types are erased before anything runs and need nothing installed.
// (Installing for real would need the registry, which the suite never reaches.)
import { expect, test } from "bun:test";
import { builtinModules } from "node:module";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import pkg from "../../package.json";
import { aliases } from "./imports.ts";

const root = resolve(import.meta.dir, "..", "..");
const runtime = new Bun.Transpiler({ loader: "ts", trimUnusedImports: true });
const builtins = new Set(builtinModules);

/** The package an import names ("@scope/name" or "name"), or null for the project's files and what Bun or Node bring. */
function packageOf(spec: string): string | null {
  if (spec.startsWith(".") || spec.startsWith("/") || spec.startsWith("node:") || spec.startsWith("bun:") || spec === "bun" || builtins.has(spec)) return null;
  const parts = spec.split("/");
  return spec.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

/** Every package imported at run time by the files reached from the entries, with a file that imports it. */
function runtimePackages(entries: string[]): Map<string, string> {
  const seen = new Set<string>();
  const found = new Map<string, string>();
  const todo = [...entries];
  while (todo.length) {
    const file = todo.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    if (!file.endsWith(".ts") && !file.endsWith(".tsx")) continue;
    const text = readFileSync(join(root, file), "utf8").replace(/^#!.*/, "");
    for (const i of runtime.scanImports(text)) {
      // "hearth" and its sub-entries are the project's own files, as tsconfig maps them.
      if (aliases[i.path]) {
        todo.push(relative(root, resolve(root, aliases[i.path])));
        continue;
      }
      const pack = packageOf(i.path);
      if (pack) {
        if (!found.has(pack)) found.set(pack, file);
        continue;
      }
      if (!i.path.startsWith(".")) continue;
      const to = relative(root, resolve(root, dirname(file), i.path));
      if (existsSync(join(root, to))) todo.push(to);
    }
  }
  return found;
}

test("every package the server and the built-in plugins import when they run is a dependency, not a devDependency", () => {
  const plugins = readdirSync(join(root, "plugins")).filter((p) => existsSync(join(root, "plugins", p, "index.ts")));
  expect(plugins.length).toBeGreaterThan(20);
  const used = runtimePackages(["core/cli/main.ts", ...plugins.map((p) => `plugins/${p}/index.ts`)]);
  // The reach is real: the server's own framework and a plugin's parser are among them.
  expect(used.has("elysia")).toBe(true);
  expect(used.has("ical.js")).toBe(true);
  const deps = new Set(Object.keys(pkg.dependencies));
  const missing = [...used].filter(([p]) => !deps.has(p)).map(([p, file]) => `${p} (imported by ${file})${p in pkg.devDependencies ? ": a devDependency" : ""}`);
  expect(missing).toEqual([]);
});

test("the finder sees dynamic imports and require() as well as static ones", () => {
  const found = new Set(runtime.scanImports(`import { a } from "x"; a(); const b = await import("y"); const c = require("z"); import type { T } from "t";`).map((i) => i.path));
  expect([...found].sort()).toEqual(["x", "y", "z"]);
});
