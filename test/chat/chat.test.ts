import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHearth, TestClock, type Hearth } from "../harness.ts";

let h: Hearth;
const clock = new TestClock();
let alice: string;
let bob: string;

beforeAll(async () => {
  h = await startHearth({ clock });
  alice = await h.token("alice");
  bob = await h.token("bob");
});
afterAll(() => h.stop());

const send = (room: string, content: string, token = alice) => {
  clock.advance(1000);
  return h.call("chat/send", { room, content }, { token });
};

/** Reads server-sent events from a live URL until `count` message events have arrived. */
async function readEvents(res: Response, count: number) {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  const events: { id: string; data: any }[] = [];
  while (events.length < count) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    let i: number;
    while ((i = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      const fields = Object.fromEntries(block.split("\n").filter((l) => !l.startsWith(":") && l.includes(":")).map((l) => [l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 1).trim()]));
      if (fields.event === "message") events.push({ id: fields.id, data: JSON.parse(fields.data) });
    }
  }
  return { events, close: () => reader.cancel() };
}

describe("chat", () => {
  test("send posts as the caller and creates the room; messages are oldest to newest", async () => {
    expect((await h.call("chat/send", { room: "general", content: "hi" })).status).toBe(401);
    const first = await send("general", "hello everyone");
    expect(first.status).toBe(200);
    expect(first.body.result.author).toBe("alice");
    expect(first.body.result.room).toBe("general");
    await send("General", "hi alice", bob);
    await send("#general", "how are you?");
    const m = await h.call("chat/messages", { room: "general" });
    expect(m.status).toBe(200);
    expect(m.body.result.map((x: any) => [x.author, x.content])).toEqual([
      ["alice", "hello everyone"],
      ["bob", "hi alice"],
      ["alice", "how are you?"],
    ]);
    const stream = (await h.call("stream/list")).body.result;
    expect(stream.filter((e: any) => e.type === "room.started" && e.text.includes("#general")).length).toBe(1);
  });

  test("messages is the latest 50, oldest first", async () => {
    for (let i = 0; i < 55; i++) await send("long-room", `message ${i}`);
    const m = (await h.call("chat/messages", { room: "long-room" })).body.result;
    expect(m.length).toBe(50);
    expect(m[0].content).toBe("message 5");
    expect(m[49].content).toBe("message 54");
  });

  test("no way to post as someone else: the author comes from the caller", async () => {
    const r = await h.call("chat/send", { room: "general", content: "I am alice", author: "alice" }, { token: bob });
    expect(r.status).toBe(400);
    expect(r.body.error.field).toBe("author");
  });

  test("content is 1 to 4,000 characters; rooms must be slugs; unknown room is 404", async () => {
    expect((await send("general", "")).body.error.field).toBe("content");
    expect((await send("general", "   ")).body.error.field).toBe("content");
    const long = await send("general", "x".repeat(4001));
    expect(long.status).toBe(400);
    expect(long.body.error.field).toBe("content");
    expect((await send("general", "x".repeat(4000))).status).toBe(200);
    expect((await send("no/slashes", "x")).body.error.field).toBe("room");
    const unknown = await h.call("chat/messages", { room: "nowhere" });
    expect(unknown.status).toBe(404);
    // Without a room: the one with the latest message.
    await send("latest-room", "most recent");
    expect((await h.call("chat/messages", {})).body.result.map((m: any) => [m.room, m.content])).toEqual([["latest-room", "most recent"]]);
  });

  test("rooms: activity in the last 24 hours, busiest first, limit default 20", async () => {
    const t = new TestClock();
    const h2 = await startHearth({ clock: t });
    try {
      const tok = await h2.token("carol");
      const say = (room: string) => {
        t.advance(1000);
        return h2.call("chat/send", { room, content: "x" }, { token: tok });
      };
      expect((await h2.call("chat/messages")).status).toBe(404);
      expect((await h2.call("chat/rooms")).body.result).toEqual([]);
      await say("stale");
      t.advance(25 * 60 * 60 * 1000);
      for (let i = 0; i < 22; i++) await say(`room-${i}`);
      for (let i = 0; i < 3; i++) await say("busy");
      await say("room-5");
      const r = (await h2.call("chat/rooms")).body.result;
      expect(r.length).toBe(20);
      expect(r[0]).toMatchObject({ room: "busy", messages: 3 });
      expect(r[1]).toMatchObject({ room: "room-5", messages: 2 });
      expect(r.some((x: any) => x.room === "stale")).toBe(false);
      expect((await h2.call("chat/rooms", { limit: 100 })).body.result.length).toBe(23);
      expect((await h2.call("chat/rooms", { limit: 101 })).body.error.field).toBe("limit");
      // The stale room still has its conversation.
      expect((await h2.call("chat/messages", { room: "stale" })).body.result.length).toBe(1);
      t.advance(24 * 60 * 60 * 1000);
      expect((await h2.call("chat/rooms")).body.result).toEqual([]);
    } finally {
      await h2.stop();
    }
  });

  test("live: new messages arrive over server-sent events; a reconnect catches up from Last-Event-ID", async () => {
    // A post reaches live listeners through the shared state, which may pass it on a while after the call has
    // answered (PostgreSQL's NOTIFY on a busy machine): it has gone by before the listener below connects.
    const passed: string[] = [];
    const stopHearing = h.rt.shared.subscribe("chat:messages", (text) => passed.push(JSON.parse(text).content));
    await send("live-room", "before anyone listened");
    while (!passed.includes("before anyone listened")) await Bun.sleep(10);
    stopHearing();
    expect((await fetch(`${h.url}/chat/not-a-room/live`)).status).toBe(404);
    const res = await fetch(`${h.url}/chat/live-room/live`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const listening = readEvents(res, 2);
    await send("live-room", "first live", bob);
    await send("other-room", "not for this room");
    await send("live-room", "second live");
    const { events, close } = await listening;
    await close();
    expect(events.map((e) => [e.data.author, e.data.content])).toEqual([
      ["bob", "first live"],
      ["alice", "second live"],
    ]);
    await send("live-room", "while away");
    const again = await fetch(`${h.url}/chat/live-room/live`, { headers: { "last-event-id": events[0].id } });
    const caught = await readEvents(again, 2);
    await caught.close();
    expect(caught.events.map((e) => e.data.content)).toEqual(["second live", "while away"]);
  });

  test("the room page lists the conversation as escaped text", async () => {
    await send("page-room", "<img src=x onerror=alert(1)> hello");
    const res = await fetch(`${h.url}/chat/page-room`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain("&lt;img src=x onerror=alert(1)&gt; hello");
    expect(html).not.toContain("<img src=x");
    expect(res.headers.get("content-security-policy")).toMatch(/script-src 'nonce-[0-9a-f]+'/);
  });
});

test("live connections are capped by HEARTH_CHAT_LIVE_MAX", async () => {
  const h3 = await startHearth({ env: { HEARTH_CHAT_LIVE_MAX: "1" } });
  try {
    await h3.call("chat/send", { room: "capped", content: "x" }, { token: await h3.token("dave") });
    const first = await fetch(`${h3.url}/chat/capped/live`);
    expect(first.status).toBe(200);
    const second = await fetch(`${h3.url}/chat/capped/live`);
    expect(second.status).toBe(503);
    expect(second.headers.get("retry-after")).toBe("30");
    await first.body!.cancel();
  } finally {
    await h3.stop();
  }
});
