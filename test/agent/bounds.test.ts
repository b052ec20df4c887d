// The agent's time and credit bounds: time is the instance clock (moved here
// by the model's answers arriving, through a loopback relay in front of the
// scripted model), credits are the prices of the methods it calls.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startOpenAiFixture, type OpenAiFixture } from "../fixtures/openai/server.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";

let ai: OpenAiFixture;
let relay: ReturnType<typeof Bun.serve>;
let h: Hearth;
let alice: string;
const clock = new TestClock(new Date("2026-11-21T09:00:00Z").getTime());
/** How far the instance clock moves while the model thinks, per request. */
let thinking = 0;

beforeAll(async () => {
  ai = await startOpenAiFixture();
  relay = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const url = new URL(req.url);
      const res = await fetch(ai.url + url.pathname, { method: req.method, headers: req.headers, body: req.method === "POST" ? await req.text() : undefined });
      if (req.method === "POST") clock.advance(thinking);
      return new Response(await res.arrayBuffer(), { status: res.status, headers: res.headers });
    },
  });
  h = await startHearth({
    clock,
    env: { HEARTH_METER_ACCOUNTS: "all", AI_BASE_URL: `http://127.0.0.1:${relay.port}/v1`, AI_MODEL: "m", AI_OLLAMA_URL: "", UPSTREAM_RETRY_MS: "0", AGENT_WORKER: "off", AGENT_MAX_SECONDS: "100", AGENT_MAX_CREDITS: "5", AGENT_MAX_STEPS: "10" },
  });
  alice = await h.token("alice");
  await h.grant("alice", 100);
});
afterAll(async () => {
  await h.stop();
  relay.stop(true);
  ai.stop();
});

test("AGENT_SERVICES narrows the tools offered to the services it names", async () => {
  const narrow = await startHearth({ env: { AI_BASE_URL: ai.base, AI_MODEL: "m", AI_OLLAMA_URL: "", AGENT_WORKER: "off", AGENT_SERVICES: "notes, tasks", HEARTH_METERING: "off" } });
  try {
    const token = await narrow.token("alice");
    const before = ai.posts.length;
    ai.reply({ say: "Fine." });
    expect((await narrow.call("agent/ask", { prompt: "hi" }, { token })).status).toBe(200);
    const services = new Set(ai.posts[before].body.tools.map((t: any) => t.function.name.split("_")[0]));
    expect(services).toEqual(new Set(["notes", "tasks"]));
  } finally {
    await narrow.stop();
  }
});

const balance = async () => (await h.call("credits/balance", {}, { token: alice })).body.result.balance as number;

test("a run stops at its wall-time bound on the instance clock and says so", async () => {
  thinking = 70_000;
  try {
    for (let i = 0; i < 4; i++) ai.reply({ calls: [{ name: "notes_list", arguments: "{}" }] });
    const r = await h.call("agent/ask", { prompt: "Keep going." }, { token: alice });
    expect(r.status).toBe(200);
    // Asked at 0 s and 70 s; by 140 s the 100 s bound has passed, so no third request.
    expect(r.body.result).toMatchObject({ stopped: "time", steps: 2 });
    expect(r.body.result.answer).toContain("AGENT_MAX_SECONDS");
    expect(ai.left).toBe(2);
  } finally {
    thinking = 0;
    while (ai.left) await fetch(`${ai.base}/chat/completions`, { method: "POST", body: "{}" });
  }
});

test("a call that would take the run past its credit bound is not made, and the run says so", async () => {
  const before = await balance();
  const posts = ai.posts.length;
  // text/summarise costs 2 and asks the model itself; the third would take the run to 6, past its 5.
  const summarise = { name: "text_summarise", arguments: JSON.stringify({ text: "Long text about apples and pears." }) };
  ai.reply({ calls: [summarise, summarise, summarise] }, { say: "Apples and pears." }, { say: "Apples, pears." });
  const r = await h.call("agent/ask", { prompt: "Summarise it three times." }, { token: alice });
  expect(r.status).toBe(200);
  expect(r.body.result).toMatchObject({ stopped: "credits", credits: 4 });
  expect(r.body.result.calls.map((c: any) => [c.ok, c.status ?? 200])).toEqual([
    [true, 200],
    [true, 200],
    [false, 402],
  ]);
  expect(r.body.result.answer).toContain("AGENT_MAX_CREDITS");
  // The run itself (2) and the two summaries (2 each); the third was never called.
  expect(before - (await balance())).toBe(6);
  expect(ai.posts.length - posts).toBe(3);
  expect(ai.left).toBe(0);
});
