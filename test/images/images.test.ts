// images/generate against a scripted OpenAI-compatible image endpoint, kept
// through the files service; images/search against a replay of Openverse.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startHearth, type Hearth } from "../harness.ts";
import { startOpenAiFixture, type OpenAiFixture } from "../fixtures/openai/server.ts";

const openverseAnswer = readFileSync(join(import.meta.dir, "../fixtures/openverse/images-search.json"), "utf8");
const PNG = Buffer.from(JSON.parse(readFileSync(join(import.meta.dir, "../fixtures/openai/image-generation.json"), "utf8")).data[0].b64_json, "base64");

function startOpenverse() {
  const seen: URL[] = [];
  const script: (() => Response)[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(req) {
      const url = new URL(req.url);
      seen.push(url);
      const next = script.shift();
      if (next) return next();
      if (url.pathname !== "/v1/images/") return new Response(JSON.stringify({ detail: "Not found." }), { status: 404 });
      return new Response(openverseAnswer, { headers: { "content-type": "application/json" } });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, seen, script, stop: () => server.stop(true) };
}

let ai: OpenAiFixture;
let ov: ReturnType<typeof startOpenverse>;
let h: Hearth;
let token: string;

beforeAll(async () => {
  ai = await startOpenAiFixture();
  ov = startOpenverse();
  h = await startHearth({ env: { HEARTH_METER_ACCOUNTS: "all", AI_BASE_URL: ai.base, AI_MODEL: "chat", AI_IMAGE_MODEL: "gpt-image-1", AI_IMAGE_SIZE: "1536x1024", OPENVERSE_URL: ov.url, UPSTREAM_RETRY_MS: "0" } });
  token = await h.token("alice");
  await h.grant("alice", 100);
});
afterAll(async () => {
  await h.stop();
  ai.stop();
  ov.stop();
});

const balance = async (t = token) => (await h.call("credits/balance", {}, { token: t })).body.result.balance as number;

describe("images/generate", () => {
  test("asks the image model, keeps the picture as the caller's file and returns its URL; 15 credits", async () => {
    ai.reply({ revised_prompt: "A red fox standing in fresh snow at dawn" });
    const before = await balance();
    const r = await h.call("images/generate", { prompt: "A red fox, in snow!" }, { token });
    expect(r.status).toBe(200);
    const out = r.body.result;
    expect(ai.posts.at(-1)!.path).toBe("/v1/images/generations");
    expect(ai.posts.at(-1)!.body).toEqual({ model: "gpt-image-1", prompt: "A red fox, in snow!", n: 1, size: "1536x1024" });
    expect(out).toMatchObject({ name: "a-red-fox-in-snow.png", type: "image/png", size: PNG.length, prompt: "A red fox, in snow!", revised_prompt: "A red fox standing in fresh snow at dawn", model: "gpt-image-1" });
    expect(out.url).toBe(`${h.url}/files/${out.file}`);
    const img = await fetch(out.url, { headers: { authorization: `Bearer ${token}` } });
    expect(img.status).toBe(200);
    expect(img.headers.get("content-type")).toContain("image/png");
    expect(Buffer.from(await img.arrayBuffer()).equals(PNG)).toBe(true);
    const mine = await h.call("files/list", {}, { token });
    expect(mine.body.result.map((f: { id: string }) => f.id)).toContain(out.file);
    expect(await balance()).toBe(before - 15);
  });

  test("the file is the caller's alone", async () => {
    ai.reply({});
    const r = await h.call("images/generate", { prompt: "lighthouse" }, { token });
    const bob = await h.token("bob");
    const other = await fetch(r.body.result.url, { headers: { authorization: `Bearer ${bob}` } });
    expect(other.status).toBe(404);
  });

  test("a provider failure stores nothing and charges nothing", async () => {
    ai.reply({ status: 400, body: { error: { message: "Your request was rejected as a result of our safety system.", type: "image_generation_user_error", param: null, code: "moderation_blocked" } } });
    const before = await balance();
    const files = (await h.call("files/list", {}, { token })).body.result.length;
    const r = await h.call("images/generate", { prompt: "something refused" }, { token });
    expect(r.status).toBe(502);
    expect(r.body.error.message).toContain("safety system");
    expect(await balance()).toBe(before);
    expect((await h.call("files/list", {}, { token })).body.result.length).toBe(files);
  });

  test("needs an account", async () => {
    const r = await h.call("images/generate", { prompt: "x" });
    expect(r.status).toBe(401);
  });

  test("without AI_IMAGE_MODEL: 501 naming it, nothing charged; a DALL-E model is asked for base64 and a URL answer is fetched", async () => {
    const bare = await startHearth({ env: { HEARTH_METER_ACCOUNTS: "all", AI_BASE_URL: ai.base, AI_MODEL: "chat" } });
    const pic = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response(PNG, { headers: { "content-type": "image/png" } }) });
    const dalle = await startHearth({ env: { HEARTH_METER_ACCOUNTS: "all", AI_BASE_URL: ai.base, AI_MODEL: "chat", AI_IMAGE_MODEL: "dall-e-3" } });
    try {
      const t = await bare.token("carol");
      await bare.grant("carol", 50);
      const r = await bare.call("images/generate", { prompt: "x" }, { token: t });
      expect(r.status).toBe(501);
      expect(r.body.error.message).toContain("AI_IMAGE_MODEL");
      expect((await bare.call("credits/balance", {}, { token: t })).body.result.balance).toBe(50);

      const d = await dalle.token("dave");
      await dalle.grant("dave", 50);
      ai.reply({ url: `http://127.0.0.1:${pic.port}/img-abc.png`, revised_prompt: "A teapot" });
      const g = await dalle.call("images/generate", { prompt: "teapot" }, { token: d });
      expect(g.status).toBe(200);
      expect(ai.posts.at(-1)!.body.response_format).toBe("b64_json");
      expect(g.body.result).toMatchObject({ name: "teapot.png", type: "image/png", size: PNG.length, model: "dall-e-3" });
    } finally {
      await bare.stop();
      await dalle.stop();
      pic.stop(true);
    }
  });
});

