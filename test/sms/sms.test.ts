// Texts through a loopback Twilio: sending (E.164, segments and their price,
// the daily cap, STOP and START), inbound texts through the signed webhook,
// history, the sending number, and verifying a number with a texted code.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { findAccount } from "../../core/auth/tokens.ts";
import { balanceOf } from "../../core/pay/ledger.ts";
import { segmentsOf } from "../../plugins/sms/segments.ts";
import { twilioSignature } from "../../plugins/sms/signature.ts";
import { startTwilio } from "../fixtures/twilio/server.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";

const SID = "AC0123456789abcdef0123456789abcdef";
const TOKEN = "f00dfeedf00dfeedf00dfeedf00dfeed";
const FROM = "+15005550006";
const clock = new TestClock(new Date("2026-11-21T09:00:00Z").getTime());

/** Twilio's documented algorithm, written out here so the server's own is checked against it. */
function sign(token: string, url: string, params: Record<string, string>): string {
  const data = Object.keys(params)
    .sort()
    .reduce((acc, k) => acc + k + params[k], url);
  return createHmac("sha1", token).update(Buffer.from(data, "utf8")).digest("base64");
}

let tw: ReturnType<typeof startTwilio>;
let h: Hearth;
let alice: string;
let bob: string;

beforeAll(async () => {
  tw = startTwilio({ sid: SID, token: TOKEN });
  h = await startHearth({ clock, env: { HEARTH_METER_ACCOUNTS: "all", TWILIO_ACCOUNT_SID: SID, TWILIO_AUTH_TOKEN: TOKEN, TWILIO_FROM: FROM, TWILIO_URL: tw.url, SMS_DAILY_CAP: "6" } });
  alice = await h.token("alice");
  bob = await h.token("bob");
  await h.grant("alice", 1000);
  await h.grant("bob", 1000);
});
afterAll(async () => {
  await h.stop();
  tw.stop();
});

const balance = async (user: string) => balanceOf(h.rt.store.rdb, (await findAccount(h.rt.store, user))!.id);

/** Twilio's incoming-message webhook body (the recorded one), from `from` saying `body`. */
function inbound(from: string, body: string): Record<string, string> {
  const p = new URLSearchParams(readFileSync(join(import.meta.dir, "../fixtures/twilio/inbound-sms.txt"), "utf8").trim());
  const sid = `SM${crypto.randomUUID().replace(/-/g, "")}`;
  p.set("From", from);
  p.set("To", FROM);
  p.set("Body", body);
  p.set("AccountSid", SID);
  for (const k of ["SmsMessageSid", "SmsSid", "MessageSid"]) p.set(k, sid);
  return Object.fromEntries(p);
}

async function webhook(params: Record<string, string>, signature: string | null) {
  const url = new URL("/sms/inbound", h.url).href;
  const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
  if (signature !== null) headers["x-twilio-signature"] = signature;
  const res = await fetch(url, { method: "POST", headers, body: new URLSearchParams(params) });
  return { status: res.status, type: res.headers.get("content-type"), text: await res.text() };
}
const signed = (params: Record<string, string>) => webhook(params, sign(TOKEN, new URL("/sms/inbound", h.url).href, params));

describe("the signature and segments", () => {
  test("the signing matches Twilio's published example", () => {
    const params = { CallSid: "CA1234567890ABCDE", Caller: "+14158675309", Digits: "1234", From: "+14158675309", To: "+18005551212" };
    const url = "https://mycompany.com/myapp.php?foo=1&bar=2";
    expect(sign("12345", url, params)).toBe("RSOYDt4T1cUTdK1PDd93/VVr8B8=");
    expect(twilioSignature("12345", url, new URLSearchParams(params))).toBe("RSOYDt4T1cUTdK1PDd93/VVr8B8=");
  });

  test("160 GSM characters are one segment, 161 two; 70 UCS-2 one, 71 two", () => {
    expect(segmentsOf("a".repeat(160))).toEqual({ encoding: "GSM-7", units: 160, segments: 1 });
    expect(segmentsOf("a".repeat(161))).toEqual({ encoding: "GSM-7", units: 161, segments: 2 });
    expect(segmentsOf("a".repeat(306)).segments).toBe(2);
    expect(segmentsOf("a".repeat(307)).segments).toBe(3);
    expect(segmentsOf("€".repeat(80))).toEqual({ encoding: "GSM-7", units: 160, segments: 1 });
    expect(segmentsOf("ж".repeat(70))).toEqual({ encoding: "UCS-2", units: 70, segments: 1 });
    expect(segmentsOf("ж".repeat(71))).toEqual({ encoding: "UCS-2", units: 71, segments: 2 });
    expect(segmentsOf("a".repeat(69) + "😀").segments).toBe(2);
  });
});

