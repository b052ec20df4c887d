// one store: how long a caller's pattern may run on a model's answer; nothing in it depends on the store
// A caller's JSON Schema patterns run on the model's answer in linear time, so
// a pattern that backtracks exponentially cannot hold the instance. Hearth
// runs in its own process here: were it stuck, this test would still be free
// to notice, and to end it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startOpenAiFixture, type OpenAiFixture } from "../fixtures/openai/server.ts";
import { call, cli, serve, type Served } from "../hardening/process.ts";
import { storeEnv } from "../harness.ts";

const dir = mkdtempSync(join(tmpdir(), "hearth-patterns-"));
let ai: OpenAiFixture;
let h: Served | null = null;
let token: string;

beforeAll(async () => {
  ai = await startOpenAiFixture();
  // On the store the suite runs on (a PostgreSQL database of the folder's own under HEARTH_TEST_DB=pg).
  const env = { AI_BASE_URL: ai.base, AI_API_KEY: "sk-test", AI_MODEL: "chat-small", UPSTREAM_RETRY_MS: "0", HEARTH_METERING: "off", ...(await storeEnv(dir)) };
  token = (await cli(["token", "create", "--user", "alice"], { ...env, HEARTH_DATA: dir })).out;
  h = await serve(dir, env);
});
afterAll(async () => {
  // SIGKILL: a process stuck in a regular expression never reaches its SIGTERM handler.
  await h?.kill9();
  ai?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Waits until the stand-in model has been asked `n` times in all. */
async function asked(n: number) {
  while (ai.posts.length < n) await Bun.sleep(10);
}

// Each near-miss makes a backtracking engine try about 2^60 ways (the built-in one gives up after a
// second or two and calls it no match); two hundred of them in one answer would hold it for minutes.
const nearMisses = (c: string, end: string) => Array.from({ length: 200 }, (_, i) => `${c.repeat(60)}${end}${i}`);

/**
 * Asks for `schema` where the model first answers `bad`; the second answer is held back until
 * /health has answered, so the call is still open when it does. Returns what the model was told was wrong.
 */
async function judgedWhileOpen(schema: object, bad: object, good: object) {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const before = ai.posts.length;
  ai.reply({ say: JSON.stringify(bad) }, { after: held, then: { say: JSON.stringify(good) } });
  let settled = false;
  const extract = call(h!.url, "text/extract", { text: "The code is aaaa.", schema: JSON.stringify(schema) }, token).finally(() => (settled = true));

  // The second question means the first answer has been judged.
  await asked(before + 2);
  const health = await fetch(`${h!.url}/health`);
  expect(health.status).toBe(200);
  expect(settled).toBe(false);

  release();
  const r = await extract;
  expect(r.status).toBe(200);
  expect(r.body.result).toEqual(good);
  return ai.posts[before + 1].body.messages.at(-1).content as string;
}

test(
  "a catastrophic pattern is judged in linear time, and /health answers while the call is open",
  async () => {
    const schema = { type: "object", properties: { codes: { type: "array", items: { type: "string", pattern: "^(a+)+$" } } }, required: ["codes"] };
    const feedback = await judgedWhileOpen(schema, { codes: nearMisses("a", "b") }, { codes: ["aaaa"] });
    expect(feedback).toContain('/codes/0 must match pattern "^(a+)+$"');
  },
);

test(
  "catastrophic patternProperties are judged in linear time too",
  async () => {
    const schema = { type: "object", patternProperties: { "^(b+)+$": { type: "integer" } }, additionalProperties: false };
    const keys = nearMisses("b", "c");
    const feedback = await judgedWhileOpen(schema, Object.fromEntries(keys.map((k) => [k, 1])), { bbbb: 1 });
    expect(feedback).toContain(`must NOT have additional properties (${keys[0]})`);
  },
);

test("a pattern the linear engine cannot run is a 400 on schema, and the model is not asked", async () => {
  const before = ai.posts.length;
  const r = await call(h!.url, "text/extract", { text: "x", schema: JSON.stringify({ type: "object", properties: { a: { type: "string", pattern: "^(?=a)a(b)\\1$" } } }) }, token);
  expect(r.status).toBe(400);
  expect(r.body.error.field).toBe("schema");
  expect(r.body.error.message).toContain("lookahead");
  expect(ai.posts.length).toBe(before);
});
