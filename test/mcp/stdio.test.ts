// one store: MCP over stdio; the tools it calls and revoked or expired tokens run on both stores in test/mcp (parity, tools) and test/auth/tokens.test.ts
// `hearth mcp` over stdio, driven by the SDK's StdioClientTransport, against
// the same data folder a running server uses.
import "./patient.ts";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ensureAccount, issueToken } from "../../core/auth/tokens.ts";
import { Client as ClientV2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioV2 } from "@modelcontextprotocol/client/stdio";
import { post, signUp } from "../auth/people.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { PATIENT } from "./client.ts";

const root = join(import.meta.dir, "..", "..");
const main = join(root, "core", "cli", "main.ts");
let h: Hearth;
let alice: string;

beforeAll(async () => {
  h = await startHearth({ env: { HEARTH_SIGNUP: "open" } });
  alice = await h.token("alice");
  expect((await h.call("notes/add", { title: "Garden", text: "plant beans" }, { token: alice })).status).toBe(200);
});
afterAll(() => h.stop());

async function stdioClient(args: string[], env: Record<string, string>) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [main, "mcp", ...args],
    cwd: root,
    env: { ...h.env, HEARTH_LOG: "off", ...env },
    stderr: "pipe",
  });
  const client = new Client({ name: "hearth-test", version: "1.0.0" });
  await client.connect(transport, PATIENT);
  return { client, call: (name: string, a: Record<string, unknown>) => client.callTool({ name, arguments: a }, undefined, PATIENT) as Promise<CallToolResult> };
}

test("with HEARTH_TOKEN: initialize, list every method, call as the token's account", async () => {
  const c = await stdioClient([], { HEARTH_TOKEN: alice });
  try {
    expect(c.client.getServerVersion()?.name).toBe("hearth");
    const { tools } = await c.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(
      h.rt.registry
        .list()
        .map((e) => e.tool)
        .sort(),
    );
    const got = await c.call("notes_get", { title: "Garden" });
    const http = await h.call("notes/get", { title: "Garden" }, { token: alice });
    expect(got.isError).toBeUndefined();
    expect(got.structuredContent).toEqual(http.body);
    const missing = await c.call("notes_get", { title: "Orchard" });
    expect(missing.isError).toBe(true);
    expect(missing.structuredContent).toEqual((await h.call("notes/get", { title: "Orchard" }, { token: alice })).body);
  } finally {
    await c.client.close();
  }
});

test("a scoped HEARTH_TOKEN sees only its scope; --tools narrows further", async () => {
  const scoped = await h.token("alice", { scopes: ["notes"] });
  const c = await stdioClient(["--tools", "notes"], { HEARTH_TOKEN: scoped });
  try {
    const { tools } = await c.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(
      h.rt.registry
        .list()
        .filter((e) => e.service === "notes")
        .map((e) => e.tool)
        .sort(),
    );
  } finally {
    await c.client.close();
  }
});

test("the token is checked on every call: once it expires, the open connection's next call is refused", async () => {
  const account = await ensureAccount(h.rt.store, "alice");
  // Long enough to start the process and make one call; then waited out. A machine too busy to do that in time
  // is given longer, with a token of its own.
  for (let lead = 8_000; ; lead *= 2) {
    const expires = new Date(Date.now() + lead);
    const { token } = await issueToken(h.rt.store, account, { expires });
    const c = await stdioClient([], { HEARTH_TOKEN: token }).catch((e: Error) => e);
    const before = c instanceof Error ? c : await c.call("notes_get", { title: "Garden" }).catch((e: Error) => e);
    if (Date.now() >= expires.getTime()) {
      if (!(c instanceof Error)) await c.client.close();
      continue;
    }
    if (c instanceof Error) throw c;
    try {
      if (before instanceof Error) throw before;
      expect(before.isError).toBeUndefined();
      await Bun.sleep(Math.max(0, expires.getTime() - Date.now() + 200));
      const after = await c.call("notes_get", { title: "Garden" });
      expect(after.isError).toBe(true);
      expect(after.structuredContent).toMatchObject({ error: { status: 401, kind: "unauthenticated", message: "the token has expired" } });
    } finally {
      await c.client.close();
    }
    return;
  }
});

