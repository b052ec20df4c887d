// text/classify, extract, summarise and translate through HTTP against a
// scripted OpenAI-compatible server: what the model is told, what the caller
// gets, the retries on off answers, the cap, and the credits charged.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHearth, type Hearth } from "../harness.ts";
import { promptOf, startOpenAiFixture, type OpenAiFixture } from "../fixtures/openai/server.ts";

let ai: OpenAiFixture;
let h: Hearth;
let token: string;

beforeAll(async () => {
  ai = await startOpenAiFixture();
  h = await startHearth({ env: { HEARTH_METER_ACCOUNTS: "all", AI_BASE_URL: ai.base, AI_API_KEY: "sk-test", AI_MODEL: "chat-small", AI_MODEL_EXTRACT: "chat-large", UPSTREAM_RETRY_MS: "0" } });
  token = await h.token("alice");
  await h.grant("alice", 1000);
});
afterAll(async () => {
  await h.stop();
  ai.stop();
});

const balance = async () => (await h.call("credits/balance", {}, { token })).body.result.balance as number;
const lastPost = () => ai.posts.at(-1)!;
const count = () => ai.posts.length;

describe("classify", () => {
  test("the prompt carries the deduplicated labels; the answer is one of them with a confidence; 1 credit", async () => {
    ai.reply({ say: '{"label": "Billing", "confidence": 0.92}' });
    const before = await balance();
    const r = await h.call("text/classify", { text: "I was charged twice for my subscription this month.", labels: "billing, technical , Billing,refund," }, { token });
    expect(r.status).toBe(200);
    expect(r.body.result).toEqual({ label: "billing", confidence: 0.92, labels: ["billing", "technical", "refund"], model: "gpt-4o-2024-08-06" });
    const sent = lastPost().body;
    expect(sent.model).toBe("chat-small");
    expect(sent.response_format).toEqual({ type: "json_object" });
    const prompt = promptOf(lastPost());
    for (const l of ['"billing"', '"technical"', '"refund"']) expect(prompt).toContain(l);
    expect(prompt).toContain("I was charged twice for my subscription this month.");
    expect(await balance()).toBe(before - 1);
  });

  test("an answer outside the labels is asked again once, telling the model what it said", async () => {
    ai.reply({ say: '{"label": "payments", "confidence": 0.8}' }, { say: '```json\n{"label": "refund", "confidence": "75%"}\n```' });
    const n = count();
    const r = await h.call("text/classify", { text: "Please give me my money back.", labels: "billing,technical,refund" }, { token });
    expect(r.status).toBe(200);
    expect(r.body.result.label).toBe("refund");
    expect(r.body.result.confidence).toBe(0.75);
    expect(count() - n).toBe(2);
    const retry = lastPost().body.messages;
    expect(retry.at(-2)).toEqual({ role: "assistant", content: '{"label": "payments", "confidence": 0.8}' });
    expect(retry.at(-1).content).toContain('"payments" is not one of the labels');
  });

  test("off-label twice is a 502 naming what it answered, and costs nothing", async () => {
    ai.reply({ say: '{"label": "payments", "confidence": 0.8}' }, { say: "It is about payments." });
    const before = await balance();
    const r = await h.call("text/classify", { text: "Please give me my money back.", labels: "billing,technical,refund" }, { token });
    expect(r.status).toBe(502);
    expect(r.body.error.kind).toBe("upstream_failed");
    expect(r.body.error.message).toContain("unusable twice");
    expect(await balance()).toBe(before);
  });

  test("fewer than two labels is a 400 on labels, and the model is not asked", async () => {
    const n = count();
    for (const labels of ["spam", "spam, Spam ,", " , "]) {
      const r = await h.call("text/classify", { text: "hello", labels }, { token });
      expect(r.status).toBe(400);
      expect(r.body.error.field).toBe("labels");
    }
    expect(count()).toBe(n);
  });
});

