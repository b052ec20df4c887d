// Recall over conversations the agent recorded (against a scripted model):
// listing order and limits, a conversation's most recent messages, and search
// with its client filter, limits, highlighting and privacy.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startOpenAiFixture, type OpenAiFixture } from "../fixtures/openai/server.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";

let ai: OpenAiFixture;
let h: Hearth;
let alice: string;
let bob: string;
const clock = new TestClock(new Date("2026-11-01T08:00:00Z").getTime());

async function ask(prompt: string, answer: string, o: { conversation?: string; token?: string } = {}) {
  ai.reply({ say: answer });
  clock.advance(60_000);
  const r = await h.call("agent/ask", { prompt, ...(o.conversation ? { conversation: o.conversation } : {}) }, { token: o.token ?? alice });
  if (r.status !== 200) throw new Error(JSON.stringify(r.body));
  return r.body.result.conversation as string;
}

beforeAll(async () => {
  ai = await startOpenAiFixture();
  h = await startHearth({ clock, env: { HEARTH_METER_ACCOUNTS: "all", AI_BASE_URL: ai.base, AI_MODEL: "m", AI_OLLAMA_URL: "", UPSTREAM_RETRY_MS: "0", AGENT_WORKER: "off" } });
  alice = await h.token("alice");
  bob = await h.token("bob");
  await h.grant("alice", 1000);
  await h.grant("bob", 100);
});
afterAll(async () => {
  await h.stop();
  ai.stop();
});

test("list: most recently active first, 20 by default, with topic and client", async () => {
  const ids: string[] = [];
  for (let i = 0; i < 22; i++) ids.push(await ask(`Question number ${i} about the orchard`, `Answer ${i}.`));
  // Continuing the first conversation makes it the most recently active.
  await ask("One more about the orchard", "More.", { conversation: ids[0] });
  const list = (await h.call("recall/list", {}, { token: alice })).body.result;
  expect(list.length).toBe(20);
  expect(list[0]).toMatchObject({ id: ids[0], client: "cli", agent: "default", topic: "Question number 0 about the orchard", messages: 4 });
  expect(list.slice(1, 4).map((c: any) => c.id)).toEqual([ids[21], ids[20], ids[19]]);
  expect((await h.call("recall/list", { limit: 30 }, { token: alice })).body.result.length).toBe(22);
  expect((await h.call("recall/list", { client: "web" }, { token: alice })).body.result).toEqual([]);
  expect((await h.call("recall/list", {}, { token: bob })).body.result).toEqual([]);
  expect((await h.call("recall/list", {})).status).toBe(401);
});

test("a message stamped before a conversation's latest (the clock set back) leaves it as active as it was", async () => {
  const carol = await h.token("carol");
  await h.grant("carol", 100);
  const id = await ask("Pruning the pear tree", "In winter.", { token: carol });
  const latest = clock.now().toISOString();
  clock.advance(-3_600_000);
  await ask("And the apple tree?", "Also in winter.", { conversation: id, token: carol });
  clock.advance(3_600_000);
  const [c] = (await h.call("recall/list", {}, { token: carol })).body.result;
  expect(c).toMatchObject({ id, messages: 4, active: latest });
  // A later one moves it on.
  clock.advance(60_000);
  await ask("And the plum?", "In summer.", { conversation: id, token: carol });
  expect((await h.call("recall/list", {}, { token: carol })).body.result[0]).toMatchObject({ id, messages: 6, active: clock.now().toISOString() });
});

test("conversation: 50 messages by default, the most recent kept, oldest first", async () => {
  let id = await ask("Turn 0", "Reply 0");
  for (let i = 1; i < 26; i++) await ask(`Turn ${i}`, `Reply ${i}`, { conversation: id });
  const all = (await h.call("recall/conversation", { id, limit: 1000 }, { token: alice })).body.result;
  expect(all.messages.length).toBe(52);
  const c = (await h.call("recall/conversation", { id }, { token: alice })).body.result;
  expect(c.shown).toBe(50);
  expect(c.messages[0]).toMatchObject({ role: "user", content: "Turn 1" });
  expect(c.messages.at(-1)).toMatchObject({ role: "assistant", content: "Reply 25" });
  const times = c.messages.map((m: any) => m.at);
  expect([...times].sort()).toEqual(times);
  expect((await h.call("recall/conversation", { id }, { token: bob })).status).toBe(404);
  expect((await h.call("recall/conversation", { id: "nope" }, { token: alice })).status).toBe(404);
});

test("search: what was said and told, most recent first, with the conversation id and the words in bold", async () => {
  const older = await ask("Where did I plant the quinces?", "By the south wall.");
  const newer = await ask("Are quinces ripe yet?", "Quinces ripen in October.");
  await ask("Quinces for bob", "Bob's quinces are his.", { token: bob });
  const hits = (await h.call("recall/search", { query: "quince" }, { token: alice })).body.result;
  expect(hits.map((x: any) => [x.conversation, x.role])).toEqual([
    [newer, "assistant"],
    [newer, "user"],
    [older, "user"],
  ]);
  expect(hits[0]).toMatchObject({ client: "cli", topic: "Are quinces ripe yet?", snippet: "**Quinces** ripen in October." });
  expect(typeof hits[0].message).toBe("string");
  expect(new Date(hits[0].at).toISOString()).toBe(hits[0].at);
  // Every word must match.
  expect((await h.call("recall/search", { query: "quinces wall" }, { token: alice })).body.result).toEqual([]);
  expect((await h.call("recall/search", { query: "south wall" }, { token: alice })).body.result.map((x: any) => x.snippet)).toEqual(["By the **south** **wall**."]);
  expect((await h.call("recall/search", { query: "quince", client: "mail" }, { token: alice })).body.result).toEqual([]);
  expect((await h.call("recall/search", { query: "quince", client: "cli", limit: 1 }, { token: alice })).body.result.length).toBe(1);
  expect((await h.call("recall/search", { query: "quince" }, { token: bob })).body.result.map((x: any) => x.snippet)).toEqual(["Bob's **quinces** are his.", "**Quinces** for bob"]);
  expect((await h.call("recall/search", { query: "?!" }, { token: alice })).body.result).toEqual([]);
});

test("search: 20 results by default, at most 200, and a bad argument is a 400 naming it", async () => {
  expect((await h.call("recall/search", { query: "orchard" }, { token: alice })).body.result.length).toBe(20);
  expect((await h.call("recall/search", { query: "orchard", limit: 200 }, { token: alice })).body.result.length).toBe(23);
  const over = await h.call("recall/search", { query: "orchard", limit: 201 }, { token: alice });
  expect(over.status).toBe(400);
  expect(over.body.error.field).toBe("limit");
  const noQuery = await h.call("recall/search", {}, { token: alice });
  expect(noQuery.status).toBe(400);
  expect(noQuery.body.error.field).toBe("query");
  expect((await h.call("recall/search", { query: "x", client: "sms" }, { token: alice })).body.error.field).toBe("client");
});
