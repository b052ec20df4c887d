// events/create, list and delete through the real HTTP stack.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { dispatch } from "../../core/dispatch.ts";
import { schedulerOf } from "../../core/scheduler/index.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { sqlAll, sqlGet } from "../sql.ts";

let h: Hearth;
let alice: string;
let bob: string;
const clock = new TestClock(Date.parse("2026-03-01T12:00:00Z"));

beforeAll(async () => {
  h = await startHearth({ clock });
  alice = await h.token("alice");
  bob = await h.token("bob");
});
afterAll(() => h.stop());

const create = (args: Record<string, unknown>, token = alice) => h.call("events/create", args, { token });

describe("events need an account", () => {
  for (const m of ["create", "delete", "list", "free"]) {
    test(m, async () => {
      const r = await h.call(`events/${m}`, m === "create" ? { title: "x", when: "2026-03-02T09:00:00Z" } : m === "delete" ? { id: "x" } : {});
      expect(r.status).toBe(401);
      expect(r.body.error.kind).toBe("unauthenticated");
    });
  }
});

describe("create", () => {
  test("returns the event with its id and next firing time, kept in the offset it was given in", async () => {
    const r = await create({ title: "Dentist", when: "2026-03-05T14:30:00-05:00", note: "bring card", minutes: 45 });
    expect(r.status).toBe(200);
    expect(r.body.result).toMatchObject({
      title: "Dentist",
      when: "2026-03-05T14:30:00-05:00",
      note: "bring card",
      minutes: 45,
      repeat: null,
      prompt: null,
      next: "2026-03-05T14:30:00-05:00",
      ends: "2026-03-05T15:15:00-05:00",
    });
    expect(r.body.result.id).toMatch(/^[0-9a-z]{16}$/);
  });

  test("minutes defaults to 30 and Z is an offset", async () => {
    const r = await create({ title: "Call", when: "2026-03-06T09:00:00Z" });
    expect(r.body.result.minutes).toBe(30);
    expect(r.body.result.ends).toBe("2026-03-06T09:30:00Z");
  });

  test("a repeating event started in the past fires next at its next occurrence", async () => {
    const r = await create({ title: "Standup", when: "2026-02-02T09:00:00+01:00", repeat: "weekly" });
    expect(r.status).toBe(200);
    // 2026-02-02 is a Monday; the next Monday 09:00+01:00 after 2026-03-01T12:00Z is 2026-03-02.
    expect(r.body.result.next).toBe("2026-03-02T09:00:00+01:00");
  });

  const refusals: [string, Record<string, unknown>, string, RegExp][] = [
    ["a time without an offset", { title: "x", when: "2026-03-02T09:00:00" }, "when", /offset/],
    ["a date alone", { title: "x", when: "2026-03-02" }, "when", /RFC 3339/],
    ["words", { title: "x", when: "tomorrow at nine" }, "when", /RFC 3339/],
    ["an impossible day", { title: "x", when: "2026-02-30T09:00:00Z" }, "when", /30/],
    ["an impossible hour", { title: "x", when: "2026-03-02T25:00:00Z" }, "when", /time of day/],
    ["an impossible offset", { title: "x", when: "2026-03-02T09:00:00+24:00" }, "when", /offset/],
    ["a two-digit-era year", { title: "x", when: "0099-03-02T09:00:00Z" }, "when", /1900/],
    ["zero minutes", { title: "x", when: "2026-03-02T09:00:00Z", minutes: 0 }, "minutes", /at least 1/],
    ["more than a day", { title: "x", when: "2026-03-02T09:00:00Z", minutes: 1441 }, "minutes", /at most 1440/],
    ["an unknown repeat", { title: "x", when: "2026-03-02T09:00:00Z", repeat: "yearly" }, "repeat", /hourly.*daily.*weekly.*monthly/],
    ["an empty title", { title: "", when: "2026-03-02T09:00:00Z" }, "title", /empty/],
    ["no when", { title: "x" }, "when", /required/],
  ];
  for (const [what, args, field, message] of refusals) {
    test(`refuses ${what} with 400 naming ${field}`, async () => {
      const r = await create(args);
      expect(r.status).toBe(400);
      expect(r.body.error.field).toBe(field);
      expect(r.body.error.message).toMatch(message);
    });
  }

  test("create is POST only", async () => {
    const r = await h.call("events/create", { title: "x", when: "2026-03-02T09:00:00Z" }, { token: alice, method: "GET" });
    expect(r.status).toBe(405);
  });
});