describe("extract", () => {
  const schema = {
    type: "object",
    properties: { name: { type: "string" }, age: { type: "integer", minimum: 0 }, email: { type: "string", format: "email" } },
    required: ["name", "age"],
    additionalProperties: false,
  };
  const text = "Maria Lopez, 34, can be reached at maria@example.org.";

  test("with a JSON Schema: the schema is in the prompt, the stronger model is used, the JSON comes back as the result; 5 credits", async () => {
    ai.reply({ say: '{"name": "Maria Lopez", "age": 34, "email": "maria@example.org"}' });
    const before = await balance();
    const r = await h.call("text/extract", { text, schema: JSON.stringify(schema) }, { token, method: "POST" });
    expect(r.status).toBe(200);
    expect(r.body.result).toEqual({ name: "Maria Lopez", age: 34, email: "maria@example.org" });
    expect(lastPost().body.model).toBe("chat-large");
    expect(lastPost().body.response_format).toEqual({ type: "json_object" });
    expect(promptOf(lastPost())).toContain(JSON.stringify(schema, null, 2));
    expect(await balance()).toBe(before - 5);
  });

  test("invalid against the schema: asked again with the validator's errors", async () => {
    ai.reply({ say: '{"name": "Maria Lopez", "age": "thirty-four", "email": "not an email", "city": "Quito"}' }, { say: '{"name": "Maria Lopez", "age": 34}' });
    const r = await h.call("text/extract", { text, schema: JSON.stringify(schema) }, { token, method: "POST" });
    expect(r.status).toBe(200);
    expect(r.body.result).toEqual({ name: "Maria Lopez", age: 34 });
    const feedback = lastPost().body.messages.at(-1).content as string;
    expect(feedback).toContain("/age must be integer");
    expect(feedback).toContain('/email must match format "email"');
    expect(feedback).toContain("must NOT have additional properties (city)");
  });

  test("invalid twice: 502 carrying the validation errors, no charge", async () => {
    ai.reply({ say: '{"name": "Maria Lopez"}' }, { say: '{"name": 7, "age": -1}' });
    const before = await balance();
    const r = await h.call("text/extract", { text, schema: JSON.stringify(schema) }, { token, method: "POST" });
    expect(r.status).toBe(502);
    expect(r.body.error.errors).toEqual(["/name must be string", "/age must be >= 0"]);
    expect(await balance()).toBe(before);
  });

  test("a plain description asks for JSON holding it; an answer that is not JSON is asked again", async () => {
    ai.reply({ say: "Sure! The people are Maria and Tom." }, { say: '[{"name": "Maria", "role": "engineer"}, {"name": "Tom", "role": "manager"}]' });
    const r = await h.call("text/extract", { text: "Maria is an engineer; Tom manages the team.", schema: "the people named and their roles" }, { token, method: "POST" });
    expect(r.status).toBe(200);
    expect(r.body.result).toEqual([
      { name: "Maria", role: "engineer" },
      { name: "Tom", role: "manager" },
    ]);
    expect(promptOf(lastPost())).toContain("The JSON should hold: the people named and their roles");
    expect(lastPost().body.response_format).toBeUndefined();
    expect(lastPost().body.messages.at(-1).content).toContain("Reply with the JSON only");
  });

  test("a schema the validator cannot compile is a 400 on schema", async () => {
    const n = count();
    const r = await h.call("text/extract", { text, schema: JSON.stringify({ type: "object", properties: { a: { type: "strnig" } } }) }, { token, method: "POST" });
    expect(r.status).toBe(400);
    expect(r.body.error.field).toBe("schema");
    expect(count()).toBe(n);
  });
});

