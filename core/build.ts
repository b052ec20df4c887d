// `bun run build`: compiles dist/hearth (or one binary per --target) with every
// built-in plugin and every migration embedded, SQLite's and PostgreSQL's,
// since a lone binary has no plugins folder beside it. Drop-in plugins still load from HEARTH_PLUGINS.
// `--outdir <folder>` builds into that folder instead of dist/ (so builds at once do not share one).
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pluginFolders } from "./registry.ts";
import { buildScreen, buildUi } from "./views/bundle.ts";

const root = join(import.meta.dir, "..");
const outdir = process.argv.indexOf("--outdir");
const dist = outdir >= 0 && process.argv[outdir + 1] ? resolve(process.argv[outdir + 1]) : join(root, "dist");
mkdirSync(dist, { recursive: true });

const lines: string[] = [`import { setEmbeddedBuild } from ${JSON.stringify(join(root, "core/instance.ts"))};`];
let n = 0;
function migrationsExpr(dir: string): string {
  const journalFile = join(dir, "meta", "_journal.json");
  if (!existsSync(journalFile)) return "null";
  const journal = JSON.parse(readFileSync(journalFile, "utf8")) as { entries: { tag: string }[] };
  const j = `j${n++}`;
  lines.push(`import ${j} from ${JSON.stringify(journalFile)} with { type: "json" };`);
  const sql = journal.entries.map((e) => {
    const v = `s${n++}`;
    lines.push(`import ${v} from ${JSON.stringify(join(dir, `${e.tag}.sql`))} with { type: "text" };`);
    return `${JSON.stringify(e.tag)}: ${v}`;
  });
  return `{ journal: ${j}, sql: { ${sql.join(", ")} } }`;
}

// PostgreSQL's migrations by owner, as core/db/pgmigrate.ts finds them in folders: the core's and its modules' in
// core/db/pg/<owner>, each plugin's in its migrations/pg (under the plugin's name).
const pg: string[] = readdirSync(join(root, "core/db/pg")).map((owner) => `${JSON.stringify(owner)}: ${migrationsExpr(join(root, "core/db/pg", owner))}`);
const plugins = pluginFolders(join(root, "plugins")).map((folder) => {
  const name = folder.split("/").pop()!;
  const v = `p${n++}`;
  lines.push(`import ${v} from ${JSON.stringify(join(folder, "index.ts"))};`);
  // Only those it has: a plugin without a schema of its own may share a name with a core owner (mail).
  const pgSet = migrationsExpr(join(folder, "migrations", "pg"));
  if (pgSet !== "null") pg.push(`[${v}.name]: ${pgSet}`);
  return `{ def: ${v}, file: ${JSON.stringify(`plugins/${name}/index.ts`)}, folder: ${JSON.stringify(name)}, migrations: ${migrationsExpr(join(folder, "migrations"))} }`;
});
const core = migrationsExpr(join(root, "core/db/migrations"));
// The person's screens, bundled here since the binary has no sources to bundle them from: hearth/ui and each
// built-in plugin's views (a drop-in's are bundled from its folder when first asked for).
const viewsDir = join(dist, ".views");
mkdirSync(viewsDir, { recursive: true });
const viewFile = (name: string, text: string) => {
  const file = join(viewsDir, `${name}.js`);
  writeFileSync(file, text);
  const v = `v${n++}`;
  lines.push(`import ${v} from ${JSON.stringify(file)} with { type: "text" };`);
  return v;
};
const uiVar = viewFile("ui", await buildUi());
const screenVars: string[] = [];
for (const folder of pluginFolders(join(root, "plugins"))) {
  const def = (await import(join(folder, "index.ts"))).default as { name: string; screens?: Record<string, { module?: string }> };
  for (const [key, sc] of Object.entries(def.screens ?? {}))
    if (sc.module) screenVars.push(`${JSON.stringify(`${def.name}/${key}`)}: ${viewFile(`${def.name}.${key}`, await buildScreen(join(folder, sc.module)))}`);
}
lines.push(`import { setEmbeddedViews } from ${JSON.stringify(join(root, "core/views/bundle.ts"))};`);
lines.push(`setEmbeddedViews({ ui: ${uiVar}, screens: { ${screenVars.join(", ")} } });`);
lines.push(`import { main } from ${JSON.stringify(join(root, "core/cli/main.ts"))};`);
lines.push(`setEmbeddedBuild({ plugins: [\n  ${plugins.join(",\n  ")}\n], coreMigrations: ${core}, pgMigrations: { ${pg.join(", ")} } });`);
lines.push(`process.exit(await main(process.argv.slice(2)));`);
const entry = join(dist, ".entry.ts");
writeFileSync(entry, lines.join("\n") + "\n");