describe("send", () => {
  test("texts through Twilio, charged per segment at 160/161 and 70/71", async () => {
    const cases: [string, number, string][] = [
      ["a".repeat(160), 1, "GSM-7"],
      ["a".repeat(161), 2, "GSM-7"],
      ["ж".repeat(70), 1, "UCS-2"],
      ["ж".repeat(71), 2, "UCS-2"],
    ];
    for (const [text, segments, encoding] of cases) {
      const before = await balance("alice");
      const r = await h.call("sms/send", { to: "+44 7700 900123", text }, { token: alice });
      expect(r.status).toBe(200);
      expect(r.body.result).toMatchObject({ direction: "out", number: "+447700900123", text, segments, encoding, status: "queued" });
      expect(before - (await balance("alice"))).toBe(segments * 2);
      expect(tw.sent.at(-1)).toEqual({ to: "+447700900123", from: FROM, body: text });
    }
  });

  test("segments as the carrier bills them, at every boundary; the answer says the encoding, the segments and the credits charged", async () => {
    const own = await startHearth({ clock, env: { HEARTH_METER_ACCOUNTS: "all", TWILIO_ACCOUNT_SID: SID, TWILIO_AUTH_TOKEN: TOKEN, TWILIO_FROM: FROM, TWILIO_URL: tw.url, SMS_DAILY_CAP: "50", SMS_SEGMENT_CREDITS: "3" } });
    try {
      const erin = await own.token("erin");
      await own.grant("erin", 1000);
      const held = async () => balanceOf(own.rt.store.rdb, (await findAccount(own.rt.store, "erin"))!.id);
      const cases: [string, string, number, "GSM-7" | "UCS-2"][] = [
        ["160 GSM", "a".repeat(160), 1, "GSM-7"],
        ["161 GSM", "a".repeat(161), 2, "GSM-7"],
        ["80 euro signs are 160 septets", "€".repeat(80), 1, "GSM-7"],
        ["one brace more is 161", "€".repeat(80) + "{", 2, "GSM-7"],
        ["159 letters and a brace", "a".repeat(159) + "{", 2, "GSM-7"],
        ["an extension character is not split across parts", "a".repeat(152) + "€" + "a".repeat(152), 3, "GSM-7"],
        ["306 letters fill two parts", "a".repeat(306), 2, "GSM-7"],
        ["70 UCS-2", "ж".repeat(70), 1, "UCS-2"],
        ["71 UCS-2", "ж".repeat(71), 2, "UCS-2"],
        ["an emoji is two units", "ж".repeat(69) + "😀", 2, "UCS-2"],
        ["an emoji is not split across parts", "ж".repeat(66) + "😀" + "ж".repeat(66), 3, "UCS-2"],
      ];
      for (const [why, text, segments, encoding] of cases) {
        const before = await held();
        const r = await own.call("sms/send", { to: "+447700900123", text }, { token: erin });
        expect({ why, status: r.status }).toEqual({ why, status: 200 });
        expect({ why, ...r.body.result }).toMatchObject({ why, segments, encoding, charged: segments * 3 });
        expect({ why, paid: before - (await held()) }).toEqual({ why, paid: segments * 3 });
      }
      const code = await own.call("sms/verify", { number: "+14155550111" }, { token: erin });
      expect(code.body.result).toMatchObject({ code_sent: true, charged: 3 });
    } finally {
      await own.stop();
    }
    const free = await startHearth({ clock, env: { TWILIO_ACCOUNT_SID: SID, TWILIO_AUTH_TOKEN: TOKEN, TWILIO_FROM: FROM, TWILIO_URL: tw.url, HEARTH_METERING: "off" } });
    try {
      const r = await free.call("sms/send", { to: "+447700900123", text: "a".repeat(161) }, { token: await free.token("erin") });
      expect(r.body.result).toMatchObject({ segments: 2, encoding: "GSM-7", charged: 0 });
    } finally {
      await free.stop();
    }
  });

  test("a number not in international format is refused, naming the field, and nothing is sent or charged", async () => {
    const n = tw.sent.length;
    const before = await balance("alice");
    for (const to of ["07700 900123", "+0123", "+1234567890123456", "tel:+44"]) {
      const r = await h.call("sms/send", { to, text: "hi" }, { token: alice });
      expect(r.status).toBe(400);
      expect(r.body.error.field).toBe("to");
    }
    expect(tw.sent.length).toBe(n);
    expect(await balance("alice")).toBe(before);
  });

  test("a Twilio failure is an upstream error and costs nothing", async () => {
    const before = await balance("bob");
    tw.failOnce(500);
    const r = await h.call("sms/send", { to: "+447700900555", text: "hello" }, { token: bob });
    expect(r.status).toBe(503);
    expect(r.body.error.retry).toBe(true);
    expect(await balance("bob")).toBe(before);
    expect((await h.call("sms/history", {}, { token: bob })).body.result).toEqual([]);
  });

  test("the daily cap answers 429 saying when it resets, and resets at midnight UTC", async () => {
    // alice sent 4 texts above; the cap is 6.
    expect((await h.call("sms/number", {}, { token: alice })).body.result).toMatchObject({ remaining_today: 2, sent_today: 4, daily_cap: 6 });
    for (let i = 0; i < 2; i++) expect((await h.call("sms/send", { to: "+447700900124", text: `n${i}` }, { token: alice })).status).toBe(200);
    const before = await balance("alice");
    const capped = await h.call("sms/send", { to: "+447700900124", text: "one more" }, { token: alice });
    expect(capped.status).toBe(429);
    expect(capped.body.error.message).toContain("2026-11-22T00:00:00.000Z");
    expect(capped.headers.get("retry-after")).toBe(String(15 * 3600));
    expect(await balance("alice")).toBe(before);
    clock.set("2026-11-22T00:00:00Z");
    expect((await h.call("sms/number", {}, { token: alice })).body.result).toMatchObject({ remaining_today: 6, resets_at: "2026-11-23T00:00:00.000Z" });
    expect((await h.call("sms/send", { to: "+447700900124", text: "new day" }, { token: alice })).status).toBe(200);
  });
});