describe("summarise", () => {
  const article = "The council approved the new park on Tuesday. Construction starts in spring. It will have a playground, a pond and 200 trees. Residents asked for more benches.";

  test("prose by default, about 3 sentences; 2 credits", async () => {
    ai.reply({ say: "Summary: The council approved a new park with a playground, pond and trees. Building starts in spring." });
    const before = await balance();
    const r = await h.call("text/summarise", { text: article }, { token });
    expect(r.status).toBe(200);
    expect(r.body.result).toEqual({ style: "prose", summary: "The council approved a new park with a playground, pond and trees. Building starts in spring.", model: "gpt-4o-2024-08-06" });
    expect(promptOf(lastPost())).toContain("about 3 sentences of plain prose");
    expect(await balance()).toBe(before - 2);
  });

  test("bullets with lines asks for that many bullets and returns them as a list", async () => {
    ai.reply({ say: "- New park approved\n- Building starts in spring\n* Playground, pond, 200 trees\n- Residents want benches" });
    const r = await h.call("text/summarise", { text: article, style: "bullets", lines: 4 }, { token });
    expect(r.status).toBe(200);
    expect(r.body.result.bullets).toEqual(["New park approved", "Building starts in spring", "Playground, pond, 200 trees", "Residents want benches"]);
    expect(r.body.result.summary).toBe("- New park approved\n- Building starts in spring\n- Playground, pond, 200 trees\n- Residents want benches");
    expect(promptOf(lastPost())).toContain("about 4 bullet points");
  });

  test("an answer that is not a list is asked again; lines out of range is a 400", async () => {
    ai.reply({ say: "The council approved a park." }, { say: "1. Park approved\n2. Spring start" });
    const r = await h.call("text/summarise", { text: article, style: "bullets", lines: 2 }, { token });
    expect(r.body.result.bullets).toEqual(["Park approved", "Spring start"]);
    const bad = await h.call("text/summarise", { text: article, lines: 0 }, { token });
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe("lines");
  });
});

describe("translate", () => {
  const source = "# Hello\n\nRun this:\n\n```sh\necho hello\n```\n\nThen **reload** the page.";

  test("a code names the language in the prompt; the formatted translation comes back; 3 credits", async () => {
    const french = "# Bonjour\n\nExécutez ceci :\n\n```sh\necho hello\n```\n\nPuis **rechargez** la page.";
    ai.reply({ say: french });
    const before = await balance();
    const r = await h.call("text/translate", { text: source, to: "fr" }, { token });
    expect(r.status).toBe(200);
    expect(r.body.result).toEqual({ text: french, to: "French", code: "fr", model: "gpt-4o-2024-08-06" });
    expect(promptOf(lastPost())).toContain("into French (fr)");
    expect(promptOf(lastPost())).toContain("Leave code blocks and inline code unchanged");
    expect(lastPost().body.messages.at(-1).content).toBe(source);
    expect(await balance()).toBe(before - 3);
  });

  test("a name is taken as given; a region code is named", async () => {
    ai.reply({ say: "Olá" }, { say: "Hallo" });
    let r = await h.call("text/translate", { text: "Hello", to: "pt-BR" }, { token });
    expect(r.body.result.to).toBe("Brazilian Portuguese");
    expect(promptOf(lastPost())).toContain("into Brazilian Portuguese (pt-BR)");
    r = await h.call("text/translate", { text: "Hello", to: "Swiss German" }, { token });
    expect(r.body.result).toEqual({ text: "Hallo", to: "Swiss German", model: "gpt-4o-2024-08-06" });
  });

  test("a translation that lost the code block is asked again; a wrapping fence is taken off", async () => {
    ai.reply({ say: "# Bonjour\n\nExécutez ceci : echo hello\n\nPuis **rechargez** la page." }, { say: "```markdown\n# Bonjour\n\n```sh\necho hello\n```\n\nPuis.\n```" });
    const r = await h.call("text/translate", { text: source, to: "French" }, { token });
    expect(r.status).toBe(200);
    expect(r.body.result.text).toBe("# Bonjour\n\n```sh\necho hello\n```\n\nPuis.");
    expect(lastPost().body.messages.at(-1).content).toContain("code block");
  });

  test("an answer cut off at the model's output limit is refused rather than passed off as whole", async () => {
    ai.reply({ say: "# Bonjour\n\nExécutez", finish_reason: "length" });
    const n = count();
    const r = await h.call("text/translate", { text: source, to: "fr" }, { token });
    expect(r.status).toBe(502);
    expect(r.body.error.message).toContain("output limit");
    expect(count() - n).toBe(1);
  });

  test("a target that is not a language is a 400 on to", async () => {
    const r = await h.call("text/translate", { text: "Hello", to: "<script>" }, { token });
    expect(r.status).toBe(400);
    expect(r.body.error.field).toBe("to");
  });
});