test("--user acts as that account, writing to the shared data folder", async () => {
  const c = await stdioClient(["--user", "alice"], {});
  try {
    const added = await c.call("notes_add", { title: "Shed", text: "fix the door" });
    expect(added.isError).toBeUndefined();
    const http = await h.call("notes/get", { title: "Shed" }, { token: alice });
    expect(http.status).toBe(200);
    expect(http.body.result.text).toBe("fix the door");
  } finally {
    await c.client.close();
  }
});

async function run(args: string[], env: Record<string, string>) {
  const p = Bun.spawn([process.execPath, main, "mcp", ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", ...h.env, HEARTH_LOG: "off", ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, stderr] = await Promise.all([p.exited, new Response(p.stderr).text()]);
  return { code, stderr };
}

test("without a token or --user it refuses to start and says what to set", async () => {
  const r = await run([], {});
  expect(r.code).toBe(2);
  expect(r.stderr).toContain("HEARTH_TOKEN");
});

test("a bad token or an unknown user is refused at launch", async () => {
  const bad = await run([], { HEARTH_TOKEN: "hth_nope" });
  expect(bad.code).toBe(1);
  expect(bad.stderr).toContain("not valid");
  const nobody = await run(["--user", "nobody"], {});
  expect(nobody.code).toBe(1);
  expect(nobody.stderr).toContain('no account "nobody"');
});

for (const era of ["2025-11-25", "2026-07-28"] as const) {
  test(`a token revoked through the API mid-connection is refused at the next call, as a 401 tool error (${era})`, async () => {
    const s = await signUp(h, `rita${era.slice(0, 4)}`);
    const made = await post(h, "/token", { name: "desktop" }, { cookie: s.cookie, "x-csrf-token": s.csrf });
    expect(made.status).toBe(200);
    const { token, id } = made.body.result;
    const env = { ...h.env, HEARTH_LOG: "off", HEARTH_TOKEN: token };
    const spawn = { command: process.execPath, args: [main, "mcp"], cwd: root, env, stderr: "pipe" as const };
    let client: { callTool(p: { name: string; arguments: Record<string, unknown> }): Promise<unknown>; close(): Promise<void> };
    if (era === "2025-11-25") {
      const c = new Client({ name: "hearth-test", version: "1.0.0" });
      await c.connect(new StdioClientTransport(spawn));
      client = c;
    } else {
      const c = new ClientV2({ name: "hearth-test-2026", version: "1.0.0" }, { versionNegotiation: { mode: { pin: era } } });
      await c.connect(new StdioV2(spawn));
      client = c;
    }
    try {
      const call = () => client.callTool({ name: "notes_add", arguments: { title: `After revoking ${era}`, text: "must not be written" } }) as Promise<CallToolResult>;
      const list = () => client.callTool({ name: "notes_list", arguments: {} }) as Promise<CallToolResult>;
      expect((await list()).isError).toBeFalsy();
      const revoked = await post(h, "/token/revoke", { id }, { cookie: s.cookie, "x-csrf-token": s.csrf });
      expect(revoked.status).toBe(200);
      const refused = await call();
      expect(refused.isError).toBe(true);
      expect(refused.structuredContent).toMatchObject({ error: { status: 401, kind: "unauthenticated", message: "the token is not valid (unknown or revoked)" } });
      expect(JSON.parse((refused.content[0] as { text: string }).text)).toEqual(refused.structuredContent);
      // Nothing was written as the revoked token's account.
      const signedIn = await fetch(`${h.url}/api/v1/notes/list`, { headers: { cookie: s.cookie } });
      expect(JSON.stringify(await signedIn.json())).not.toContain(`After revoking ${era}`);
    } finally {
      await client.close();
    }
  });
}