describe("list and delete", () => {
  let carol: string;
  beforeAll(async () => {
    carol = await h.token("carol");
  });

  test("upcoming events soonest first, a repeat at its next occurrence, past ones gone, nobody else's", async () => {
    clock.set("2026-04-01T10:00:00Z");
    const ids: Record<string, string> = {};
    for (const [title, when, repeat] of [
      ["later", "2026-04-03T10:00:00Z", undefined],
      ["past", "2026-03-30T10:00:00Z", undefined],
      ["ended", "2026-04-01T11:00:00+02:00", undefined], // 09:00Z-09:30Z: over by 10:00Z
      ["daily", "2026-03-01T08:00:00-03:00", "daily"], // 11:00Z every day
      ["now", "2026-04-01T09:45:00Z", undefined], // in progress until 10:15Z
    ] as const) {
      const r = await create({ title, when, repeat }, carol);
      expect(r.status).toBe(200);
      ids[title] = r.body.result.id;
    }
    await create({ title: "bob's", when: "2026-04-02T10:00:00Z" }, bob);
    const r = await h.call("events/list", {}, { token: carol });
    expect(r.status).toBe(200);
    expect(r.body.result.map((e: { title: string }) => e.title)).toEqual(["now", "daily", "later"]);
    const daily = r.body.result[1];
    expect(daily).toMatchObject({ id: ids.daily, when: "2026-03-01T08:00:00-03:00", next: "2026-04-01T08:00:00-03:00", repeat: "daily" });
    expect(r.body.result[0].next).toBe("2026-04-01T09:45:00Z");

    clock.set("2026-04-01T11:10:00Z");
    const later = await h.call("events/list", {}, { token: carol });
    expect(later.body.result.map((e: { title: string; next: string }) => [e.title, e.next])).toEqual([
      ["daily", "2026-04-01T08:00:00-03:00"],
      ["later", "2026-04-03T10:00:00Z"],
    ]);
    clock.set("2026-04-01T11:31:00Z");
    const after = await h.call("events/list", {}, { token: carol });
    expect(after.body.result[0]).toMatchObject({ title: "daily", next: "2026-04-02T08:00:00-03:00" });
  });

  test("delete cancels; someone else's id is 404 and leaves it in place", async () => {
    clock.set("2026-05-01T00:00:00Z");
    const mine = (await create({ title: "to cancel", when: "2026-05-02T10:00:00Z" })).body.result.id;
    const theirs = await h.call("events/delete", { id: mine }, { token: bob });
    expect(theirs.status).toBe(404);
    expect(theirs.body.error.kind).toBe("not_found");
    expect((await h.call("events/list", {}, { token: alice })).body.result.some((e: { id: string }) => e.id === mine)).toBe(true);

    const gone = await h.call("events/delete", { id: mine }, { token: alice });
    expect(gone.status).toBe(200);
    expect(gone.body.result).toEqual({ deleted: mine });
    expect((await h.call("events/list", {}, { token: alice })).body.result.some((e: { id: string }) => e.id === mine)).toBe(false);
    expect((await h.call("events/delete", { id: mine }, { token: alice })).status).toBe(404);
  });

  test("delete is withheld from the agent in the registry, and refused to an agent caller", async () => {
    expect(h.rt.registry.get("events", "delete")!.def.withheldFromAgent).toBe(true);
    expect(h.rt.registry.get("events", "create")!.def.withheldFromAgent).toBeFalsy();
    const id = (await create({ title: "agent may not cancel", when: "2026-05-03T10:00:00Z" })).body.result.id;
    const account = (await sqlGet<{ id: string; username: string }>(h.rt, "SELECT id, username FROM accounts WHERE username = 'alice'"))!;
    const caller = { account: { ...account, admin: false }, scopes: "*" as const, via: "local" as const, agent: true };
    const refused = (await dispatch(h.rt, { service: "events", method: "delete", args: { id }, caller, requestId: "t" }).catch((e: unknown) => e)) as { status: number };
    expect(refused.status).toBe(403);
    expect((await h.call("events/list", {}, { token: alice })).body.result.some((e: { id: string }) => e.id === id)).toBe(true);
  });

  test("a token scoped to other services may not use events", async () => {
    const notesOnly = await h.token("alice", { scopes: ["notes"] });
    const r = await h.call("events/list", {}, { token: notesOnly });
    expect(r.status).toBe(403);
  });
});

