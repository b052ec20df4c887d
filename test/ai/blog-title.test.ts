// blog/create without a title: the model writes one when there is a provider,
// and the first sentence stands in when there is none or it fails.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startHearth, type Hearth } from "../harness.ts";
import { promptOf, startOpenAiFixture, type OpenAiFixture } from "../fixtures/openai/server.ts";

const content = "We finally planted tomatoes on the balcony this spring. Six plants, two kinds, and a lot of compost carried up four floors.";

let ai: OpenAiFixture;
let h: Hearth;
let token: string;
beforeAll(async () => {
  ai = await startOpenAiFixture();
  h = await startHearth({ env: { AI_BASE_URL: ai.base, AI_MODEL: "chat", UPSTREAM_RETRY_MS: "0" } });
  token = await h.token("alice");
});
afterAll(async () => {
  await h.stop();
  ai.stop();
});

test("the model is given the post and its answer, tidied, is the title", async () => {
  ai.reply({ say: 'Title: "Tomatoes Four Floors Up."' });
  const r = await h.call("blog/create", { content }, { token });
  expect(r.status).toBe(200);
  expect(r.body.result.title).toBe("Tomatoes Four Floors Up");
  expect(promptOf(ai.posts.at(-1)!)).toContain(content);
  expect(promptOf(ai.posts.at(-1)!)).toContain("title of a blog post");
  const again = await h.call("blog/read", { id: r.body.result.id }, { token });
  expect(again.body.result.title).toBe("Tomatoes Four Floors Up");
});

test("a title given by the author is kept and the model is not asked", async () => {
  const n = ai.posts.length;
  const r = await h.call("blog/create", { content, title: "Balcony garden" }, { token });
  expect(r.body.result.title).toBe("Balcony garden");
  expect(ai.posts.length).toBe(n);
});

test("when the model fails the first sentence is the title and the post is still made", async () => {
  ai.reply({ status: 500 }, { status: 500 });
  const r = await h.call("blog/create", { content }, { token });
  expect(r.status).toBe(200);
  expect(r.body.result.title).toBe("We finally planted tomatoes on the balcony this spring");
});

test("without a provider the first sentence is the title, with no request anywhere", async () => {
  const bare = await startHearth({ env: { AI_OLLAMA_URL: "" } });
  try {
    const n = ai.posts.length;
    const r = await bare.call("blog/create", { content }, { token: await bare.token("bob") });
    expect(r.status).toBe(200);
    expect(r.body.result.title).toBe("We finally planted tomatoes on the balcony this spring");
    expect(ai.posts.length).toBe(n);
  } finally {
    await bare.stop();
  }
});
