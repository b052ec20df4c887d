// Mail between accounts of one instance: handles and tags, the inbox, search,
// threads, what is free, and what needs a mail domain.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { findAccount } from "../../core/auth/tokens.ts";
import { mailOf, type ArrivedMail } from "../../core/mail/index.ts";
import { schedulerOf } from "../../core/scheduler/index.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";

let h: Hearth;
let alice: string;
let bob: string;
const clock = new TestClock(new Date("2026-11-21T09:00:00Z").getTime());

beforeAll(async () => {
  h = await startHearth({ clock });
  alice = await h.token("alice");
  bob = await h.token("bob");
});
afterAll(() => h.stop());

describe("mail without a mail domain", () => {
  test("info gives the handle, no address, and says outside mail cannot arrive", async () => {
    const r = await h.call("mail/info", {}, { token: alice });
    expect(r.status).toBe(200);
    expect(r.body.result).toEqual({ handle: "alice", address: null, outside_mail: false });
    const t = await h.call("mail/info", { tag: "Garden" }, { token: alice });
    expect(t.body.result).toMatchObject({ handle: "alice", tag: "garden", tagged_handle: "alice+garden", tagged_address: null });
  });

  test("a username is delivered at once and free, newest first in the inbox", async () => {
    const first = await h.call("mail/send", { to: "bob", subject: "Seeds", body: "The tomato seeds came." }, { token: alice });
    expect(first.status).toBe(200);
    expect(first.body.result).toMatchObject({ to: "bob", delivery: "local" });
    clock.advance(60_000);
    await h.call("mail/send", { to: "bob", subject: "Water", body: "Water the beans on Sunday." }, { token: alice });
    const inbox = await h.call("mail/inbox", {}, { token: bob });
    expect(inbox.status).toBe(200);
    expect(inbox.body.result.map((m: any) => m.subject)).toEqual(["Water", "Seeds"]);
    expect(inbox.body.result[1]).toMatchObject({ from: "alice", to: "bob", body: "The tomato seeds came.", folder: "inbox", at: "2026-11-21T09:00:00.000Z", tag: null });
    expect(inbox.body.result[1].message_id).toMatch(/^[0-9a-f-]{36}@/);
    expect((await h.call("mail/inbox", { limit: 1 }, { token: bob })).body.result).toHaveLength(1);
    // The sender's inbox holds nothing of it; its copy is in the sent folder, found by search.
    expect((await h.call("mail/inbox", {}, { token: alice })).body.result).toEqual([]);
    const mine = await h.call("mail/search", { query: "tomato" }, { token: alice });
    expect(mine.body.result).toMatchObject([{ folder: "sent", subject: "Seeds", delivery: "local" }]);
  });

  test("handle+tag lands under its tag, and searching for the handle+tag reads that tag on its own", async () => {
    const r = await h.call("mail/send", { to: "bob+Garden", subject: "Plot 7", body: "Your plot is ready." }, { token: alice });
    expect(r.body.result).toMatchObject({ to: "bob+garden", delivery: "local" });
    const tagged = await h.call("mail/search", { query: "bob+garden" }, { token: bob });
    expect(tagged.body.result.map((m: any) => m.subject)).toEqual(["Plot 7"]);
    expect(tagged.body.result[0]).toMatchObject({ tag: "garden", to: "bob+garden" });
    expect((await h.call("mail/search", { query: "bob+work" }, { token: bob })).body.result).toEqual([]);
    // Someone else's tag is only words to search for, not a way into their mail.
    expect((await h.call("mail/search", { query: "bob+garden" }, { token: alice })).body.result.every((m: any) => m.folder === "sent")).toBe(true);
    expect((await h.call("mail/inbox", {}, { token: bob })).body.result[0].subject).toBe("Plot 7");
  });

  test("search finds by subject, sender and text, only in the caller's own mail", async () => {
    expect((await h.call("mail/search", { query: "beans sunday" }, { token: bob })).body.result.map((m: any) => m.subject)).toEqual(["Water"]);
    expect((await h.call("mail/search", { query: "alice" }, { token: bob })).body.result).toHaveLength(3);
    expect((await h.call("mail/search", { query: "plot" }, { token: bob })).body.result[0].snippet).toBeString();
    const carol = await h.token("carol");
    expect((await h.call("mail/search", { query: "beans" }, { token: carol })).body.result).toEqual([]);
  });

  test("a \"Re:\" subject answers the latest message from that sender in its thread", async () => {
    const [got] = (await h.call("mail/search", { query: "bob+garden", limit: 1 }, { token: bob })).body.result;
    const r = await h.call("mail/send", { to: "alice", subject: "Re: Plot 7", body: "Thanks!" }, { token: bob });
    expect(r.status).toBe(200);
    const [reply] = (await h.call("mail/inbox", {}, { token: alice })).body.result;
    expect(reply).toMatchObject({ subject: "Re: Plot 7", from: "bob", in_reply_to: got.message_id });
    // Alice answers the answer: the thread grows.
    await h.call("mail/send", { to: "bob", subject: "RE: re: Plot 7", body: "Any time." }, { token: alice });
    const [again] = (await h.call("mail/inbox", { limit: 1 }, { token: bob })).body.result;
    expect(again.in_reply_to).toBe(reply.message_id);
    // Nothing to answer: sent as a new thread.
    await h.call("mail/send", { to: "alice", subject: "Re: something else", body: "y" }, { token: bob });
    expect((await h.call("mail/inbox", { limit: 1 }, { token: alice })).body.result[0].in_reply_to).toBeNull();
  });

  test("refusals: unknown username 404, bad recipient 400, outside address 501 naming MAIL_DOMAIN", async () => {
    const none = await h.call("mail/send", { to: "nobody", subject: "hi", body: "there" }, { token: alice });
    expect(none.status).toBe(404);
    expect(none.body.error.message).toContain("nobody");
    const bad = await h.call("mail/send", { to: "not an address", subject: "hi", body: "there" }, { token: alice });
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe("to");
    const outside = await h.call("mail/send", { to: "friend@example.org", subject: "hi", body: "there" }, { token: alice });
    expect(outside.status).toBe(501);
    expect(outside.body.error.kind).toBe("not_configured");
    expect(outside.body.error.message).toContain("MAIL_DOMAIN");
    const twoLines = await h.call("mail/send", { to: "bob", subject: "a\r\nBcc: x@y.z", body: "b" }, { token: alice });
    expect(twoLines.status).toBe(400);
    expect(twoLines.body.error.field).toBe("subject");
    expect((await h.call("mail/inbox", {})).status).toBe(401);
  });

  test("other services deliver straight to an inbox, and mail under a tag is handed to whoever registered for it", async () => {
    const bobId = (await findAccount(h.rt.store, "bob"))!.id;
    const told: ArrivedMail[] = [];
    const off = mailOf(h.rt).onArrived((m) => void told.push(m));
    try {
      const plain = await mailOf(h.rt).deliverLocal(bobId, { from: "Hearth <events@hearth.local>", subject: "Your export is ready", body: "Download it from files." });
      expect(plain.stored).toBe(true);
      await mailOf(h.rt).deliverLocal(bobId, { from: "alice", subject: "For the helper", body: "Sort my seeds.", tag: "helper", inReplyTo: `<${plain.message_id}>` });
      await mailOf(h.rt).settled();
    } finally {
      off();
    }
    const [tagged, first] = (await h.call("mail/inbox", { limit: 2 }, { token: bob })).body.result;
    expect(first).toMatchObject({ subject: "Your export is ready", from: "Hearth <events@hearth.local>", to: "bob", tag: null });
    expect(tagged).toMatchObject({ subject: "For the helper", tag: "helper", to: "bob+helper", in_reply_to: first.message_id });
    // Only the tagged one is announced.
    expect(told.map((m) => [m.account.username, m.tag, m.message.subject])).toEqual([["bob", "helper", "For the helper"]]);
  });

  test("a fired event mails its reminder to the owner's inbox", async () => {
    const dana = await h.token("dana");
    clock.set("2026-11-21T10:00:00Z");
    const ev = await h.call("events/create", { title: "Call the plumber", when: "2026-11-21T11:30:00+01:00", note: "Ask about the boiler." }, { token: dana });
    expect(ev.status).toBe(200);
    clock.set("2026-11-21T10:30:00Z");
    await schedulerOf(h.rt).runDue();
    const inbox = (await h.call("mail/inbox", {}, { token: dana })).body.result;
    expect(inbox).toHaveLength(1);
    expect(inbox[0]).toMatchObject({ subject: "Reminder: Call the plumber", to: "dana" });
    expect(inbox[0].body).toContain("Ask about the boiler.");
  });
});
