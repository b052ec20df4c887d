// Write calls arriving at once, through the HTTP API: on PostgreSQL they run
// side by side (HEARTH_TEST_DB=pg), so what one call reads and then writes
// must hold when another does the same at the same moment: one wallet per
// account, caps that several payments or texts cannot pass together, wrong
// code tries each counted, collected items stored once however many requests
// collect them, and replies in one mail thread kept in one conversation.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { encodePaymentRequiredHeader, encodePaymentResponseHeader } from "@x402/core/http";
import { mailOf } from "../../core/mail/index.ts";
import { Outbox } from "../../core/mail/outbox.ts";
import { settle } from "../../core/upstream/index.ts";
import { startOpenAiFixture, type OpenAiFixture } from "../fixtures/openai/server.ts";
import { startTwilio } from "../fixtures/twilio/server.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { startSink } from "../mail/sink.ts";
import { json, recorded, startFixture } from "../upstream/fixture-server.ts";

const AT_ONCE = 12;
const NETWORK = "eip155:84532";
const ASSET = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
const PAY_TO = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C";
const SID = "AC0123456789abcdef0123456789abcdef";
const TWILIO_TOKEN = "f00dfeedf00dfeedf00dfeedf00dfeed";

/** A priced x402 server: each call costs 0.03 USDC, and a signed payment is taken as settled. */
let paidCalls = 0;
const priced = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch(req) {
    if (!req.headers.get("payment-signature")) {
      const required = {
        x402Version: 2,
        resource: { url: req.url, description: "a priced tool", mimeType: "application/json" },
        accepts: [{ scheme: "exact", network: NETWORK, asset: ASSET, amount: "30000", payTo: PAY_TO, maxTimeoutSeconds: 60, extra: { name: "USDC", version: "2" } }],
      };
      return Response.json({ error: "payment required" }, { status: 402, headers: { "PAYMENT-REQUIRED": encodePaymentRequiredHeader(required as never) } });
    }
    paidCalls++;
    const receipt = encodePaymentResponseHeader({ success: true, transaction: `0x${String(paidCalls).padStart(64, "0")}`, network: NETWORK } as never);
    return Response.json({ result: { ok: true } }, { headers: { "PAYMENT-RESPONSE": receipt } });
  },
});

const sources = startFixture({
  "/xrpc/app.bsky.feed.getFeed": () => json(recorded("bluesky", "getFeed-whats-hot.json")),
  "/api/v1/timelines/public": () => json(recorded("mastodon", "timelines-public-local.json")),
  "/feeds/videos.xml": () => new Response(recorded("youtube", "UCYO_jab_esuFRV4b17AJtAw.xml"), { headers: { "content-type": "text/xml; charset=UTF-8" } }),
});
const dir = mkdtempSync(join(tmpdir(), "hearth-concurrency-"));
writeFileSync(join(dir, "channels.json"), JSON.stringify({ channels: [{ id: "UCYO_jab_esuFRV4b17AJtAw", name: "3Blue1Brown" }] }));

const tw = startTwilio({ sid: SID, token: TWILIO_TOKEN });
let ai: OpenAiFixture;
let relay: Awaited<ReturnType<typeof startSink>>;
let h: Hearth;
const clock = new TestClock(new Date("2026-11-21T10:05:00Z").getTime());

