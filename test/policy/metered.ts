// An instance where every account is metered and the test meter plugin is
// loaded: meter/echo (priced, answered on the spot), meter/lookup (priced,
// reaching a provider on 127.0.0.1 whose answers are cached, so a second
// lookup of a key is free), the agent on a model fixture, and the prices of
// each read from the instance's own list. What the spending and accounting
// tests check charges against.
import { expect } from "bun:test";
import { startOpenAiFixture, type OpenAiFixture } from "../fixtures/openai/server.ts";
import { startHearth, type Hearth } from "../harness.ts";

export interface Metered {
  h: Hearth;
  ai: OpenAiFixture;
  /** Requests that reached the lookup's provider so far. */
  hits(): number;
  /** The instance's prices of meter/echo, meter/lookup, agent/ask and apps/test, in credits. */
  prices: { ECHO: number; LOOKUP: number; ASK: number; APP_TEST: number };
  stop(): Promise<void>;
}

/** Starts it, with `env` beside the meter's settings (payments, sign-up). */
export async function startMetered(env: Record<string, string> = {}): Promise<Metered> {
  const ai = await startOpenAiFixture();
  let hits = 0;
  const provider = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(req) {
      hits++;
      return Response.json({ key: new URL(req.url).searchParams.get("key") });
    },
  });
  const h = await startHearth({
    env: {
      HEARTH_METER_ACCOUNTS: "all",
      HEARTH_PLUGINS: `${import.meta.dir}/../pay/plugins`,
      HEARTH_RATE_PRICED: "0",
      HEARTH_RATE_READS: "0",
      HEARTH_RATE_WRITES: "0",
      METER_TEST_URL: `http://127.0.0.1:${provider.port}`,
      AI_BASE_URL: ai.base,
      AI_MODEL: "agent-model",
      AI_OLLAMA_URL: "",
      AGENT_MAX_STEPS: "4",
      ...env,
    },
  });
  const list = (await (await fetch(`${h.url}/api/v1/prices`)).json()).result.methods as { method: string; credits: number }[];
  const price = (path: string) => list.find((m) => m.method === path)!.credits;
  const prices = { ECHO: price("meter/echo"), LOOKUP: price("meter/lookup"), ASK: price("agent/ask"), APP_TEST: price("apps/test") };
  expect(prices.ECHO).toBeGreaterThan(0);
  expect(prices.LOOKUP).toBeGreaterThan(0);
  return {
    h,
    ai,
    hits: () => hits,
    prices,
    async stop() {
      await h.stop();
      provider.stop(true);
      ai.stop();
    },
  };
}