describe("the inbound webhook", () => {
  test("unsigned or wrongly signed: 403 and nothing stored", async () => {
    const before = (await h.call("sms/history", { limit: 200 }, { token: alice })).body.result.length;
    const params = inbound("+447700900123", "sneaky");
    expect((await webhook(params, null)).status).toBe(403);
    expect((await webhook(params, sign("not-the-token", new URL("/sms/inbound", h.url).href, params))).status).toBe(403);
    // Signed, then changed on the way.
    expect((await webhook({ ...params, Body: "changed" }, sign(TOKEN, new URL("/sms/inbound", h.url).href, params))).status).toBe(403);
    expect((await h.call("sms/history", { limit: 200 }, { token: alice })).body.result.length).toBe(before);
  });

  test("a signed reply lands in the history of whoever texted that number, once however often Twilio retries", async () => {
    const params = inbound("+447700900123", "Got it, thanks!");
    const r = await signed(params);
    expect(r.status).toBe(200);
    expect(r.type).toContain("text/xml");
    expect(r.text).toContain("<Response></Response>");
    expect((await signed(params)).status).toBe(200);
    const history = (await h.call("sms/history", {}, { token: alice })).body.result;
    expect(history[0]).toMatchObject({ direction: "in", number: "+447700900123", text: "Got it, thanks!", status: "received" });
    expect(history.filter((m: any) => m.text === "Got it, thanks!")).toHaveLength(1);
    expect((await h.call("sms/history", {}, { token: bob })).body.result).toEqual([]);
  });

  test("STOP stops texts to that number (403) until START", async () => {
    expect((await signed(inbound("+447700900124", "Stop"))).status).toBe(200);
    const n = tw.sent.length;
    const r = await h.call("sms/send", { to: "+447700900124", text: "are you there?" }, { token: bob });
    expect(r.status).toBe(403);
    expect(r.body.error.message).toContain("STOP");
    expect(tw.sent.length).toBe(n);
    expect((await signed(inbound("+447700900124", "START"))).status).toBe(200);
    expect((await h.call("sms/send", { to: "+447700900124", text: "welcome back" }, { token: bob })).status).toBe(200);
    expect(tw.sent.at(-1)!.body).toBe("welcome back");
  });

  test("Twilio's own refusal of an unsubscribed number is a 403 too, and is remembered", async () => {
    tw.unsubscribed.add("+447700900999");
    const r = await h.call("sms/send", { to: "+447700900999", text: "hello" }, { token: bob });
    expect(r.status).toBe(403);
    expect(r.body.error.message).toContain("21610");
    tw.unsubscribed.delete("+447700900999");
    const again = await h.call("sms/send", { to: "+447700900999", text: "hello" }, { token: bob });
    expect(again.status).toBe(403);
    expect(again.body.error.message).toContain("replied STOP");
  });
});

