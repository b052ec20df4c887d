import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHearth, TestClock, type Hearth } from "../harness.ts";

let h: Hearth;
const clock = new TestClock();
let alice: string;

beforeAll(async () => {
  h = await startHearth({ clock });
  alice = await h.token("alice");
});
afterAll(() => h.stop());

describe("stream/list", () => {
  test("empty on a new instance; public, no credentials needed", async () => {
    const r = await h.call("stream/list");
    expect(r.status).toBe(200);
    expect(r.body.result).toEqual([]);
  });

  test("newest first, default 20, max 100 (over: 400 naming limit)", async () => {
    for (let i = 0; i < 30; i++) {
      clock.advance(1000);
      await h.call("chat/send", { room: `room-${i}`, content: "hello" }, { token: alice });
    }
    const r = (await h.call("stream/list")).body.result;
    expect(r.length).toBe(20);
    expect(r[0]).toMatchObject({ service: "chat", type: "room.started", text: "alice started the chat room #room-29" });
    expect(r[0].url).toBe(`${h.url}/chat/room-29`);
    expect(r[0].at).toBe(clock.now().toISOString());
    expect(r[19].text).toContain("#room-10");
    for (let i = 1; i < r.length; i++) expect(r[i - 1].at >= r[i].at).toBe(true);
    expect((await h.call("stream/list", { limit: 100 })).body.result.length).toBe(30);
    for (const limit of [0, 101]) {
      const bad = await h.call("stream/list", { limit });
      expect(bad.status).toBe(400);
      expect(bad.body.error.field).toBe("limit");
    }
  });

  test("entries in the same millisecond keep the order they happened in", async () => {
    await h.call("chat/send", { room: "same-ms-a", content: "x" }, { token: alice });
    await h.call("chat/send", { room: "same-ms-b", content: "x" }, { token: alice });
    const r = (await h.call("stream/list", { limit: 2 })).body.result;
    expect(r.map((e: any) => e.data.ref)).toEqual(["same-ms-b", "same-ms-a"]);
  });
});