describe("images/search", () => {
  test("asks Openverse for the query with 20 a page by default, and returns URLs with licence and attribution; 1 credit", async () => {
    const before = await balance();
    const r = await h.call("images/search", { query: "tree bark" }, { token });
    expect(r.status).toBe(200);
    const asked = ov.seen.at(-1)!;
    expect(asked.pathname).toBe("/v1/images/");
    expect(asked.searchParams.get("q")).toBe("tree bark");
    expect(asked.searchParams.get("page_size")).toBe("20");
    const res = r.body.result;
    expect(res.total).toBe(2);
    expect(res.results[0]).toEqual({
      title: "Tree Bark Photo",
      url: "https://cdn.stocksnap.io/img-thumbs/960w/XNVBVXO3B7.jpg",
      thumbnail: "https://api.openverse.org/v1/images/4bc43a04-ef46-4544-a0c1-63c63f56e276/thumb/",
      page: "https://stocksnap.io/photo/XNVBVXO3B7",
      creator: "Tim Sullivan",
      creator_url: "https://www.secretagencygroup.com",
      license: "CC0 1.0",
      license_code: "cc0",
      license_version: "1.0",
      license_url: "https://creativecommons.org/publicdomain/zero/1.0/",
      attribution: '"Tree Bark Photo" by Tim Sullivan is marked with CC0 1.0. To view the terms, visit https://creativecommons.org/publicdomain/zero/1.0/.',
      width: 6016,
      height: 4016,
      source: "stocksnap",
    });
    expect(res.results[1]).toMatchObject({ license: "CC BY 2.0", creator: "Sean MacEntee", page: "https://www.flickr.com/photos/18090920@N07/4459771899" });
    expect(res.about.source).toBe("Openverse");
    expect(await balance()).toBe(before - 1);
  });

  test("the same search again is answered from the cache, free", async () => {
    const asked = ov.seen.length;
    const before = await balance();
    const r = await h.call("images/search", { query: "tree bark" }, { token });
    expect(r.status).toBe(200);
    expect(r.body.result.about.cached).toBe(true);
    expect(ov.seen.length).toBe(asked);
    expect(await balance()).toBe(before);
  });

  test("limit sets the page size; past 20 (Openverse's cap for keyless callers) is a 400 on limit", async () => {
    const r = await h.call("images/search", { query: "bark", limit: 1 }, { token });
    expect(ov.seen.at(-1)!.searchParams.get("page_size")).toBe("1");
    expect(r.body.result.results.length).toBe(1);
    const over = await h.call("images/search", { query: "bark", limit: 21 }, { token });
    expect(over.status).toBe(400);
    expect(over.body.error.field).toBe("limit");
  });

  test("Openverse failing is a 503 with retry: true, not charged; an answer without results is a 502", async () => {
    const before = await balance();
    ov.script.push(
      () => new Response("busy", { status: 503 }),
      () => new Response("busy", { status: 503 }),
    );
    let r = await h.call("images/search", { query: "lighthouse" }, { token });
    expect(r.status).toBe(503);
    expect(r.body.error.retry).toBe(true);
    ov.script.push(() => Response.json({ detail: "Something odd" }));
    r = await h.call("images/search", { query: "harbour" }, { token });
    expect(r.status).toBe(502);
    expect(await balance()).toBe(before);
  });
});