beforeAll(async () => {
  ai = await startOpenAiFixture();
  relay = await startSink();
  h = await startHearth({
    clock,
    env: {
      // Enough connections that several writes run at once on PostgreSQL (half the pool).
      HEARTH_DATABASE_POOL: "16",
      HEARTH_METER_ACCOUNTS: "all",
      HEARTH_RATE_READS: "0",
      HEARTH_RATE_WRITES: "0",
      HEARTH_SECRET: "a test secret that is long enough",
      X402_NETWORK: NETWORK,
      X402_ASSET: ASSET,
      WALLET_SERVERS: `priced=http://127.0.0.1:${priced.port}`,
      WALLET_CAP_PER_CALL: "0.05",
      WALLET_CAP_PER_DAY: "0.10",
      TWILIO_ACCOUNT_SID: SID,
      TWILIO_AUTH_TOKEN: TWILIO_TOKEN,
      TWILIO_FROM: "+15005550006",
      TWILIO_URL: tw.url,
      SMS_DAILY_CAP: "5",
      BLUESKY_URL: sources.url,
      SOCIAL_MASTODON_SERVERS: sources.url,
      VIDEO_CHANNELS_FILE: join(dir, "channels.json"),
      YOUTUBE_URL: sources.url,
      HEARTH_COLLECTORS: "social,video",
      UPSTREAM_RETRY_MS: "1",
      AI_BASE_URL: ai.base,
      AI_MODEL: "agent-model",
      AI_OLLAMA_URL: "",
      AGENT_WORKER_SECONDS: "3600",
      MAIL_DOMAIN: "example.test",
      SMTP_PORT: "0",
      SMTP_HOST: "127.0.0.1",
      SMTP_RELAY_URL: `smtp://127.0.0.1:${relay.port}`,
    },
  });
});
afterAll(async () => {
  await settle(h.rt);
  await h.stop();
  ai.stop();
  await relay.stop();
  tw.stop();
  sources.stop();
  priced.stop(true);
});

const atOnce = <T>(n: number, fn: (i: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => fn(i)));
const count = async (text: string, ...params: unknown[]) => Number((await h.row<{ n: number }>(`SELECT count(*) AS n FROM ${text}`, ...params))!.n);

describe("wallet", () => {
  test("first requests at once make one wallet, and every one answers its address", async () => {
    const token = await h.token("wanda");
    const answers = await atOnce(AT_ONCE, () => h.call("wallet/address", {}, { token }));
    expect(answers.map((r) => r.status)).toEqual(Array(AT_ONCE).fill(200));
    const addresses = new Set(answers.map((r) => r.body.result.address));
    expect(addresses.size).toBe(1);
    const account = (await h.row<{ id: string }>("SELECT id FROM accounts WHERE username = ?", "wanda"))!.id;
    const rows = await h.rows<{ address: string }>("SELECT address FROM wallet_keys WHERE account = ?", account);
    expect(rows.map((r) => r.address)).toEqual([...addresses]);
  });

  test("payments at once do not pass the daily cap together", async () => {
    const token = await h.token("paula");
    const answers = await atOnce(AT_ONCE, () => h.call("wallet/pay", { server: "priced", tool: "notes_add", args: {} }, { token }));
    // 0.03 each under a cap of 0.10 a day: three are paid, the others refused naming the cap.
    const paid = answers.filter((r) => r.status === 200);
    expect(paid.length).toBe(3);
    expect(paid.every((r) => r.body.result.paid.atomic === "30000")).toBe(true);
    const refused = answers.filter((r) => r.status !== 200);
    expect(refused.map((r) => r.status)).toEqual(Array(AT_ONCE - 3).fill(403));
    expect(refused.every((r) => r.body.error.message.includes("WALLET_CAP_PER_DAY"))).toBe(true);
    const account = (await h.row<{ id: string }>("SELECT id FROM accounts WHERE username = ?", "paula"))!.id;
    expect(await count("wallet_payments WHERE account = ?", account)).toBe(3);
  });
});

describe("sms", () => {
  test("sends at once do not pass the daily cap together", async () => {
    const token = await h.token("sam");
    await h.grant("sam", 100);
    const before = tw.sent.length;
    const answers = await atOnce(AT_ONCE, (i) => h.call("sms/send", { to: "+447700900123", text: `hello ${i}` }, { token }));
    expect(answers.filter((r) => r.status === 200).length).toBe(5);
    expect(answers.filter((r) => r.status !== 200).map((r) => r.status)).toEqual(Array(AT_ONCE - 5).fill(429));
    expect(tw.sent.length - before).toBe(5);
  });

  test("wrong codes tried at once are each counted: four tries left, then the code is void", async () => {
    const token = await h.token("vera");
    await h.grant("vera", 100);
    const asked = await h.call("sms/verify", { number: "+447700900456" }, { token });
    expect(asked.status).toBe(200);
    const answers = await atOnce(AT_ONCE, () => h.call("sms/verify", { number: "+447700900456", code: "not-it" }, { token }));
    expect(answers.map((r) => r.status)).toEqual(Array(AT_ONCE).fill(400));
    const messages = answers.map((r) => r.body.error.message as string);
    expect(messages.filter((m) => m.includes("left")).sort()).toEqual(["wrong code: 1 try left", "wrong code: 2 tries left", "wrong code: 3 tries left", "wrong code: 4 tries left"]);
    expect(messages.filter((m) => m.includes("is void")).length).toBe(1);
    expect(messages.filter((m) => m.includes("no code is waiting")).length).toBe(AT_ONCE - 5);
  });
});