const targets = process.argv.includes("--release") ? ["bun-linux-x64", "bun-linux-arm64", "bun-darwin-arm64"] : process.argv.filter((a, i) => a.startsWith("bun-") && !(outdir >= 0 && i === outdir + 1));
const builds = targets.length ? targets.map((t) => ({ target: t, out: join(dist, `hearth-${t.replace(/^bun-/, "")}`) })) : [{ target: "", out: join(dist, "hearth") }];
for (const b of builds) {
  // Fully minified: the embedded script is read whole at every start, so its size is resident memory. Split, so
  // what loads on first use (the MCP SDK, viem, the mail libraries...) is a chunk of its own that a start does not
  // instantiate: in one chunk, every function of every bundled module becomes an object at start (~5 MB resident).
  // Start-up code (modules, migrations, the registry) runs once: the JIT compiling it only adds resident code and
  // compiler pages (~7 MB), so a binary starts with the JIT eight times as reluctant; `serve` sets it back once it listens.
  const cmd = ["bun", "build", "--compile", "--minify", "--splitting", "--compile-jit-policy=8", entry, "--outfile", b.out];
  // A binary for this machine carries its bytecode, so a start runs the program instead of first parsing all of it
  // (about a third of the CPU time a start took). Bytecode is the building machine's: a binary for another is built without.
  if (b.target) cmd.push(`--target=${b.target}`);
  else cmd.push("--bytecode", "--format=esm");
  build(cmd);
  // The bytecode a start uses, laid out together at the front, from a run of this binary: a start then reads and
  // decodes only those pages of the embedded program instead of pages scattered through all of it (~5 MB resident).
  // Only a saving: where the binary cannot be run here (no loopback, a sandbox), it stays as first built.
  if (!b.target) {
    const dir = mkdtempSync(join(tmpdir(), "hearth-order-"));
    try {
      const orders = await recordOrder(b.out, dir);
      build([...cmd, `--bytecode-order=${orders.join(",")}`]);
    } catch (e) {
      console.warn(`${b.out} is built without a bytecode order: ${(e as Error).message}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  console.log(`built ${b.out}`);
}

function build(cmd: string[]) {
  const p = Bun.spawnSync(cmd, { cwd: root, stdout: "ignore", stderr: "inherit" });
  if (p.exitCode !== 0) process.exit(p.exitCode ?? 1);
}

/**
 * Runs `binary` as an owner first does, on a throwaway data folder and an empty settings file, recording the
 * functions each process loads: `serve` answering a write and a read (most important first), then `token create`.
 * Returns the order files, written in `dir`.
 */
async function recordOrder(binary: string, dir: string): Promise<string[]> {
  const config = join(dir, "hearth.env");
  writeFileSync(config, "");
  const env = { PATH: process.env.PATH ?? "", HOME: dir, HEARTH_CONFIG: config, HEARTH_DATA: join(dir, "data"), HEARTH_LOG: "off", HOST: "127.0.0.1" };
  const [serveOrder, cliOrder] = [join(dir, "serve.order"), join(dir, "cli.order")];
  const made = Bun.spawnSync([binary, "token", "create", "--user", "owner"], { env: { ...env, BUN_BYTECODE_ORDER_OUT: cliOrder }, stderr: "inherit" });
  const token = made.stdout.toString().trim();
  if (made.exitCode !== 0 || !token) throw new Error("recording the bytecode order: token create failed");
  const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = probe.port!;
  probe.stop(true);
  const server = Bun.spawn([binary, "serve"], { env: { ...env, PORT: String(port), BUN_BYTECODE_ORDER_OUT: serveOrder }, stdout: "ignore", stderr: "inherit" });
  const base = `http://127.0.0.1:${port}`;
  const auth = { authorization: `Bearer ${token}` };
  try {
    for (let i = 0; !(await fetch(`${base}/health`).then((r) => r.ok, () => false)); i++) {
      if (i > 1000 || server.exitCode !== null) throw new Error("recording the bytecode order: serve did not answer /health");
      await Bun.sleep(10);
    }
    const add = await fetch(`${base}/api/v1/notes/add`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify({ title: "first", text: "a note" }) });
    const get = await fetch(`${base}/api/v1/notes/get?title=first`, { headers: auth });
    if (add.status !== 200 || get.status !== 200) throw new Error(`recording the bytecode order: notes/add answered ${add.status}, notes/get ${get.status}`);
  } finally {
    // The order is written as the process exits, which `serve` does on SIGTERM.
    server.kill();
    await server.exited;
  }
  return [serveOrder, cliOrder];
}
