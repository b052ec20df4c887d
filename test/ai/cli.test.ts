// `hearth ai status` and `hearth ai usage` read the same settings and the same
// ai_usage rows the server writes.
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startHearth } from "../harness.ts";
import { startOpenAiFixture } from "../fixtures/openai/server.ts";

const MAIN = join(import.meta.dir, "../../core/cli/main.ts");

async function cli(args: string[], env: Record<string, string>) {
  const p = Bun.spawn(["bun", MAIN, ...args], { env: { ...process.env, HEARTH_LOG: "off", ...env }, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = [await new Response(p.stdout).text(), await new Response(p.stderr).text(), await p.exited];
  return { out, err, code };
}

test("usage adds up the tokens of each service's requests; status names the server and models", async () => {
  const ai = await startOpenAiFixture();
  const dir = mkdtempSync(join(tmpdir(), "hearth-ai-cli-"));
  const settings = { HEARTH_METER_ACCOUNTS: "all", AI_BASE_URL: ai.base, AI_MODEL: "chat-small", AI_OLLAMA_URL: "" };
  const h = await startHearth({ env: settings, dataDir: dir });
  // The CLI with the same settings, on the instance's data folder and database.
  const env = { ...settings, ...h.env };
  try {
    const token = await h.token("alice");
    await h.grant("alice", 50);
    ai.reply({ say: '{"label": "a", "confidence": 0.5}', usage: { prompt_tokens: 100, completion_tokens: 10 } }, { say: "Short.", usage: { prompt_tokens: 200, completion_tokens: 20 } });
    expect((await h.call("text/classify", { text: "x", labels: "a,b" }, { token })).status).toBe(200);
    expect((await h.call("text/summarise", { text: "x" }, { token })).status).toBe(200);
  } finally {
    await h.stop();
  }
  try {
    const usage = await cli(["ai", "usage", "--days", "100000"], env);
    expect(usage.code).toBe(0);
    const rows = JSON.parse(usage.out).usage;
    expect(rows).toEqual([{ service: "text", model: "chat-small", kind: "chat", requests: 2, failed: 0, prompt_tokens: 300, completion_tokens: 30, total_tokens: 330 }]);

    const status = await cli(["ai", "status"], env);
    expect(JSON.parse(status.out)).toEqual({ configured: true, source: "AI_BASE_URL", server: new URL(ai.base).host, model: "chat-small", extract_model: "chat-small", image_model: null });
    const none = await cli(["ai", "status"], { ...env, AI_BASE_URL: "" });
    expect(none.code).toBe(1);
    expect(JSON.parse(none.out).configured).toBe(false);
  } finally {
    ai.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
