// The settings page's "Test" buttons against loopback servers speaking each
// provider's real protocol: an OpenAI-compatible API, Twilio's account
// resource, an S3 bucket (s3rver), a JSON-RPC chain node and an SMTP relay's
// greeting. Each says whether it works and why not, and never echoes a secret.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createServer, type Server } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTwilio } from "../fixtures/twilio/server.ts";
import { startOpenAiFixture, type OpenAiFixture } from "../fixtures/openai/server.ts";
import { startS3 } from "../s3.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { post, signUp, type Signed } from "../auth/people.ts";

let h: Hearth;
let admin: Signed;
let ai: OpenAiFixture;
let twilio: ReturnType<typeof startTwilio>;
let s3: Awaited<ReturnType<typeof startS3>>;
let rpc: ReturnType<typeof Bun.serve>;
let smtp: Server;
const folder = mkdtempSync(join(tmpdir(), "hearth-probes-"));

beforeAll(async () => {
  ai = await startOpenAiFixture();
  twilio = startTwilio({ sid: "AC0123456789abcdef0123456789abcdef", token: "tw-secret-token" });
  s3 = await startS3(["probe-bucket"]);
  // A chain node: JSON-RPC 2.0 over HTTP, Base Sepolia's chain id.
  rpc = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const body = (await req.json()) as { id: number; method: string };
      if (body.method !== "eth_chainId") return Response.json({ jsonrpc: "2.0", id: body.id, error: { code: -32601, message: "the method does not exist" } });
      return Response.json({ jsonrpc: "2.0", id: body.id, result: "0x14a34" });
    },
  });
  // An SMTP relay's first words (RFC 5321: 220 and its name), then it waits for QUIT.
  smtp = createServer((sock) => {
    sock.write("220 relay.test ESMTP ready\r\n");
    sock.on("data", (d) => d.toString().startsWith("QUIT") && sock.end("221 bye\r\n"));
    sock.on("error", () => {});
  });
  await new Promise<void>((r) => smtp.listen(0, "127.0.0.1", r));
  h = await startHearth({ env: { HEARTH_CONFIG: join(folder, "hearth.env") } });
  admin = await signUp(h, "alice");
});
afterAll(async () => {
  await h?.stop();
  ai?.stop();
  twilio?.stop();
  await s3?.stop();
  rpc?.stop(true);
  smtp?.close();
  rmSync(folder, { recursive: true, force: true });
});

const probe = async (test: string, settings: Record<string, string>) => {
  const r = await post(h, "/settings", { settings, test }, { cookie: admin.cookie, "x-csrf-token": admin.csrf });
  expect(r.status).toBe(200);
  return r.body.result as { ok: boolean; said: string };
};

test("AI: a tiny real completion with the model as typed; a refusal in the provider's words", async () => {
  ai.reply({ say: "ready" });
  const ok = await probe("ai", { AI_BASE_URL: ai.base, AI_MODEL: "tiny", AI_API_KEY: "sk-probe" });
  expect(ok.ok).toBe(true);
  expect(ai.posts.at(-1)!.headers.authorization).toBe("Bearer sk-probe");
  expect(ai.posts.at(-1)!.body.model).toBe("tiny");
  ai.reply({ status: 401 });
  const bad = await probe("ai", { AI_BASE_URL: ai.base, AI_MODEL: "tiny", AI_API_KEY: "sk-probe" });
  expect(bad.ok).toBe(false);
  expect(bad.said).not.toContain("sk-probe");
});

test("Twilio: the account resource with the credentials as typed", async () => {
  const ok = await probe("twilio", { TWILIO_URL: twilio.url, TWILIO_ACCOUNT_SID: "AC0123456789abcdef0123456789abcdef", TWILIO_AUTH_TOKEN: "tw-secret-token" });
  expect(ok).toMatchObject({ ok: true });
  expect(ok.said).toContain("active");
  const bad = await probe("twilio", { TWILIO_URL: twilio.url, TWILIO_ACCOUNT_SID: "AC0123456789abcdef0123456789abcdef", TWILIO_AUTH_TOKEN: "wrong-token" });
  expect(bad.ok).toBe(false);
  expect(bad.said).toContain("Authenticate");
  expect(bad.said).not.toContain("wrong-token");
});

test("S3: the bucket lists with the key as typed; a missing bucket says so", async () => {
  const env = s3.env("probe-bucket");
  const ok = await probe("s3", env);
  expect(ok.ok).toBe(true);
  const missing = await probe("s3", { ...env, HEARTH_S3_BUCKET: "no-such-bucket" });
  expect(missing.ok).toBe(false);
  expect(missing.said).toContain("no-such-bucket");
});

test("chain RPC: eth_chainId names the chain", async () => {
  const ok = await probe("chain", { CHAIN_RPC_URL: `http://127.0.0.1:${rpc.port}` });
  expect(ok).toEqual({ ok: true, said: expect.stringContaining("eip155:84532") });
});

test("SMTP relay: the greeting; nothing listening says so", async () => {
  const port = (smtp.address() as { port: number }).port;
  const ok = await probe("smtp", { SMTP_RELAY_URL: `smtp://user:relay-pass@127.0.0.1:${port}` });
  expect(ok.ok).toBe(true);
  expect(ok.said).toContain("220 relay.test");
  expect(ok.said).not.toContain("relay-pass");
  const closed = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const free = closed.port;
  closed.stop(true);
  const none = await probe("smtp", { SMTP_RELAY_URL: `smtp://127.0.0.1:${free}` });
  expect(none.ok).toBe(false);
});
