// one store: the README's commands; they ignore the pass's settings
// The README's own commands, run as a person copies them: the shell blocks of
// "Your first call" go to bash in the checkout, against a real `hearth serve`,
// and the Claude Code commands are read the way `claude mcp add` parses them.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { clientConfigs } from "../../core/mcp/page.ts";
import { serve } from "../hardening/process.ts";

const root = join(import.meta.dir, "../..");
const readme = readFileSync(join(root, "README.md"), "utf8");
const scratch = mkdtempSync(join(tmpdir(), "hearth-readme-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The text of one "## " section. */
function section(title: string): string {
  const start = readme.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`README has no section "${title}"`);
  const end = readme.indexOf("\n## ", start + 1);
  return readme.slice(start, end < 0 ? undefined : end);
}

/** Its fenced shell blocks. */
const shellBlocks = (text: string) => [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);

test("the shell blocks of 'Your first call' work as written against a running instance", async () => {
  const blocks = shellBlocks(section("Your first call"));
  expect(blocks.length).toBeGreaterThan(0);
  // One settings file for the server and the commands, as an owner would have: its data folder is a scratch one.
  const settings = join(scratch, "hearth.env");
  writeFileSync(settings, `HEARTH_DATA=${join(scratch, "data")}\nHEARTH_LOG=off\n`);
  const server = await serve(null, { HEARTH_CONFIG: settings });
  try {
    const port = new URL(server.url).port;
    // The owner's file names the port the server listens on; the commands find it there.
    writeFileSync(settings, `HEARTH_DATA=${join(scratch, "data")}\nHEARTH_LOG=off\nPORT=${port}\n`);
    // The snippets name the default port; the instance here listens on a free one.
    const script = blocks.join("\n").replaceAll("localhost:8080", `localhost:${port}`);
    expect(script).not.toContain("8080");
    const p = Bun.spawn(["bash", "-eo", "pipefail", "-c", script], {
      cwd: root,
      env: { PATH: `${dirname(process.execPath)}:${process.env.PATH ?? "/usr/bin:/bin"}`, HOME: scratch, HEARTH_CONFIG: settings },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    expect(code).toBe(0);
    // Only what token create says of the account it made: the admin, with a link to choose a password, on this port.
    expect(stderr).toMatch(
      new RegExp(`^made alice, the admin of this instance; alice has no password yet: to sign in on the web, open http://127\\.0\\.0\\.1:${port}/password\\?code=[\\w-]{43} to choose one \\(works once, for 24 hours\\)\\n$`),
    );
    // Each curl prints one answer, with no newline between them.
    const answers = stdout.split(/(?=\{"(?:result|error)")/).map((s) => JSON.parse(s));
    expect(answers).toHaveLength(2);
    expect(answers.every((a) => "result" in a)).toBe(true);
    expect(answers[1].result).toMatchObject({ title: "shopping", text: "milk, eggs" });
  } finally {
    await server.stop();
  }
});

/** Splits a command line into words as a POSIX shell does for plain and quoted words. */
function words(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|"((?:[^"\\]|\\.)*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]);
}

/**
 * The server name `claude mcp add` would see: its first positional argument.
 * --env and --header take any number of values, so every word after one that
 * does not start with "-" is taken as a value; the name must come before them.
 */
function claudeServerName(line: string): string | null {
  const w = words(line);
  const at = w.indexOf("add");
  const single = new Set(["--transport", "-t", "--scope", "-s", "--callback-port", "--client-id"]);
  for (let i = at + 1; i < w.length && w[i] !== "--"; i++) {
    if (single.has(w[i])) i++;
    else if (w[i] === "--env" || w[i] === "-e" || w[i] === "--header" || w[i] === "-H") return null;
    else if (!w[i].startsWith("-")) return w[i];
  }
  return null;
}

test("every Claude Code command names the server before the options that take many values", () => {
  const lines = shellBlocks(section("Connect Claude, Cursor and other MCP clients"))
    .flatMap((b) => b.split("\n"))
    .filter((l) => l.startsWith("claude mcp add"));
  const cfg = clientConfigs("https://hearth.example/mcp");
  for (const line of [...lines, cfg.claudeCode, cfg.claudeCodeStdio]) expect({ line, name: claudeServerName(line) }).toEqual({ line, name: "hearth" });
  expect(lines.length).toBe(2);
});
