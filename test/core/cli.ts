// What the CLI tests share (test/core/cli.test.ts runs hearth from source, cli-binary.test.ts the single binary):
// running a command, waiting for a server, the suite both forms pass, and the docs' bookmarks plugin served by either.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { microlinkFixture, writeDocsExample } from "./docs-plugin.ts";
import { freePort } from "../ports.ts";

export const root = join(import.meta.dir, "../..");
export const main = join(root, "core/cli/main.ts");

export async function run(cmd: string[], env: Record<string, string>) {
  const p = Bun.spawn(cmd, { env: { ...process.env, HEARTH_LOG: "off", ...env }, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { stdout, stderr, code };
}

/** Until the server answers, or has exited: however long a busy machine takes to start it (the runner's per-test limit still ends a server that never comes up). */
export async function waitUp(url: string, proc: { exitCode: number | null; stderr?: unknown }) {
  for (;;) {
    if (proc.exitCode !== null) {
      // What it said is why: without it a failure on a loaded machine tells nothing.
      const said = proc.stderr instanceof ReadableStream ? await new Response(proc.stderr).text() : "";
      throw new Error(`server exited with ${proc.exitCode}${said ? `: ${said.trim()}` : ""}`);
    }
    try {
      if ((await fetch(`${url}/health`)).ok) return;
    } catch {}
    await Bun.sleep(25);
  }
}

export function suite(name: string, cmd: () => string[], before?: () => Promise<void>) {
  describe(name, () => {
    const dir = mkdtempSync(join(tmpdir(), "hearth-cli-"));
    const port = freePort();
    const url = `http://127.0.0.1:${port}`;
    const env = { HEARTH_DATA: join(dir, "data"), PORT: String(port), HOST: "127.0.0.1", HEARTH_URL: url };
    let server: ReturnType<typeof Bun.spawn>;
    let token = "";

    beforeAll(async () => {
      await before?.();
      const t = await run([...cmd(), "token", "create", "--user", "carol", "--scopes", "notes,tasks"], env);
      expect(t.code).toBe(0);
      token = t.stdout.trim();
      expect(token).toMatch(/^hth_[\w-]{40,}$/);
      server = Bun.spawn([...cmd(), "serve"], { env: { ...process.env, HEARTH_LOG: "off", ...env }, stdout: "ignore", stderr: "pipe", stdin: "ignore" });
      await waitUp(url, server);
      // Building the binary (bundle, then its bytecode) takes several seconds on a busy machine.
    });
    afterAll(async () => {
      server?.kill();
      await server?.exited;
      rmSync(dir, { recursive: true, force: true });
    });

    test("calls methods with typed arguments and prints the JSON result", async () => {
      const add = await run([...cmd(), "tasks", "create", "--title", "from the cli", "--due", "2026-06-01 10:00"], { ...env, HEARTH_TOKEN: token });
      expect(add.stderr).toBe("");
      expect(add.code).toBe(0);
      expect(JSON.parse(add.stdout)).toMatchObject({ title: "from the cli", due: "2026-06-01T10:00:00.000Z" });
      const list = await run([...cmd(), "tasks", "list", "--status", "todo"], { ...env, HEARTH_TOKEN: token });
      expect(JSON.parse(list.stdout).map((t: { title: string }) => t.title)).toEqual(["from the cli"]);
    });

    test("a refusal exits 1 with the message on stderr; bad usage exits 2", async () => {
      const scoped = await run([...cmd(), "contacts", "list"], { ...env, HEARTH_TOKEN: token });
      expect(scoped.code).toBe(1);
      expect(scoped.stderr).toContain("forbidden");
      const invalid = await run([...cmd(), "notes", "get"], { ...env, HEARTH_TOKEN: token });
      expect(invalid.code).toBe(1);
      expect(invalid.stderr).toContain("title is required");
      expect((await run([...cmd(), "nosuch", "thing"], env)).code).toBe(2);
      expect((await run([...cmd(), "notes", "nosuch"], env)).code).toBe(2);
      expect((await run([...cmd(), "token", "create"], env)).code).toBe(2);
    });

    test("a GET whose query string holds 30,000 percent-encoded emoji (360,000 bytes) reaches validation", async () => {
      const title = "😀".repeat(30_000);
      const r = await fetch(`${url}/api/v1/notes/get?${new URLSearchParams({ title })}`, { headers: { authorization: `Bearer ${token}` } });
      expect(r.status).toBe(400);
      expect((await r.json()).error).toMatchObject({ kind: "invalid_argument", field: "title" });
    });

    test("help lists every method from the registry", async () => {
      const h = await run([...cmd(), "help"], env);
      expect(h.code).toBe(0);
      for (const m of ["notes add", "tasks next", "contacts find"]) expect(h.stdout).toContain(m);
    });
  });
}

/** The docs' bookmarks plugin, run by `cmd` (`how` names it). */
export function bookmarksTest(how: string, cmd: () => string[]) {
  test(`the docs' bookmarks plugin serves ${how}: its table, provider and setting, over HTTP, MCP and its CLI command, with its home card, and help says what it reaches`, async () => {
    const folder = writeDocsExample();
    const micro = microlinkFixture();
    const dir = mkdtempSync(join(tmpdir(), "hearth-bookmarks-"));
    const port = freePort();
    const url = `http://127.0.0.1:${port}`;
    const env = { HEARTH_DATA: join(dir, "data"), PORT: String(port), HOST: "127.0.0.1", HEARTH_PLUGINS: folder, MICROLINK_URL: micro.url, BOOKMARKS_MAX: "5", HEARTH_URL: url, HEARTH_SIGNUP: "open" };
    let server: ReturnType<typeof Bun.spawn> | undefined;
    try {
      const t = await run([...cmd(), "token", "create", "--user", "dora"], env);
      expect(t.stderr).toStartWith(`made dora, the admin of this instance; dora has no password yet: to sign in on the web, open ${url}/password?code=`);
      const auth = { authorization: `Bearer ${t.stdout.trim()}`, "content-type": "application/json" };
      // The owner can see what the plugin reaches and reads before serving it.
      const help = await run([...cmd(), "help", "bookmarks"], env);
      expect(help.stdout).toContain(`reaches: MICROLINK (${new URL(micro.url).host})`);
      expect(help.stdout).toContain("reads: BOOKMARKS_MAX, MICROLINK_API_KEY,");
      // Its command is listed among the commands plugins add.
      expect((await run([...cmd(), "help"], env)).stdout).toMatch(/hearth bookmark \[URL\] +save a link, or list your bookmarks \(bookmarks\)/);
      server = Bun.spawn([...cmd(), "serve"], { env: { ...process.env, HEARTH_LOG: "off", ...env }, stdout: "ignore", stderr: "pipe", stdin: "ignore" });
      await waitUp(url, server);
      const add = await fetch(`${url}/api/v1/bookmarks/add`, { method: "POST", headers: auth, body: JSON.stringify({ url: "https://example.org/x" }) });
      expect(await add.json()).toMatchObject({ result: { url: "https://example.org/x", title: "Title of https://example.org/x" } });
      expect(micro.asked).toEqual(["https://example.org/x"]);
      const tool = await fetch(`${url}/mcp`, {
        method: "POST",
        headers: { ...auth, accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "bookmarks_list", arguments: {} } }),
      });
      const listed = (await tool.json()).result.structuredContent.result;
      expect(listed.map((b: { title: string }) => b.title)).toEqual(["Title of https://example.org/x"]);
      // Its CLI command calls the running instance with the token.
      const saved = await run([...cmd(), "bookmark", "https://example.org/y"], { ...env, HEARTH_TOKEN: t.stdout.trim() });
      expect(saved).toMatchObject({ code: 0, stdout: "saved: Title of https://example.org/y\n" });
      const mine = await run([...cmd(), "bookmark"], { ...env, HEARTH_TOKEN: t.stdout.trim() });
      expect(mine.stdout.split("\n").filter(Boolean).sort()).toEqual(["Title of https://example.org/x  https://example.org/x", "Title of https://example.org/y  https://example.org/y"]);
      const refused = await run([...cmd(), "bookmark", "ftp://nope"], { ...env, HEARTH_TOKEN: t.stdout.trim() });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("must start with http:// or https://");
      // Its home card, for someone signed in (the first account to sign up here).
      const signup = await fetch(`${url}/signup`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username: "erin", password: "a long passphrase" }) });
      const cookie = signup.headers.get("set-cookie")!.split(";")[0];
      const token = await run([...cmd(), "token", "create", "--user", "erin"], env);
      await run([...cmd(), "bookmark", "https://example.org/z"], { ...env, HEARTH_TOKEN: token.stdout.trim() });
      const home = await (await fetch(url, { headers: { cookie, accept: "text/html" } })).text();
      expect(home).toContain('aria-labelledby="card-bookmarks"');
      expect(home).toContain("Title of https://example.org/z");
    } finally {
      server?.kill();
      await server?.exited;
      micro.stop();
      rmSync(dir, { recursive: true, force: true });
      rmSync(dirname(folder), { recursive: true, force: true });
    }
  });
}