describe("every text method", () => {
  test("refuses more than 30,000 characters with 413 saying the cap and the length, before asking the model, without charge", async () => {
    const long = "é".repeat(30_001);
    const n = count();
    const before = await balance();
    for (const [path, args] of [
      ["text/classify", { labels: "a,b" }],
      ["text/extract", { schema: "names" }],
      ["text/summarise", {}],
      ["text/translate", { to: "de" }],
    ] as const) {
      const r = await h.call(path, { text: long, ...args }, { token, method: "POST" });
      expect(r.status).toBe(413);
      expect(r.body.error).toMatchObject({ kind: "too_large", field: "text", limit: 30000, length: 30001 });
      expect(r.body.error.message).toBe("text is 30001 characters; the cap is 30000");
    }
    expect(count()).toBe(n);
    expect(await balance()).toBe(before);
  });

  test("exactly 30,000 characters is accepted", async () => {
    ai.reply({ say: "A long run of one letter." });
    const r = await h.call("text/summarise", { text: "a".repeat(30_000) }, { token, method: "POST" });
    expect(r.status).toBe(200);
  });

  test("a GET carries the whole cap in its query string even in the longest encoding; one character more is a 413 on text, not a 431", async () => {
    // An astral character is 4 bytes of UTF-8, 12 once percent-encoded: 360,000 bytes of query string.
    for (const ch of ["😀", "字"]) {
      ai.reply({ say: "A long run of one character." });
      const at = await h.call("text/summarise", { text: ch.repeat(30_000) }, { token, method: "GET" });
      expect(at.status).toBe(200);
      expect(promptOf(lastPost())).toContain(ch.repeat(30_000));
      const over = await h.call("text/summarise", { text: ch.repeat(30_001) }, { token, method: "GET" });
      expect(over.status).toBe(413);
      expect(over.body.error).toMatchObject({ kind: "too_large", field: "text", limit: 30000, length: 30001 });
    }
  });

  test("without a provider each answers 501 naming the settings, and charges nothing", async () => {
    const bare = await startHearth({ env: { HEARTH_METER_ACCOUNTS: "all", AI_OLLAMA_URL: "" } });
    try {
      const t = await bare.token("bob");
      await bare.grant("bob", 100);
      for (const [path, args] of [
        ["text/classify", { text: "x", labels: "a,b" }],
        ["text/extract", { text: "x", schema: "names" }],
        ["text/summarise", { text: "x" }],
        ["text/translate", { text: "x", to: "de" }],
      ] as const) {
        const r = await bare.call(path, args, { token: t });
        expect(r.status).toBe(501);
        expect(r.body.error.kind).toBe("not_configured");
        expect(r.body.error.message).toContain("AI_BASE_URL");
        expect(r.body.error.message).toContain("AI_MODEL");
      }
      expect((await bare.call("credits/balance", {}, { token: t })).body.result.balance).toBe(100);
    } finally {
      await bare.stop();
    }
  });

  test("a stranger on an instance that takes no x402 payments is told the price and to send a token", async () => {
    const n = count();
    const r = await h.call("text/summarise", { text: "hello" });
    expect(r.status).toBe(402);
    expect(r.body.error.message).toContain("costs 2 credits");
    expect(count()).toBe(n);
  });
});
