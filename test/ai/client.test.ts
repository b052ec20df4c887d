// one store: the model client's wire protocol; the usage it records runs on both stores in test/ai/cli.test.ts
// The model client (capability `ai`) against a scripted OpenAI-compatible
// server: what goes on the wire, what comes back, retries, failures, streaming.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { usageSince } from "../../core/ai/usage.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { startOpenAiFixture, type OpenAiFixture } from "../fixtures/openai/server.ts";

const PLUGINS = join(import.meta.dir, "plugins");
const user = (content: string) => JSON.stringify([{ role: "user", content }]);
const weatherTool = {
  type: "function",
  function: { name: "get_weather", description: "Current weather for a place.", parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"] } },
};

describe("with AI_BASE_URL", () => {
  let ai: OpenAiFixture;
  let h: Hearth;
  beforeAll(async () => {
    ai = await startOpenAiFixture();
    h = await startHearth({
      env: { HEARTH_PLUGINS: PLUGINS, AI_BASE_URL: ai.base, AI_API_KEY: "sk-test", AI_MODEL: "small-model", AI_MODEL_EXTRACT: "big-model", AI_IMAGE_MODEL: "gpt-image-1", UPSTREAM_RETRY_MS: "0", AI_TIMEOUT_MS: "5000" },
    });
  });
  afterAll(async () => {
    await h.stop();
    ai.stop();
  });
  const posts = () => ai.posts.length;

  test("a chat sends the model, the messages and the key, and answers text with its usage, recorded per request", async () => {
    ai.reply({ say: "Hello there.", usage: { prompt_tokens: 11, completion_tokens: 3 } });
    const before = posts();
    const r = await h.call("aiprobe/chat", { messages: user("Say hello") });
    expect(r.status).toBe(200);
    expect(r.body.result.text).toBe("Hello there.");
    expect(r.body.result.tool_calls).toEqual([]);
    expect(r.body.result.finish_reason).toBe("stop");
    expect(r.body.result.usage).toEqual({ prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 });
    expect(r.body.result.spent).toEqual({ requests: 1, prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 });
    const sent = ai.posts[before];
    expect(sent.path).toBe("/v1/chat/completions");
    expect(sent.headers.authorization).toBe("Bearer sk-test");
    expect(sent.body.model).toBe("small-model");
    expect(sent.body.messages).toEqual([{ role: "user", content: "Say hello" }]);
    expect(sent.body.stream).toBeUndefined();
    const rows = (await usageSince(h.rt, 0)).filter((u) => u.service === "aiprobe" && u.model === "small-model");
    expect(rows[0].prompt_tokens).toBeGreaterThanOrEqual(11);
    expect(rows[0].completion_tokens).toBeGreaterThanOrEqual(3);
  });

  test("tools and tool_choice go to the model; tool calls come back parsed, with the message to echo", async () => {
    ai.reply({ calls: [{ name: "get_weather", arguments: '{"location":"Shanghai"}', id: "call_qOf" }] });
    const before = posts();
    const r = await h.call("aiprobe/chat", { messages: user("Weather in Shanghai?"), tools: JSON.stringify([weatherTool]), tool_choice: "required" });
    expect(r.status).toBe(200);
    const a = r.body.result;
    expect(ai.posts[before].body.tools).toEqual([weatherTool]);
    expect(ai.posts[before].body.tool_choice).toBe("required");
    expect(a.text).toBe("");
    expect(a.finish_reason).toBe("tool_calls");
    expect(a.tool_calls).toEqual([{ id: "call_qOf", name: "get_weather", arguments: { location: "Shanghai" }, raw: '{"location":"Shanghai"}' }]);
    expect(a.message).toEqual({ role: "assistant", content: null, tool_calls: [{ id: "call_qOf", type: "function", function: { name: "get_weather", arguments: '{"location":"Shanghai"}' } }] });

    // The next turn carries the assistant message and the tool's result exactly as given.
    ai.reply({ say: "It is 21 degrees in Shanghai." });
    const history = [{ role: "user", content: "Weather in Shanghai?" }, a.message, { role: "tool", tool_call_id: "call_qOf", content: '{"temperature":21}' }];
    const again = await h.call("aiprobe/chat", { messages: JSON.stringify(history), tools: JSON.stringify([weatherTool]) }, { method: "POST" });
    expect(again.body.result.text).toBe("It is 21 degrees in Shanghai.");
    expect(ai.posts[before + 1].body.messages).toEqual(history);
  });

  test("tool arguments that are not a JSON object are handed back unparsed with the reason", async () => {
    ai.reply({ calls: [{ name: "get_weather", arguments: '{"location": "Sha' }, { name: "get_weather", arguments: "[1,2]" }] });
    const r = await h.call("aiprobe/chat", { messages: user("?"), tools: JSON.stringify([weatherTool]) });
    expect(r.status).toBe(200);
    const [broken, notObject] = r.body.result.tool_calls;
    expect(broken.arguments).toBeNull();
    expect(broken.invalid).toContain("not valid JSON");
    expect(broken.raw).toBe('{"location": "Sha');
    expect(notObject.invalid).toBe("the arguments must be a JSON object");
  });

  test("streaming hands text over in pieces, asks for usage, and returns the whole answer", async () => {
    ai.reply({ stream: ["Sure", ", here", " we go."], usage: true });
    const before = posts();
    const r = await h.call("aiprobe/chat", { messages: user("Go"), stream: true });
    expect(r.status).toBe(200);
    expect(ai.posts[before].body.stream).toBe(true);
    expect(ai.posts[before].body.stream_options).toEqual({ include_usage: true });
    expect(ai.posts[before].headers.accept).toBe("text/event-stream");
    expect(r.body.result.pieces).toEqual(["Sure", ", here", " we go."]);
    expect(r.body.result.text).toBe("Sure, here we go.");
    expect(r.body.result.usage).toEqual({ prompt_tokens: 40, completion_tokens: 12, total_tokens: 52 });
  });

  test("streamed tool calls are put together from their pieces", async () => {
    ai.reply({ stream: [], calls: [{ name: "get_weather", arguments: '{"location":"Lagos"}', id: "call_s1" }] });
    const r = await h.call("aiprobe/chat", { messages: user("Weather in Lagos?"), tools: JSON.stringify([weatherTool]), stream: true });
    expect(r.status).toBe(200);
    expect(r.body.result.pieces).toEqual([]);
    expect(r.body.result.finish_reason).toBe("tool_calls");
    expect(r.body.result.tool_calls).toEqual([{ id: "call_s1", name: "get_weather", arguments: { location: "Lagos" }, raw: '{"location":"Lagos"}' }]);
  });

  test("a reasoning model's <think> block never reaches the text or the stream", async () => {
    ai.reply({ stream: ["<think>", "The user wants a greeting.", "</think>", "\n\nHi!"] });
    const r = await h.call("aiprobe/chat", { messages: user("Greet me"), stream: true });
    expect(r.body.result.text).toBe("Hi!");
    expect(r.body.result.pieces.join("")).toBe("Hi!");
    ai.reply({ say: "<think>hmm</think>\nPlain answer." });
    const plain = await h.call("aiprobe/chat", { messages: user("?") });
    expect(plain.body.result.text).toBe("Plain answer.");
  });

  test("a server that refuses json mode is asked again without it", async () => {
    ai.reply({ status: 400, body: { error: "'response_format.type' must be 'json_schema' or 'text'" } }, { say: '{"ok": true}' });
    const before = posts();
    const r = await h.call("aiprobe/chat", { messages: user("json please"), json: true });
    expect(r.status).toBe(200);
    expect(r.body.result.text).toBe('{"ok": true}');
    expect(ai.posts[before].body.response_format).toEqual({ type: "json_object" });
    expect(ai.posts[before + 1].body.response_format).toBeUndefined();
  });

  test("task extract uses AI_MODEL_EXTRACT", async () => {
    ai.reply({ say: "{}" });
    const before = posts();
    await h.call("aiprobe/chat", { messages: user("extract"), task: "extract" });
    expect(ai.posts[before].body.model).toBe("big-model");
  });

  test("a transient failure is tried once more: 503, 500, a body that is not JSON, an answer without choices", async () => {
    for (const bad of [{ status: 503 }, { status: 500 }, { raw: "<html>Bad Gateway</html>", type: "text/html" }, { raw: '{"object":"chat.completion","choices":[]}' }] as const) {
      ai.reply(bad, { say: "Recovered." });
      const before = posts();
      const r = await h.call("aiprobe/chat", { messages: user("?") });
      expect(r.status).toBe(200);
      expect(r.body.result.text).toBe("Recovered.");
      expect(posts() - before).toBe(2);
    }
  });

  test("a transient failure twice is a 502 or 503 with retry: true, after exactly two requests", async () => {
    ai.reply({ status: 502 }, { status: 502 });
    let before = posts();
    let r = await h.call("aiprobe/chat", { messages: user("?") });
    expect(r.status).toBe(502);
    expect(r.body.error.kind).toBe("upstream_failed");
    expect(r.body.error.retry).toBe(true);
    expect(posts() - before).toBe(2);
    ai.reply({ raw: "not json" }, { raw: "still not json" });
    before = posts();
    r = await h.call("aiprobe/chat", { messages: user("?") });
    expect(r.status).toBe(502);
    expect(r.body.error.message).toContain("not JSON");
    expect(posts() - before).toBe(2);
  });

  test("a refused key is not retried and names AI_API_KEY with the provider's message", async () => {
    ai.reply({ status: 401 });
    const before = posts();
    const r = await h.call("aiprobe/chat", { messages: user("?") });
    expect(r.status).toBe(502);
    expect(r.body.error.message).toContain("AI_API_KEY");
    expect(r.body.error.message).toContain("Incorrect API key provided");
    expect(posts() - before).toBe(1);
  });

  test("an unknown model names AI_MODEL; a rate limit is a 503 carrying Retry-After", async () => {
    ai.reply({ status: 404, body: { error: { message: "The model `small-model` does not exist", type: "invalid_request_error", param: null, code: "model_not_found" } } });
    let r = await h.call("aiprobe/chat", { messages: user("?") });
    expect(r.status).toBe(502);
    expect(r.body.error.message).toContain("AI_MODEL");
    expect(r.body.error.message).toContain("does not exist");
    ai.reply({ status: 429, headers: { "retry-after": "20" }, body: { error: { message: "Rate limit reached", type: "requests", param: null, code: "rate_limit_exceeded" } } });
    r = await h.call("aiprobe/chat", { messages: user("?") });
    expect(r.status).toBe(503);
    expect(r.headers.get("retry-after")).toBe("20");
  });

  test("no answer within AI_TIMEOUT_MS is a 504, not retried", async () => {
    ai.reply({ hang: true }, { say: "too late" });
    const before = posts();
    const r = await h.call("aiprobe/chat", { messages: user("?") });
    expect(r.status).toBe(504);
    expect(r.body.error.kind).toBe("upstream_timeout");
    expect(r.body.error.message).toContain("AI_TIMEOUT_MS");
    expect(posts() - before).toBe(1);
    // The reply a retry would have taken is still waiting.
    const next = await h.call("aiprobe/chat", { messages: user("?") });
    expect(next.body.result.text).toBe("too late");
  });

  test("a stream that breaks off after text reached the caller is not repeated; one that breaks before is", async () => {
    ai.reply({ stream: ["One", " two", " three", " four"], cut: true });
    let before = posts();
    let r = await h.call("aiprobe/chat", { messages: user("Count"), stream: true });
    expect(r.status).toBe(502);
    expect(r.body.error.message).toContain("ended its stream");
    expect(posts() - before).toBe(1);

    ai.reply({ status: 503 }, { stream: ["Fine."] });
    before = posts();
    r = await h.call("aiprobe/chat", { messages: user("Count"), stream: true });
    expect(r.status).toBe(200);
    expect(r.body.result.pieces).toEqual(["Fine."]);
    expect(posts() - before).toBe(2);
  });

  test("failed requests are recorded as such", async () => {
    const failed = (await usageSince(h.rt, 0))
      .filter((u) => u.service === "aiprobe")
      .reduce((n, u) => n + u.failed, 0);
    expect(failed).toBeGreaterThanOrEqual(5);
  });

  test("images: model, prompt and size go to /images/generations; the PNG comes back with its usage", async () => {
    ai.reply({ image: undefined });
    const before = posts();
    const r = await h.call("aiprobe/image", { prompt: "a red fox in snow" });
    expect(r.status).toBe(200);
    expect(ai.posts[before].path).toBe("/v1/images/generations");
    expect(ai.posts[before].body).toEqual({ model: "gpt-image-1", prompt: "a red fox in snow", n: 1, size: "1024x1024" });
    expect(r.body.result).toMatchObject({ type: "image/png", ext: "png", model: "gpt-image-1", usage: { prompt_tokens: 50, completion_tokens: 1056, total_tokens: 1106 } });
  });

  test("images: bytes that are not an image are retried, then refused", async () => {
    const junk = Buffer.from("definitely not a picture").toString("base64");
    ai.reply({ image: junk }, { image: junk });
    const r = await h.call("aiprobe/image", { prompt: "x" });
    expect(r.status).toBe(502);
    expect(r.body.error.message).toContain("not a PNG");
  });
});

describe("provider discovery", () => {
  test("nothing configured and no Ollama: every request is a 501 naming the settings", async () => {
    const h = await startHearth({ env: { HEARTH_PLUGINS: PLUGINS, AI_OLLAMA_URL: "" } });
    try {
      for (const path of ["aiprobe/chat", "aiprobe/provider", "aiprobe/image"]) {
        const r = await h.call(path, path.endsWith("chat") ? { messages: user("?") } : path.endsWith("image") ? { prompt: "x" } : {});
        expect(r.status).toBe(501);
        expect(r.body.error.kind).toBe("not_configured");
        expect(r.body.error.message).toContain(path.endsWith("image") ? "AI_IMAGE_MODEL" : "AI_BASE_URL");
      }
      const r = await h.call("aiprobe/chat", { messages: user("?") });
      expect(r.body.error.settings).toEqual(["AI_BASE_URL", "AI_API_KEY", "AI_MODEL", "AI_MODEL_EXTRACT"]);
    } finally {
      await h.stop();
    }
  });

  test("an Ollama that does not answer is a 501 saying so", async () => {
    const closed = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
    const url = `http://127.0.0.1:${closed.port}`;
    closed.stop(true);
    const h = await startHearth({ env: { HEARTH_PLUGINS: PLUGINS, AI_OLLAMA_URL: url } });
    try {
      const r = await h.call("aiprobe/chat", { messages: user("?") });
      expect(r.status).toBe(501);
      expect(r.body.error.message).toContain("no Ollama answers");
    } finally {
      await h.stop();
    }
  });

  test("without AI_BASE_URL, Ollama on AI_OLLAMA_URL is used with its most recent model", async () => {
    const ollama = await startOpenAiFixture();
    const h = await startHearth({ env: { HEARTH_PLUGINS: PLUGINS, AI_OLLAMA_URL: ollama.url } });
    try {
      const p = await h.call("aiprobe/provider");
      expect(p.body.result).toEqual({ source: "ollama", label: `Ollama at ${new URL(ollama.url).host}`, model: "llama3.2:latest", extract_model: "llama3.2:latest" });
      ollama.reply({ say: "Hi from Ollama." });
      const r = await h.call("aiprobe/chat", { messages: user("?") });
      expect(r.body.result.text).toBe("Hi from Ollama.");
      const sent = ollama.posts.at(-1)!;
      expect(sent.path).toBe("/v1/chat/completions");
      expect(sent.body.model).toBe("llama3.2:latest");
      expect(sent.headers.authorization).toBeUndefined();
    } finally {
      await h.stop();
      ollama.stop();
    }
  });

  test("AI_BASE_URL without AI_MODEL uses the one model the server lists, and names the choices when there are several", async () => {
    const one = await startOpenAiFixture({ models: ["local-gguf"] });
    const many = await startOpenAiFixture({ models: ["gpt-4o", "gpt-4o-mini", "o3"] });
    const h1 = await startHearth({ env: { HEARTH_PLUGINS: PLUGINS, AI_BASE_URL: one.base } });
    const h2 = await startHearth({ env: { HEARTH_PLUGINS: PLUGINS, AI_BASE_URL: many.base, AI_API_KEY: "sk-x" } });
    try {
      expect((await h1.call("aiprobe/provider")).body.result.model).toBe("local-gguf");
      const r = await h2.call("aiprobe/provider");
      expect(r.status).toBe(501);
      expect(r.body.error.message).toContain("AI_MODEL is empty");
      expect(r.body.error.message).toContain("gpt-4o, gpt-4o-mini, o3");
      expect(many.seen.at(-1)!.headers.authorization).toBe("Bearer sk-x");
    } finally {
      await h1.stop();
      await h2.stop();
      one.stop();
      many.stop();
    }
  });

  test("a provider that cannot be reached is a 503 after one retry", async () => {
    const closed = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
    const base = `http://127.0.0.1:${closed.port}/v1`;
    closed.stop(true);
    const h = await startHearth({ env: { HEARTH_PLUGINS: PLUGINS, AI_BASE_URL: base, AI_MODEL: "m", UPSTREAM_RETRY_MS: "0" } });
    try {
      const r = await h.call("aiprobe/chat", { messages: user("?") });
      expect(r.status).toBe(503);
      expect(r.body.error.kind).toBe("upstream_unavailable");
      expect(r.body.error.message).toContain("could not be reached");
    } finally {
      await h.stop();
    }
  });
});
