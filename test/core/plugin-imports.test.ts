// A built-in plugin is held to a drop-in's rule: every file under plugins/
// imports only the `hearth` module (and its sub-entries, as tsconfig maps
// them), packages, and files of its own folder. So the SDK is proven by the
// plugins Hearth ships, and the core behind it stays free to change. What a
// plugin needs beyond the SDK is a capability it declares in needs (the
// core's, or one another plugin provides), never an import.
import { expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { cyclePath, cycles, importsOf, root, type Edge } from "./imports.ts";
import { pluginViolations } from "./plugin-imports.ts";

test("files under plugins/ import only hearth, packages and their own folder", () => {
  expect(pluginViolations().map((v) => `${v.file} imports ${v.spec}`)).toEqual([]);
});

test("no import cycle inside a plugin, type-only imports aside", () => {
  const files = readdirSync(join(root, "plugins"), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => relative(root, join(e.parentPath, e.name)));
  const edges: Edge[] = files.flatMap(importsOf).filter((e) => e.to.startsWith("plugins/") && e.kind !== "type");
  const found = cycles(files, edges).map((c) => cyclePath(c, edges).join(" -> "));
  expect(found).toEqual([]);
});
