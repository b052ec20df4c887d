// Holds the registry to the published API: every method that exists must
// match methods.json (verb, required arguments, no argument the spec lacks).
import { expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { buildRegistry } from "../../core/registry.ts";

const specFile = join(import.meta.dir, "../../../shared/spec/methods.json");
interface SpecMethod {
  service: string;
  method: string;
  verb: "GET" | "POST";
  args: { name: string; required: boolean }[];
}

// Optional arguments beyond the spec, which no caller of the spec sends (so
// its answers are unchanged): what the person's screens need to edit what
// they show. Each is described in README's "Additions to the spec".
// The lists that would otherwise answer with everything read in pages (core/paging.ts).
const paged = ["limit", "cursor"];
const argAdditions: Record<string, string[]> = {
  "notes/list": paged,
  "contacts/list": paged,
  "files/list": paged,
  "tasks/list": paged,
  "tasks/update": ["due", "assignee"],
  "events/create": ["id"],
  "blog/list": ["mine"],
  "contacts/add": ["emails", "phones"],
};

test("each argument added beyond the spec is described in the README", () => {
  const readme = readFileSync(join(import.meta.dir, "../../README.md"), "utf8");
  const section = readme.split(/^## Additions to the spec$/m)[1]?.split(/^## /m)[0] ?? "";
  for (const [path, args] of Object.entries(argAdditions)) for (const a of args) expect(section).toContain(`\`${path}\` \`${a}\``);
});

test.skipIf(!existsSync(specFile))("registered methods match the spec", async () => {
  const spec = JSON.parse(readFileSync(specFile, "utf8")) as { count: number; methods: SpecMethod[] };
  const reg = await buildRegistry({ pluginsDir: join(import.meta.dir, "../../plugins") });
  const bySpec = new Map(spec.methods.map((m) => [`${m.service}/${m.method}`, m]));
  const problems: string[] = [];
  let covered = 0;
  for (const m of spec.methods) {
    const entry = reg.get(m.service, m.method);
    if (!entry) continue;
    covered++;
    const verb = entry.def.kind === "write" ? "POST" : "GET";
    if (verb !== m.verb) problems.push(`${entry.path}: spec says ${m.verb}, registry says ${verb}`);
    const specArgs = new Set(m.args.map((a) => a.name));
    for (const a of m.args) {
      if (!entry.argNames.includes(a.name)) problems.push(`${entry.path}: lacks argument ${a.name}`);
      else if (a.required && !entry.required.includes(a.name)) problems.push(`${entry.path}: ${a.name} must be required`);
      else if (!a.required && entry.required.includes(a.name)) problems.push(`${entry.path}: ${a.name} must be optional`);
    }
    const extra = argAdditions[entry.path] ?? [];
    for (const a of entry.argNames) {
      if (specArgs.has(a)) continue;
      if (!extra.includes(a)) problems.push(`${entry.path}: has argument ${a} the spec lacks`);
      else if (entry.required.includes(a)) problems.push(`${entry.path}: ${a} is an addition, so it must be optional`);
    }
  }
  // A spec service's plugin must not carry methods the spec does not list,
  // but for these additions, which no caller of the spec sends: a hosted app
  // shown inside an MCP host reaches its own store through the host's
  // tools/call, so the store its /apps page uses is a method too.
  const additions = new Set(["apps/store_get", "apps/store_keys", "apps/store_set", "apps/store_remove"]);
  for (const e of reg.list()) {
    if (spec.methods.some((m) => m.service === e.service) && !bySpec.has(e.path) && !additions.has(e.path)) problems.push(`${e.path}: not in the spec`);
  }
  for (const a of additions) if (!reg.get(...(a.split("/") as [string, string]))) problems.push(`${a}: listed as an addition but not registered`);
  const missing = spec.methods.filter((m) => !reg.get(m.service, m.method)).map((m) => `${m.service}/${m.method}`);
  console.log(`spec coverage: ${covered}/${spec.count}${missing.length ? ` (missing: ${missing.join(", ")})` : ""}`);
  expect(problems).toEqual([]);
  expect(covered).toBeGreaterThan(0);
});
