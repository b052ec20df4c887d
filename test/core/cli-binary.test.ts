// one store: the commands spawn hearth, which ignores the pass's settings; the binary's PostgreSQL run starts its own cluster in either pass
// The single binary, run as a person would: real processes, real ports.
import { afterAll, expect, test } from "bun:test";
import { chmodSync, copyFileSync, existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pgBin, startPg } from "../pg.ts";
import { freePort } from "../ports.ts";
import { bookmarksTest, root, run, suite, waitUp } from "./cli.ts";

// Built in a folder of this process's own: another test process may be building one at the same time.
const built = mkdtempSync(join(tmpdir(), "hearth-dist-"));
afterAll(() => rmSync(built, { recursive: true, force: true }));
const binary = join(built, "hearth");
suite("dist/hearth, the single binary", () => [binary], () => buildOnce(built));

/**
 * What the binary is built from: every file under core/ and plugins/ (their code, migrations and views are all
 * embedded), the dependencies' lockfile and manifest, and the bun that builds it.
 */
async function sourcesHash(): Promise<string> {
  const h = new Bun.CryptoHasher("sha256");
  h.update(`${Bun.version} ${Bun.revision}\0`);
  for (const top of ["core", "plugins"])
    for (const f of Array.from(new Bun.Glob("**").scanSync({ cwd: join(root, top) })).sort()) {
      h.update(`${top}/${f}\0`);
      h.update(await Bun.file(join(root, top, f)).arrayBuffer());
    }
  for (const f of ["package.json", "bun.lock", "tsconfig.json", "bunfig.toml"]) if (existsSync(join(root, f))) h.update(`${f}\0${readFileSync(join(root, f), "utf8")}`);
  return h.digest("hex").slice(0, 20);
}

/**
 * `bun run build` into `dir`, or the binary an earlier run built from the very same sources on this machine: the
 * build (bundle, compile, run it for its bytecode order, compile again) was half of this file's CPU, and its
 * result depends on nothing else. A new build is kept under the temp folder by its sources' hash (only the newest:
 * each is 150 MB), moved there whole once it succeeded, so a build stopped half way is never taken for one.
 */
async function buildOnce(dir: string): Promise<void> {
  const cached = join(tmpdir(), `hearth-binary-${await sourcesHash()}`);
  // A link of its own: whatever a test writes beside the binary stays in this process's folder. (One removed since
  // it was seen, as a newer build replaced it, is built again.)
  for (const take of [linkSync, copyFileSync])
    try {
      take(join(cached, "hearth"), binary);
      return;
    } catch {}
  const b = await run(["bun", join(root, "core/build.ts"), "--outdir", dir], {});
  if (b.code !== 0) throw new Error(`build failed: ${b.stderr}`);
  const staged = mkdtempSync(join(tmpdir(), "hearth-binary-new-"));
  copyFileSync(binary, join(staged, "hearth"));
  try {
    renameSync(staged, cached);
  } catch {
    // Another process kept one from the same sources first.
    rmSync(staged, { recursive: true, force: true });
  }
  for (const old of readdirSync(tmpdir())) if (/^hearth-binary-[0-9a-f]{20}$/.test(old) && join(tmpdir(), old) !== cached) rmSync(join(tmpdir(), old), { recursive: true, force: true });
}

test("the binary still loads drop-in plugins from HEARTH_PLUGINS", async () => {
  const dir = mkdtempSync(join(tmpdir(), "hearth-bin-"));
  const h = await run([binary, "help", "probe"], { HEARTH_DATA: join(dir, "data"), HEARTH_PLUGINS: join(import.meta.dir, "../fixtures/plugins") });
  rmSync(dir, { recursive: true, force: true });
  expect(h.code).toBe(0);
  expect(h.stdout).toContain("probe echo");
});

test.skipIf(!pgBin("initdb"))("the binary keeps its data in PostgreSQL, the core's, its modules' and its plugins' PostgreSQL migrations carried inside it", async () => {
  const dir = mkdtempSync(join(tmpdir(), "hearth-bin-pg-"));
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  const env = { HEARTH_DATA: join(dir, "data"), PORT: String(port), HOST: "127.0.0.1", HEARTH_DATABASE_URL: await (await startPg()).database() };
  let server: ReturnType<typeof Bun.spawn> | undefined;
  try {
    const t = await run([binary, "token", "create", "--user", "alice"], env);
    expect(t.stderr).toStartWith(`made alice, the admin of this instance; alice has no password yet: to sign in on the web, open ${url}/password?code=`);
    expect(t.code).toBe(0);
    server = Bun.spawn([binary, "serve"], { env: { ...process.env, HEARTH_LOG: "off", ...env }, stdout: "ignore", stderr: "ignore", stdin: "ignore" });
    await waitUp(url, server);
    const auth = { authorization: `Bearer ${t.stdout.trim()}`, "content-type": "application/json" };
    const add = await fetch(`${url}/api/v1/notes/add`, { method: "POST", headers: auth, body: JSON.stringify({ title: "on pg", text: "kept in PostgreSQL" }) });
    expect(add.status).toBe(200);
    const got = await (await fetch(`${url}/api/v1/notes/get?title=on%20pg`, { headers: auth })).json();
    expect(got.result).toMatchObject({ title: "on pg", text: "kept in PostgreSQL" });
    // Nothing went to a SQLite file in the data folder.
    expect(existsSync(join(dir, "data", "hearth.db"))).toBe(false);
  } finally {
    server?.kill();
    await server?.exited;
    rmSync(dir, { recursive: true, force: true });
  }
});