describe("history", () => {
  test("both directions, newest first, limit default 50 and max 200", async () => {
    const all = (await h.call("sms/history", { limit: 200 }, { token: alice })).body.result;
    expect(all.length).toBeGreaterThan(5);
    expect(new Set(all.map((m: any) => m.direction))).toEqual(new Set(["in", "out"]));
    const times = all.map((m: any) => m.at);
    expect([...times].sort().reverse()).toEqual(times);
    expect((await h.call("sms/history", { limit: 2 }, { token: alice })).body.result).toEqual(all.slice(0, 2));
    // Fifty-five replies to bob: the default page holds the latest fifty.
    expect((await h.call("sms/send", { to: "+447700900777", text: "quiz time" }, { token: bob })).status).toBe(200);
    for (let i = 0; i < 55; i++) expect((await signed(inbound("+447700900777", `answer ${i}`))).status).toBe(200);
    const page = (await h.call("sms/history", {}, { token: bob })).body.result;
    expect(page).toHaveLength(50);
    expect(page[0].text).toBe("answer 54");
    expect((await h.call("sms/history", { limit: 200 }, { token: bob })).body.result.length).toBeGreaterThan(56);
    const over = await h.call("sms/history", { limit: 201 }, { token: alice });
    expect(over.status).toBe(400);
    expect(over.body.error.field).toBe("limit");
  });
});

