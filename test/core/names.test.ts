// one store: what the core's sources name; starts no instance of the pass's store
// The core names no service: what a plugin brings (its home card, CLI
// commands, providers, the services it calls) is in its manifest, so a
// service can be added, removed or replaced without an edit to core/. This
// reads every core source file's string literals and imports, as a parser
// sees them (Bun strips the types, acorn reads the JavaScript; comments are
// not code), and refuses any that identifies a service of plugins/.
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { parse, type Node } from "acorn";
import "../../core/modules.ts";
import { buildRegistry } from "../../core/registry.ts";

const root = join(import.meta.dir, "../..");

/**
 * Words that are both a service's name and something of the core's own, in
 * the files where they mean the latter. Each is a word of its own domain, not
 * a reference to the service:
 * - "text": a content type, a column or a message part ({ type: "text" }).
 * - "mail": core/mail is the SMTP transport and mail store: its capability,
 *   CLI command, migrations owner, full-text entries and status line carry
 *   its own name; user names and the core's reserved record owners list the
 *   word too.
 * - "credits": the unit core/pay charges in, and its CLI command.
 * - "chat": the kind of an AI model call core/ai records (chat or image).
 * - "agent": a user name no one may take, and the surface a call made by an
 *   agent came in on (the activity log's word for it).
 * - "routes": the manifest's field of pages a plugin serves.
 * And core/mcp/rank.ts, whose table of everyday synonyms is English ("text
 * my sister" is "sms", "forecast" is "weather"): it maps words to words, and
 * every tool, a drop-in's too, is ranked by its own names and descriptions.
 */
const OWN_WORDS: { word: string; where: RegExp }[] = [
  { word: "text", where: /./ },
  { word: "mail", where: /^core\/(mail\/|auth\/people\.ts$|registry\.ts$|http\/pages\/status\.ts$|db\/(generate|owners)\.ts$)/ },
  { word: "routes", where: /^core\/registry\.ts$/ },
  { word: "*", where: /^core\/mcp\/rank\.ts$/ },
  { word: "credits", where: /^core\/(pay|audit)\// },
  { word: "chat", where: /^core\/ai\// },
  { word: "agent", where: /^core\/(auth\/people|dispatch)\.ts$/ },
];

/**
 * MCP's own request names that happen to spell a method's path: the Tasks
 * extension's `tasks/update` (a task's input, core/mcp/modern.ts) and
 * 2025-11-25's `tasks/list` (a credential's MCP tasks, in the table both
 * eras' servers register, core/mcp/server.ts) are the protocol's words, not
 * the tasks service's methods.
 */
const OWN_METHODS: { method: string; where: RegExp }[] = [
  { method: "tasks/update", where: /^core\/mcp\/modern\.ts$/ },
  { method: "tasks/list", where: /^core\/mcp\/server\.ts$/ },
];

/** Places where a string can only mean a service, whatever the word: `service: "x"`, `registry.get("x", …)`, `ctx.call("x", …)`. */
const SERVICE_SLOT = /(?:registry|plugins)\.(?:get|has)$|makeIndex$|\bcall$|dispatch$/;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return e.name === "node_modules" ? [] : sources(p);
    return e.name.endsWith(".ts") && !e.name.endsWith(".test.ts") && !e.name.endsWith(".d.ts") ? [p] : [];
  });
}

type N = Node & Record<string, unknown>;
const isNode = (v: unknown): v is N => !!v && typeof v === "object" && typeof (v as N).type === "string";
const transpiler = new Bun.Transpiler({ loader: "ts", trimUnusedImports: false });

/** Every place in core/ that names a service, as "file: what". */
export async function serviceNamesInCore(): Promise<string[]> {
  const reg = await buildRegistry({ pluginsDir: join(root, "plugins") });
  const services = new Set(reg.services());
  const methods = new Set(reg.list().flatMap((m) => [m.path, m.tool]));
  const found: string[] = [];
  for (const file of sources(join(root, "core"))) {
    const rel = relative(root, file);
    const js = transpiler.transformSync(readFileSync(file, "utf8"));
    const text = (n: N) => js.slice(n.start, n.end);
    const literal = (n: N, parent: N | null) => {
      const v = n.type === "Literal" && typeof n.value === "string" ? n.value : n.type === "TemplateLiteral" && (n.expressions as N[]).length === 0 ? ((n.quasis as N[])[0].value as { cooked: string }).cooked : null;
      if (v === null) return;
      if (methods.has(v) && !OWN_METHODS.some((o) => o.method === v && o.where.test(rel))) found.push(`${rel}: names the method ${JSON.stringify(v)}`);
      else if (services.has(v)) {
        const slot =
          (parent?.type === "Property" && text(parent.key as N).replace(/["']/g, "") === "service" && parent.value === n) ||
          (parent?.type === "CallExpression" && (parent.arguments as N[]).includes(n) && SERVICE_SLOT.test(text(parent.callee as N)));
        // core/mail files its own messages in the full-text index under its own name: the slot is the module's, not a service's.
        const own = OWN_WORDS.some((w) => (w.word === v || w.word === "*") && w.where.test(rel));
        if ((slot && !(own && rel.startsWith("core/mail/"))) || !own) found.push(`${rel}: names the service ${JSON.stringify(v)}${slot ? ` (${text(parent!)})` : ""}`);
      }
    };
    const visit = (n: N, parent: N | null) => {
      if ((n.type === "ImportDeclaration" || n.type === "ExportNamedDeclaration" || n.type === "ExportAllDeclaration" || n.type === "ImportExpression") && isNode(n.source)) {
        const from = String((n.source as N).value ?? "");
        if (/(^|\/)plugins\//.test(from)) found.push(`${rel}: imports ${from}`);
        return;
      }
      // Providers belong to the plugins that reach them; the core keeps only the mechanism.
      if (n.type === "CallExpression" && text(n.callee as N) === "defineProvider") found.push(`${rel}: defines a provider: ${text(n).slice(0, 80)}`);
      literal(n, parent);
      for (const [k, v] of Object.entries(n)) {
        if (k === "loc") continue;
        if (Array.isArray(v)) for (const c of v) isNode(c) && visit(c, n);
        else if (isNode(v)) visit(v, n);
      }
    };
    visit(parse(js, { ecmaVersion: "latest", sourceType: "module" }) as unknown as N, null);
  }
  return found;
}

test("core/ names no service: no plugin import, no service or method name as a string, no provider of its own", async () => {
  expect(await serviceNamesInCore()).toEqual([]);
});

/**
 * A plugin imports nothing from another's folder, which a drop-in could not
 * do: what one needs of another goes through ctx.call or a capability the
 * other provides and it declares in needs.
 */
test("a plugin imports no other plugin's files", () => {
  const scanner = new Bun.Transpiler({ loader: "ts" });
  const crossing: string[] = [];
  for (const file of sources(join(root, "plugins"))) {
    const rel = relative(root, file);
    const own = rel.split("/").slice(0, 2).join("/");
    for (const imp of scanner.scanImports(readFileSync(file, "utf8"))) {
      if (!imp.path.startsWith(".")) continue;
      const target = relative(root, join(file, "..", imp.path));
      if (target.startsWith("plugins/") && !target.startsWith(`${own}/`)) crossing.push(`${rel} -> ${target}`);
    }
  }
  expect(crossing.sort()).toEqual([]);
});
