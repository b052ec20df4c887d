// core/ has no import cycle: a file's imports that run (static or dynamic)
// never lead back to it, so no module sees another half-evaluated and the
// order files are imported in changes nothing. Imports that only name types
// are erased before anything runs and are left aside.
import { expect, test } from "bun:test";
import { cyclePath, cycles, importGraph, type Edge } from "./imports.ts";

test("no import cycle through core/, type-only imports aside", () => {
  const { files, edges } = importGraph("core");
  const value = edges.filter((e) => e.kind !== "type");
  expect(value.length).toBeGreaterThan(100);
  const found = cycles(files, value).filter((c) => c.some((f) => f.startsWith("core/")));
  const shown = found.map((c) => `${c.length} files in a cycle (${c.join(", ")}), e.g. ${cyclePath(c, value).join(" -> ")}`);
  expect(shown).toEqual([]);
});

test("the cycle finder names every file of a cycle and leaves the rest out", () => {
  const e = (from: string, to: string, kind: Edge["kind"] = "static"): Edge => ({ from, to, kind });
  const files = ["a", "b", "c", "d", "e"];
  const edges = [e("a", "b"), e("b", "c"), e("c", "a", "dynamic"), e("c", "d"), e("d", "e"), e("e", "e")];
  expect(cycles(files, edges)).toEqual([["a", "b", "c"], ["e"]]);
  expect(cyclePath(["a", "b", "c"], edges)).toEqual(["a", "b", "c", "a"]);
  expect(cycles(files, edges.filter((x) => x.kind !== "dynamic"))).toEqual([["e"]]);
});