describe("verify", () => {
  const lastCode = () => /\b(\d{6})\b/.exec(tw.sent.at(-1)!.body)![1];

  test("a texted code claims the number; the code never shows in the history", async () => {
    const carol = await h.token("carol");
    await h.grant("carol", 100);
    const step1 = await h.call("sms/verify", { number: "+14155550100" }, { token: carol });
    expect(step1.status).toBe(200);
    // The code's text is one segment; checking the code costs nothing.
    expect(await balance("carol")).toBe(98);
    expect(step1.body.result).toMatchObject({ number: "+14155550100", code_sent: true, verified: false, expires_at: "2026-11-22T00:10:00.000Z" });
    const code = lastCode();
    expect(tw.sent.at(-1)!.to).toBe("+14155550100");
    const [shown] = (await h.call("sms/history", {}, { token: carol })).body.result;
    expect(shown.text).not.toContain(code);
    const ok = await h.call("sms/verify", { number: "+14155550100", code }, { token: carol });
    expect(ok.status).toBe(200);
    expect(ok.body.result).toEqual({ number: "+14155550100", verified: true });
    expect(await balance("carol")).toBe(98);
    expect((await h.call("sms/number", {}, { token: carol })).body.result).toMatchObject({ from: FROM, verified: ["+14155550100"] });
    // Texts from the verified number now reach carol.
    expect((await signed(inbound("+14155550100", "It's me"))).status).toBe(200);
    expect((await h.call("sms/history", { limit: 1 }, { token: carol })).body.result[0]).toMatchObject({ direction: "in", text: "It's me" });
  });

  test("five wrong tries void the code", async () => {
    const dave = await h.token("dave");
    await h.grant("dave", 100);
    await h.call("sms/verify", { number: "+14155550101" }, { token: dave });
    const code = lastCode();
    const wrong = code === "000000" ? "111111" : "000000";
    for (let i = 1; i <= 4; i++) {
      const r = await h.call("sms/verify", { number: "+14155550101", code: wrong }, { token: dave });
      expect(r.status).toBe(400);
      expect(r.body.error.field).toBe("code");
      expect(r.body.error.message).toContain(`${5 - i} tr`);
    }
    const fifth = await h.call("sms/verify", { number: "+14155550101", code: wrong }, { token: dave });
    expect(fifth.body.error.message).toContain("void");
    const late = await h.call("sms/verify", { number: "+14155550101", code }, { token: dave });
    expect(late.status).toBe(400);
    expect(late.body.error.message).toContain("no code is waiting");
    expect((await h.call("sms/number", {}, { token: dave })).body.result.verified).toEqual([]);
  });

  test("a code expires after 10 minutes", async () => {
    const erin = await h.token("erin");
    await h.grant("erin", 100);
    await h.call("sms/verify", { number: "+14155550102" }, { token: erin });
    const code = lastCode();
    clock.advance(10 * 60_000);
    const r = await h.call("sms/verify", { number: "+14155550102", code }, { token: erin });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toContain("expired");
    await h.call("sms/verify", { number: "+14155550102" }, { token: erin });
    clock.advance(10 * 60_000 - 1);
    expect((await h.call("sms/verify", { number: "+14155550102", code: lastCode() }, { token: erin })).status).toBe(200);
  });
});

test("behind a proxy the signature is checked against HEARTH_PUBLIC_URL, with or without the default port", async () => {
  const proxied = await startHearth({ env: { HEARTH_METER_ACCOUNTS: "all", TWILIO_ACCOUNT_SID: SID, TWILIO_AUTH_TOKEN: TOKEN, TWILIO_FROM: FROM, TWILIO_URL: tw.url, HEARTH_PUBLIC_URL: "https://texts.example.org" } });
  try {
    const post = (params: Record<string, string>, signedFor: string) =>
      fetch(new URL("/sms/inbound", proxied.url), {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": sign(TOKEN, signedFor, params) },
        body: new URLSearchParams(params),
      });
    expect((await post(inbound("+447700900321", "one"), "https://texts.example.org/sms/inbound")).status).toBe(200);
    expect((await post(inbound("+447700900321", "two"), "https://texts.example.org:443/sms/inbound")).status).toBe(200);
    // Signed for the address the request really reached, not the public one: refused.
    expect((await post(inbound("+447700900321", "three"), new URL("/sms/inbound", proxied.url).href)).status).toBe(403);
    expect((await post(inbound("+447700900321", "four"), "https://texts.example.org:8443/sms/inbound")).status).toBe(403);
  } finally {
    await proxied.stop();
  }
});

test("without a Twilio account every method answers 501 naming what to set", async () => {
  const bare = await startHearth({ env: { HEARTH_METERING: "off" } });
  try {
    const t = await bare.token("zoe");
    for (const [path, args] of [
      ["sms/send", { to: "+447700900123", text: "hi" }],
      ["sms/history", {}],
      ["sms/number", {}],
      ["sms/verify", { number: "+447700900123" }],
    ] as const) {
      const r = await bare.call(path, args, { token: t });
      expect(r.status).toBe(501);
      expect(r.body.error.message).toContain("TWILIO_ACCOUNT_SID");
      expect(r.body.error.message).toContain("TWILIO_AUTH_TOKEN");
      expect(r.body.error.message).toContain("TWILIO_FROM");
    }
    const hook = await fetch(new URL("/sms/inbound", bare.url), { method: "POST", body: "Body=x" });
    expect(hook.status).toBe(501);
    expect((await bare.call("sms/history", {})).status).toBe(401);
  } finally {
    await bare.stop();
  }
});
