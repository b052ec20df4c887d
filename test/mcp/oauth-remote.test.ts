// mcp-remote, the stdio bridge many desktop MCP clients use for remote
// servers, started with a bad bearer token: it is told Hearth's reason for
// the 401, finds the instance's OAuth metadata, registers, and asks the
// person to sign in at this instance, instead of failing to register.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startHearth, type Hearth } from "../harness.ts";

const REMOTE = join(import.meta.dir, "../../node_modules/mcp-remote/dist/proxy.js");

let h: Hearth;
let dir: string;

beforeAll(async () => {
  h = await startHearth();
  dir = mkdtempSync(join(tmpdir(), "hearth-mcp-remote-"));
});

afterAll(async () => {
  await h?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Collects a stream's text as it arrives, so the test can wait for a line. */
function collect(stream: ReadableStream<Uint8Array>) {
  const acc = { text: "" };
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) acc.text += decoder.decode(chunk, { stream: true });
  })();
  return {
    get text() {
      return acc.text;
    },
    // Up to just under the runner's limit for a test, so a client that never prints says what it printed instead.
    async waitFor<T>(find: (text: string) => T | null | undefined, what: string, ms = 540_000): Promise<T> {
      const until = Date.now() + ms;
      for (;;) {
        const found = find(acc.text);
        if (found) return found;
        if (Date.now() > until) throw new Error(`mcp-remote never printed ${what}; it printed:\n${acc.text.slice(-4000)}`);
        await Bun.sleep(50);
      }
    },
  };
}

test(
  "mcp-remote with a bad token is told why, then signs in with OAuth instead of failing to register",
  async () => {
    const proc = Bun.spawn(["bun", REMOTE, `${h.url}/mcp`, "--header", "Authorization:Bearer hth_not-a-real-token", "--debug", "--auth-timeout", "60"], {
      stdin: "pipe",
      stdout: "ignore",
      stderr: "pipe",
      // Its stored credentials and debug log go in a folder of the test's own; no browser is launched by it.
      env: { ...process.env, MCP_REMOTE_CONFIG_DIR: dir, BROWSER: "/bin/false" },
    });
    try {
      const err = collect(proc.stderr);
      const send = (msg: unknown) => {
        proc.stdin.write(JSON.stringify(msg) + "\n");
        proc.stdin.flush();
      };
      send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "oauth-remote-test", version: "1.0.0" } } });

      const authorize = await err.waitFor((t) => /Please authorize this client by visiting:\s*(\S+)/.exec(t)?.[1], "an authorization URL");
      // Hearth's own reason reached it in the challenge (its --debug output shows the header), and registration worked.
      expect(err.text).toContain("the token is not valid (unknown or revoked)");
      expect(err.text).not.toContain("Registration rejected");
      expect(new URL(authorize).pathname).toBe("/oauth/authorize");

      // The URL it would open is a valid request to this instance: its registered client and redirect URI pass, and sign-in comes next.
      const opened = await fetch(authorize, { redirect: "manual" });
      expect(opened.status).toBe(303);
      expect(opened.headers.get("location")).toStartWith("/signin?next=");
      const params = new URL(authorize).searchParams;
      expect(params.get("code_challenge_method")).toBe("S256");
      expect(params.get("resource")).toBe(`${h.url}/mcp`);
    } finally {
      proc.kill();
      await proc.exited;
    }
  },
);