describe("create with an id changes that event in place", () => {
  test("it keeps its id and what fired, takes the new fields, and a wrong id or field writes nothing", async () => {
    clock.set("2026-03-01T12:00:00Z");
    const made = (await create({ title: "Yoga", when: "2026-03-01T12:00:30Z", repeat: "daily", note: "mat", prompt: "Stretch?" })).body.result;
    clock.set("2026-03-01T12:01:00Z");
    await schedulerOf(h.rt).runDue();
    const fired = async () => (await h.call("events/list", {}, { token: alice })).body.result.find((e: { id: string }) => e.id === made.id)?.history;
    expect((await fired()).length).toBe(1);

    // The same times: renamed, the note removed, the schedule and its history left as they were.
    const renamed = await create({ id: made.id, title: "Morning yoga", when: "2026-03-01T12:00:30Z", repeat: "daily", prompt: "Stretch?" });
    expect(renamed.status).toBe(200);
    expect(renamed.body.result).toMatchObject({ id: made.id, title: "Morning yoga", note: "", repeat: "daily", next: "2026-03-02T12:00:30Z" });
    await schedulerOf(h.rt).runDue();
    expect((await fired()).length).toBe(1);

    // Moved to another day and made once: it fires from its new start, and its history stays.
    const moved = await create({ id: made.id, title: "Morning yoga", when: "2026-03-04T08:00:00+01:00", minutes: 60 });
    expect(moved.body.result).toMatchObject({ id: made.id, when: "2026-03-04T08:00:00+01:00", minutes: 60, repeat: null, prompt: null, next: "2026-03-04T08:00:00+01:00" });
    expect((await fired()).length).toBe(1);
    const mine = (await h.call("events/list", {}, { token: alice })).body.result.filter((e: { title: string }) => e.title.includes("yoga"));
    expect(mine.map((e: { id: string }) => e.id)).toEqual([made.id]);

    // Someone else's id, an id not kept, or a bad field: refused, nothing changed.
    for (const [args, token, status, field] of [
      [{ id: made.id, title: "Mine now", when: "2026-03-05T08:00:00Z" }, bob, 404, undefined],
      [{ id: "nope", title: "Mine now", when: "2026-03-05T08:00:00Z" }, alice, 404, undefined],
      [{ id: made.id, title: "Mine now", when: "tomorrow" }, alice, 400, "when"],
      [{ id: made.id, title: "Mine now", when: "2026-03-05T08:00:00Z", minutes: 0 }, alice, 400, "minutes"],
    ] as const) {
      const r = await create(args, token);
      expect(r.status).toBe(status);
      if (field) expect(r.body.error.field).toBe(field);
    }
    const after = (await h.call("events/list", {}, { token: alice })).body.result.find((e: { id: string }) => e.id === made.id);
    expect(after).toMatchObject({ title: "Morning yoga", when: "2026-03-04T08:00:00+01:00" });
    expect((await h.call("events/list", {}, { token: bob })).body.result.some((e: { title: string }) => e.title === "Mine now")).toBe(false);
  });
});
