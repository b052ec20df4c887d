// one store: the protocol's own conformance suite; the tools it calls run on both stores in test/mcp (parity, tools)
// The protocol's own conformance suite (@modelcontextprotocol/conformance)
// driven against a started instance, for the server scenarios that apply to
// a server of tools: the others need fixture tools, prompts, resources or
// logging that Hearth does not offer. The package has no 2026-07-28
// scenarios yet; eras.test.ts covers that revision with the SDK 2.x client.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startHearth, type Hearth } from "../harness.ts";

const cli = join(import.meta.dir, "..", "..", "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");
let h: Hearth;
let out: string;

beforeAll(async () => {
  h = await startHearth();
  out = mkdtempSync(join(tmpdir(), "hearth-conformance-"));
});
afterAll(async () => {
  await h.stop();
  rmSync(out, { recursive: true, force: true });
});

/** Runs one scenario (under Bun: the CLI needs fs.globSync) and returns its exit code and checks. */
async function scenario(name: string) {
  const dir = join(out, name);
  const p = Bun.spawn([process.execPath, cli, "server", "--url", `${h.url}/mcp`, "--scenario", name, "-o", dir], { stdout: "pipe", stderr: "pipe" });
  const [code, stdout] = await Promise.all([p.exited, new Response(p.stdout).text()]);
  const runs = readdirSync(dir);
  expect(runs.length).toBe(1);
  const checks = JSON.parse(readFileSync(join(dir, runs[0], "checks.json"), "utf8")) as { id: string; status: string }[];
  return { code, stdout, checks };
}

for (const name of ["server-initialize", "ping", "tools-list"]) {
  test(`conformance scenario ${name} passes`, async () => {
    const r = await scenario(name);
    expect(r.checks.length).toBeGreaterThan(0);
    expect(r.checks.filter((c) => c.status !== "SUCCESS")).toEqual([]);
    expect(r.code).toBe(0);
  });
}

// DNS rebinding: a request whose Host is not this server's is refused at the HTTP edge (core/http/host.ts).
test("conformance scenario dns-rebinding-protection passes", async () => {
  const r = await scenario("dns-rebinding-protection");
  expect(r.checks.filter((c) => c.status !== "SUCCESS")).toEqual([]);
  expect(r.code).toBe(0);
});
