// The import graph of the project's own files, starting from core/: which
// file imports which, split into imports that run (static or dynamic) and
// imports that only name types, with its strongly connected components.
// Value imports are what Bun itself keeps after dropping type-only ones
// (`import type`, `{ type X }`, and names used only as types); type imports
// are every other `import … from`/`export … from`/`import("…")` in the text.
// `bun test/core/imports.ts` prints the measures.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

export const root = resolve(import.meta.dir, "..", "..");

export type EdgeKind = "static" | "dynamic" | "type";
export interface Edge {
  from: string;
  to: string;
  kind: EdgeKind;
}

const runtime = new Bun.Transpiler({ loader: "ts", trimUnusedImports: true });
const ANY_IMPORT = /\b(?:import|export)\s[^;]*?\bfrom\s*["']([^"']+)["']|\bimport\s*\(\s*["']([^"']+)["']\s*\)|^\s*import\s*["']([^"']+)["']/gm;

function tsFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts") && !e.name.endsWith(".d.ts"))
    .map((e) => relative(root, join(e.parentPath, e.name)));
}

// The names tsconfig maps onto project files ("hearth" is core/sdk.ts): an
// import of one is an edge to that file, so a cycle through the SDK is seen.
export const aliases: Record<string, string> = Object.fromEntries(
  Object.entries((JSON.parse(readFileSync(join(root, "tsconfig.json"), "utf8")).compilerOptions.paths ?? {}) as Record<string, string[]>).map(([k, v]) => [k, v[0]]),
);

/** A project file an import names, or null for packages and files outside the project. */
export function target(from: string, spec: string): string | null {
  if (spec in aliases) return relative(root, resolve(root, aliases[spec]));
  if (!spec.startsWith(".")) return null;
  const file = relative(root, resolve(root, dirname(from), spec));
  return file.endsWith(".ts") && !file.startsWith("..") && !file.startsWith("node_modules") && existsSync(join(root, file)) ? file : null;
}

/** Every import edge out of one file. */
export function importsOf(file: string): Edge[] {
  // A shebang line is not TypeScript to the transpiler.
  const text = readFileSync(join(root, file), "utf8").replace(/^#!.*/, "");
  const edges: Edge[] = [];
  const value = new Set<string>();
  for (const i of runtime.scanImports(text)) {
    const to = target(file, i.path);
    if (!to) continue;
    edges.push({ from: file, to, kind: i.kind === "dynamic-import" ? "dynamic" : "static" });
    value.add(to);
  }
  for (const m of text.matchAll(ANY_IMPORT)) {
    const to = target(file, m[1] ?? m[2] ?? m[3]);
    if (to && !value.has(to)) {
      edges.push({ from: file, to, kind: "type" });
      value.add(to);
    }
  }
  return edges;
}

/** The graph of core/ and every project file it reaches (plugins, config), through any import. */
export function importGraph(start = "core"): { files: string[]; edges: Edge[] } {
  const files = new Set(tsFiles(start));
  const edges: Edge[] = [];
  const todo = [...files];
  while (todo.length) {
    const f = todo.pop()!;
    for (const e of importsOf(f)) {
      edges.push(e);
      if (!files.has(e.to)) {
        files.add(e.to);
        todo.push(e.to);
      }
    }
  }
  return { files: [...files].sort(), edges };
}

/** Tarjan's strongly connected components of the graph made by the given edges; only those in a cycle. */
export function cycles(files: string[], edges: Edge[]): string[][] {
  const out = new Map<string, string[]>();
  for (const f of files) out.set(f, []);
  for (const e of edges) out.get(e.from)?.push(e.to);
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  // Iterative, so a long chain of imports cannot overflow the call stack.
  for (const start of files) {
    if (index.has(start)) continue;
    const work: [string, number][] = [[start, 0]];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length) {
      const top = work[work.length - 1];
      const [v, i] = top;
      const succ = out.get(v)!;
      if (i < succ.length) {
        top[1]++;
        const w = succ[i];
        if (!index.has(w)) {
          index.set(w, next);
          low.set(w, next++);
          stack.push(w);
          onStack.add(w);
          work.push([w, 0]);
        } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
        continue;
      }
      work.pop();
      if (work.length) {
        const parent = work[work.length - 1][0];
        low.set(parent, Math.min(low.get(parent)!, low.get(v)!));
      }
      if (low.get(v) === index.get(v)) {
        const scc: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          scc.push(w);
        } while (w !== v);
        if (scc.length > 1 || succ.includes(v)) found.push(scc.sort());
      }
    }
  }
  return found.sort((a, b) => b.length - a.length);
}

/** One path around a cycle, for a message a person can follow: a -> b -> … -> a. */
export function cyclePath(scc: string[], edges: Edge[]): string[] {
  const inside = new Set(scc);
  const out = new Map<string, string[]>();
  for (const e of edges) if (inside.has(e.from) && inside.has(e.to)) out.set(e.from, [...(out.get(e.from) ?? []), e.to]);
  // Breadth-first from the first file back to itself gives the shortest loop through it.
  const start = scc[0];
  const prev = new Map<string, string>();
  const queue = [start];
  while (queue.length) {
    const v = queue.shift()!;
    for (const w of out.get(v) ?? []) {
      if (w === start) {
        const path = [start];
        for (let x: string | undefined = v; x && x !== start; x = prev.get(x)) path.splice(1, 0, x);
        return [...path, start];
      }
      if (!prev.has(w)) {
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  return scc;
}

if (import.meta.main) {
  const { files, edges } = importGraph();
  const core = files.filter((f) => f.startsWith("core/"));
  const inCore = (e: Edge) => e.from.startsWith("core/") && e.to.startsWith("core/");
  const count = (k: EdgeKind) => edges.filter((e) => inCore(e) && e.kind === k).length;
  console.log(`files: ${core.length} in core/ (${files.length} with the plugin and config files core/ imports)`);
  console.log(`edges within core/: ${edges.filter(inCore).length} (static value ${count("static")}, dynamic ${count("dynamic")}, type-only ${count("type")})`);
  const report = (label: string, es: Edge[]) => {
    const sccs = cycles(files, es);
    const biggest = sccs[0] ?? [];
    const inside = new Set(biggest);
    const within = es.filter((e) => inside.has(e.from) && inside.has(e.to));
    console.log(
      `${label}: ${sccs.length} cycle(s), largest ${biggest.length} files (${biggest.filter((f) => f.startsWith("core/")).length} in core/), ` +
        `${within.length} edges inside it (static ${within.filter((e) => e.kind === "static").length}, dynamic ${within.filter((e) => e.kind === "dynamic").length}, type ${within.filter((e) => e.kind === "type").length})`,
    );
    if (biggest.length) console.log(`  e.g. ${cyclePath(biggest, es).join(" -> ")}`);
  };
  report("any import", edges);
  report("value imports (static + dynamic)", edges.filter((e) => e.kind !== "type"));
  report("static value imports", edges.filter((e) => e.kind === "static"));
}
