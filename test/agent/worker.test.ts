// The worker and the instance stopping: a task whose run is under way when
// the instance stops goes back to todo, saying so, instead of staying doing.
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { workerFor } from "../../plugins/agent/worker.ts";
import { startOpenAiFixture } from "../fixtures/openai/server.ts";
import { startHearth } from "../harness.ts";

test("stopping the instance cancels the task run under way and puts the task back to todo", async () => {
  const ai = await startOpenAiFixture();
  const dataDir = mkdtempSync(join(tmpdir(), "hearth-agent-worker-"));
  const env = { AI_BASE_URL: ai.base, AI_MODEL: "m", AI_OLLAMA_URL: "", UPSTREAM_RETRY_MS: "0", HEARTH_METERING: "off" };
  try {
    const h = await startHearth({ dataDir, env });
    const token = await h.token("alice");
    const task = (await h.call("tasks/create", { title: "Think for ever", assignee: "agent" }, { token })).body.result;
    ai.reply({ hang: true });
    const pass = workerFor(h.rt)!.pass();
    // Wait for the model to be asked, so the stop lands mid-run.
    while (ai.posts.length === 0) await Bun.sleep(5);
    expect(ai.posts.length).toBe(1);
    const doing = (await h.call("tasks/list", {}, { token })).body.result[0];
    expect(doing.status).toBe("doing");
    await h.stop();
    expect(await pass).toEqual([task.id]);

    const again = await startHearth({ dataDir, env: { ...env, AGENT_WORKER: "off" } });
    try {
      const after = (await again.call("tasks/list", {}, { token: await again.token("alice") })).body.result[0];
      expect(after.status).toBe("todo");
      expect(after.result).toContain("cancelled");
    } finally {
      await again.stop();
    }
  } finally {
    ai.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