/** The binary as an owner installs it: in a folder of its own (`home`, with a config/ beside it), run from another (`elsewhere`). */
function installed(prefix: string) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const home = join(dir, "opt");
  const elsewhere = join(dir, "elsewhere");
  mkdirSync(join(home, "config"), { recursive: true });
  mkdirSync(elsewhere);
  copyFileSync(binary, join(home, "hearth"));
  chmodSync(join(home, "hearth"), 0o755);
  return { dir, home, elsewhere };
}

test("the binary reads config/hearth.env beside it and keeps its data there, whatever folder it runs from", async () => {
  const { dir, home, elsewhere } = installed("hearth-bin-");
  writeFileSync(join(home, "config", "hearth.env"), "HEARTH_DATA=store\n");
  const env = { ...process.env };
  delete env.HEARTH_DATA;
  delete env.HEARTH_CONFIG;
  const p = Bun.spawn([join(home, "hearth"), "token", "create", "--user", "alice"], { cwd: elsewhere, env: { ...env, HEARTH_LOG: "off" }, stdout: "pipe", stderr: "pipe" });
  const [stderr, code] = await Promise.all([new Response(p.stderr).text(), p.exited]);
  try {
    expect(stderr).toStartWith("made alice, the admin of this instance; alice has no password yet: to sign in on the web, open http://127.0.0.1:8080/password?code=");
    expect(code).toBe(0);
    expect(existsSync(join(home, "store", "hearth.db"))).toBe(true);
    expect(readdirSync(elsewhere)).toEqual([]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

bookmarksTest("as the single binary", () => [binary]);

test("with only PORT in config/hearth.env, the CLI reaches the server there: its calls go to that port, and the links it prints name it", async () => {
  const { dir, home, elsewhere } = installed("hearth-bin-port-");
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  // The owner's one line: nothing else says where the server is.
  writeFileSync(join(home, "config", "hearth.env"), `PORT=${port}\n`);
  const shell: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== "PORT" && k !== "HOST" && !k.startsWith("HEARTH_")) shell[k] = v;
  const hearth = async (args: string[], more: Record<string, string> = {}) => {
    const p = Bun.spawn([join(home, "hearth"), ...args], { cwd: elsewhere, env: { ...shell, ...more }, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
    const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    return { stdout, stderr, code };
  };
  // The server alone is kept from the network and quiet; these are not what the file is read for.
  const server = Bun.spawn([join(home, "hearth"), "serve"], { cwd: elsewhere, env: { ...shell, HEARTH_LOG: "off", HEARTH_COLLECTORS: "off", AI_OLLAMA_URL: "" }, stdout: "ignore", stderr: "pipe", stdin: "ignore" });
  try {
    await waitUp(url, server);
    const made = await hearth(["token", "create", "--user", "alice"]);
    expect(made.code).toBe(0);
    expect(made.stderr).toStartWith(`made alice, the admin of this instance; alice has no password yet: to sign in on the web, open ${url}/password?code=`);
    const token = made.stdout.trim();
    const note = await hearth(["notes", "add", "--title", "first", "--text", "from the shell"], { HEARTH_TOKEN: token });
    expect({ code: note.code, stderr: note.stderr }).toEqual({ code: 0, stderr: "" });
    expect(JSON.parse(note.stdout)).toMatchObject({ title: "first", text: "from the shell" });
    // The server on that port holds it.
    const got = await (await fetch(`${url}/api/v1/notes/get?title=first`, { headers: { authorization: `Bearer ${token}` } })).json();
    expect(got.result).toMatchObject({ title: "first", text: "from the shell" });
    const invite = await hearth(["invite"]);
    expect(invite.code).toBe(0);
    expect(invite.stdout).toStartWith(`${url}/signup?invite=`);
    // The call went over the wire to that port: with the server stopped, the same call fails.
    server.kill();
    await server.exited;
    const down = await hearth(["notes", "list"], { HEARTH_TOKEN: token });
    expect(down.code).not.toBe(0);
    expect(down.stderr).toContain(String(port));
  } finally {
    server.kill();
    await server.exited;
    rmSync(dir, { recursive: true, force: true });
  }
});
