// A built-in plugin is held to a drop-in's rule: every file under plugins/
// imports only the `hearth` module (and its sub-entries, as tsconfig maps
// them), packages, and files of its own folder. So the SDK is proven by the
// plugins Hearth ships, and the core behind it stays free to change. Files
// still reaching past it are listed in plugin-imports-allowed.ts, which may
// only shrink: a listed import that is gone fails here until its line is.
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { cyclePath, cycles, importsOf, root, type Edge } from "./imports.ts";
import { allowed } from "./plugin-imports-allowed.ts";
import { pluginViolations } from "./plugin-imports.ts";

test("files under plugins/ import only hearth, packages and their own folder", () => {
  const found = pluginViolations();
  const unlisted = found.filter((v) => !allowed[v.file]?.includes(v.to)).map((v) => `${v.file} imports ${v.spec}`);
  expect(unlisted).toEqual([]);
});

test("the list of files still allowed an outside import names only imports still there", () => {
  const found = new Set(pluginViolations().map((v) => `${v.file} -> ${v.to}`));
  const stale = Object.entries(allowed).flatMap(([file, tos]) => tos.filter((to) => !found.has(`${file} -> ${to}`)).map((to) => `${file} -> ${to}`));
  expect(stale).toEqual([]);
});

test("no import cycle inside a plugin, type-only imports aside", () => {
  const files = readdirSync(join(root, "plugins"), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => relative(root, join(e.parentPath, e.name)));
  const edges: Edge[] = files.flatMap(importsOf).filter((e) => e.to.startsWith("plugins/") && e.kind !== "type");
  const found = cycles(files, edges).map((c) => cyclePath(c, edges).join(" -> "));
  expect(found).toEqual([]);
});