describe("collected items", () => {
  test("first social reads at once collect the posts, each stored once", async () => {
    const answers = await atOnce(AT_ONCE, () => h.call("social/list", {}));
    expect(answers.map((r) => r.status)).toEqual(Array(AT_ONCE).fill(200));
    expect(answers.map((r) => r.body.result.error)).toEqual(Array(AT_ONCE).fill(null));
    const posts = await count("social_posts");
    expect(posts).toBeGreaterThan(0);
    expect(await count("search_index WHERE service = 'social'")).toBe(posts);
  });

  test("first video reads at once archive the channel's videos, each once", async () => {
    const answers = await atOnce(AT_ONCE, () => h.call("video/list", {}));
    expect(answers.map((r) => r.status)).toEqual(Array(AT_ONCE).fill(200));
    // A read that failed to store what it fetched would say so as the collection's error.
    expect(answers.map((r) => r.body.result.error)).toEqual(Array(AT_ONCE).fill(null));
    const videos = await count("video_videos");
    expect(videos).toBeGreaterThan(0);
    expect(await count("search_index WHERE service = 'video'")).toBe(videos);
  });
});

describe("mail to an agent", () => {
  test("replies sent at once in one thread continue one conversation", async () => {
    const token = await h.token("alma");
    expect((await h.call("agent/create", { name: "research", instruction: "Answer about the garden." }, { token })).status).toBe(200);
    // Without credits the agent cannot run: its answer says so, in a thread no conversation holds yet.
    expect((await h.call("mail/send", { to: "alma+research", subject: "Soil", body: "What about the soil?" }, { token })).status).toBe(200);
    await mailOf(h.rt).settled();
    expect((await h.call("recall/list", { client: "mail" }, { token })).body.result).toEqual([]);
    await h.grant("alma", 500);
    const replies = 6;
    ai.reply(...Array.from({ length: replies }, (_, i) => ({ say: `Answer ${i}` })));
    const sent = await atOnce(replies, (i) => h.call("mail/send", { to: "alma+research", subject: "Re: Soil", body: `And ${i}?` }, { token }));
    expect(sent.map((r) => r.status)).toEqual(Array(replies).fill(200));
    await mailOf(h.rt).settled();
    const conversations = (await h.call("recall/list", { client: "mail" }, { token })).body.result as { topic: string; messages: number }[];
    expect(conversations.map((c) => [c.topic, c.messages])).toEqual([["Soil", 2 * replies]]);
  });
});

describe("the outbox", () => {
  test("passes run at once by instances sharing the database deliver each message once", async () => {
    const token = await h.token("otto");
    await h.grant("otto", 500);
    // Queued while this instance's own passes wait, so the passes below find every message due.
    mailOf(h.rt).outbox.stop();
    const messages = 5;
    for (let i = 0; i < messages; i++) {
      const r = await h.call("mail/send", { to: `friend${i}@outside.test`, subject: `Hello ${i}`, body: "Hi." }, { token });
      expect(r.body.result.delivery).toBe("queued");
    }
    // Each Outbox is what one more instance on the same database runs.
    const others = Array.from({ length: 4 }, () => new Outbox(h.rt, mailOf(h.rt)));
    const reports = await Promise.all(others.map((o) => o.runDue()));
    for (const o of others) o.stop();
    expect(reports.reduce((n, r) => n + r.sent, 0)).toBe(messages);
    expect(relay.received.map((r) => r.to[0]).sort()).toEqual(Array.from({ length: messages }, (_, i) => `friend${i}@outside.test`));
  });
});
