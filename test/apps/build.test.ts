// apps/build against an OpenAI-compatible fixture on loopback: what the model
// is told, the checks on its page, the one retry with the problems, the 502
// after it, the price, and the 501 with no provider.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { promptOf, startOpenAiFixture, type OpenAiFixture } from "../fixtures/openai/server.ts";
import { startHearth, type Hearth } from "../harness.ts";

let ai: OpenAiFixture;
let h: Hearth;
let token: string;

const goodPage = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Water tracker</title>
<meta name="description" content="Counts the glasses of water you drink each day.">
<meta name="keywords" content="health, water">
<style>body{font-family:system-ui}</style>
</head>
<body>
<h1>Water</h1>
<output id="glasses">0</output>
<button id="add" type="button">One more glass</button>
<script>
let glasses = 0;
const out = document.getElementById("glasses");
hearth.store.get("glasses").then((v) => { glasses = v || 0; out.textContent = glasses; });
document.getElementById("add").onclick = () => { glasses++; out.textContent = glasses; hearth.store.set("glasses", glasses); };
</script>
</body>
</html>`;

const withCdn = goodPage.replace("<style>", '<script src="https://cdn.example.com/react.js"></script><style>');
const withLocalStorage = goodPage.replace(/hearth\.store\.get\("glasses"\)\.then\(\(v\) =>/, 'Promise.resolve(localStorage.getItem("glasses")).then((v) =>').replace('hearth.store.set("glasses", glasses)', 'localStorage.setItem("glasses", glasses)');

beforeAll(async () => {
  ai = await startOpenAiFixture();
  h = await startHearth({ env: { HEARTH_METER_ACCOUNTS: "all", AI_BASE_URL: ai.base, AI_MODEL: "builder", UPSTREAM_RETRY_MS: "0" } });
  token = await h.token("alice");
});
afterAll(async () => {
  await h.stop();
  ai.stop();
});

const balance = async () => (await h.call("credits/balance", {}, { token })).body.result.balance;

test("build costs 15 credits, refused with 402 before the model is asked", async () => {
  const n = ai.posts.length;
  const r = await h.call("apps/build", { prompt: "a water tracker" }, { token });
  expect(r.status).toBe(402);
  expect(ai.posts.length).toBe(n);
  expect((await h.call("apps/build", { prompt: "a water tracker" })).status).toBe(401);
});

test("the model's page, fenced in its answer, is checked and saved as the caller's app", async () => {
  await h.grant("alice", 100);
  ai.reply({ say: "Here is your app:\n\n```html\n" + goodPage + "\n```\nEnjoy!" });
  const r = await h.call("apps/build", { prompt: "Track how many glasses of water I drink" }, { token });
  expect(r.status).toBe(200);
  expect(r.body.result).toMatchObject({
    slug: "water-tracker",
    name: "Water tracker",
    description: "Counts the glasses of water you drink each day.",
    tags: ["health", "water"],
    owner: "alice",
    mine: true,
    html: goodPage,
    url: `${h.url}/apps/water-tracker`,
  });
  expect(await balance()).toBe(85);
  // What the model was told: the person's words, the store API, the sandbox's rules.
  const sent = ai.posts.at(-1)!;
  expect(sent.body.model).toBe("builder");
  const prompt = promptOf(sent);
  expect(prompt).toContain("Track how many glasses of water I drink");
  expect(prompt).toContain("hearth.store.set(key, value)");
  expect(prompt).toContain("No <script src>");
  expect(prompt).toContain("256 KB");
  // Saved like any app: readable, hosted, searchable.
  expect((await h.call("apps/read", { slug: "water-tracker" })).body.result.html).toBe(goodPage);
  expect((await fetch(`${h.url}/apps/water-tracker/frame`)).status).toBe(200);
  expect((await h.call("apps/search", { query: "glasses" })).body.result.map((a: any) => a.slug)).toEqual(["water-tracker"]);
});

test("a page that fails its checks is sent back once with the problems", async () => {
  ai.reply({ say: withCdn }, { say: goodPage });
  const before = ai.posts.length;
  const r = await h.call("apps/build", { prompt: "water again" }, { token });
  expect(r.status).toBe(200);
  expect(r.body.result.slug).toBe("water-tracker-2");
  expect(ai.posts.length).toBe(before + 2);
  const retry = ai.posts.at(-1)!.body.messages;
  // The conversation carries the model's own first page and what was wrong with it.
  expect(retry.at(-2)).toMatchObject({ role: "assistant", content: withCdn });
  expect(retry.at(-1).role).toBe("user");
  expect(retry.at(-1).content).toContain('<script src="https://cdn.example.com/react.js">');
  expect(await balance()).toBe(70);
});

test("a page that keeps its data in browser storage is refused, since the sandbox has none", async () => {
  ai.reply({ say: withLocalStorage }, { say: goodPage });
  const r = await h.call("apps/build", { prompt: "water once more" }, { token });
  expect(r.status).toBe(200);
  const retry = ai.posts.at(-1)!.body.messages.at(-1).content;
  expect(retry).toContain("browser storage");
  expect(retry).toContain("never calls hearth.store");
});

test("two failed pages answer 502 with the problems; nothing is saved or charged", async () => {
  const before = await balance();
  const apps = (await h.call("apps/search", {})).body.result.length;
  ai.reply({ say: "I cannot do that." }, { say: withCdn });
  const r = await h.call("apps/build", { prompt: "a broken app" }, { token });
  expect(r.status).toBe(502);
  expect(r.body.error.kind).toBe("upstream_failed");
  expect(r.body.error.problems.map((p: any) => p.kind)).toContain("external_script");
  expect(await balance()).toBe(before);
  expect((await h.call("apps/search", {})).body.result.length).toBe(apps);
  expect(ai.left).toBe(0);
});

test("a provider failure is the provider's error, uncharged", async () => {
  const before = await balance();
  ai.reply({ status: 401, body: { error: { message: "Incorrect API key provided", type: "invalid_request_error", param: null, code: "invalid_api_key" } } });
  const r = await h.call("apps/build", { prompt: "anything" }, { token });
  expect(r.status).toBe(502);
  expect(await balance()).toBe(before);
});

test("without a provider, build answers 501 naming the settings", async () => {
  const bare = await startHearth({ env: { AI_OLLAMA_URL: "" } });
  try {
    const t = await bare.token("alice");
    await bare.grant("alice", 100);
    const r = await bare.call("apps/build", { prompt: "a counter" }, { token: t });
    expect(r.status).toBe(501);
    expect(r.body.error.kind).toBe("not_configured");
    expect(r.body.error.message).toContain("AI_BASE_URL");
    expect((await bare.call("credits/balance", {}, { token: t })).body.result.balance).toBe(100);
  } finally {
    await bare.stop();
  }
});
