// A request for one calendar object or card reads that one resource, never the
// whole collection, so its cost does not grow with the calendar; the CTag and
// sync token still move with every change, the API's included.
import { afterEach, describe, expect, test } from "bun:test";
import type { DavCollection } from "../../core/dav/collection.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { card3, vevent } from "./fixtures.ts";

let h: Hearth | null = null;
afterEach(async () => {
  await h?.stop();
  h = null;
});

/** Counts the listings of one service's collection from now on. */
function countListings(hh: Hearth, service: string) {
  const col = (hh.rt.registry.plugins.get(service)!.def as { dav: DavCollection }).dav;
  const list = col.list;
  const seen = { listings: 0 };
  col.list = (ctx) => {
    seen.listings++;
    return list.call(col, ctx);
  };
  return seen;
}

const xmlOf = (body: string) => `<?xml version="1.0" encoding="utf-8"?>${body}`;

describe("one resource, one read", () => {
  test("GET, HEAD, PUT, DELETE and PROPFIND of one event never list the calendar", async () => {
    h = await startHearth({ clock: new TestClock() });
    const token = await h.token("alice");
    const auth = { authorization: `Basic ${Buffer.from(`alice:${token}`).toString("base64")}` };
    const dav = (method: string, path: string, body?: string, headers: Record<string, string> = {}) =>
      fetch(`${h!.url}/dav/calendars/alice/events/${path}`, { method, body, headers: { ...auth, ...headers } });
    for (let i = 0; i < 5; i++) await h.call("events/create", { title: `Seeded ${i}`, when: `2026-03-0${i + 1}T09:00:00Z` }, { token });
    // A client's first sync lists the calendar, and is given a token to continue from.
    const first = await dav("REPORT", "", xmlOf(`<d:sync-collection xmlns:d="DAV:"><d:sync-token/><d:prop><d:getetag/></d:prop></d:sync-collection>`));
    const token0 = /<d:sync-token>([^<]+)</.exec(await first.text())![1];

    const seen = countListings(h, "events");
    const made = await dav("PUT", "standup.ics", vevent("standup-1", "Standup", "20260302T090000Z"), { "if-none-match": "*" });
    expect(made.status).toBe(201);
    const etag = made.headers.get("etag")!;
    const got = await dav("GET", "standup.ics");
    expect(got.status).toBe(200);
    expect(await got.text()).toContain("SUMMARY:Standup");
    expect(got.headers.get("etag")).toBe(etag);
    expect((await dav("HEAD", "standup.ics")).headers.get("etag")).toBe(etag);
    const props = await dav("PROPFIND", "standup.ics", xmlOf(`<d:propfind xmlns:d="DAV:"><d:prop><d:getetag/></d:prop></d:propfind>`), { depth: "0" });
    expect(props.status).toBe(207);
    expect(await props.text()).toContain(etag.replace(/"/g, "&quot;"));
    const changed = await dav("PUT", "standup.ics", vevent("standup-1", "Standup moved", "20260302T100000Z"), { "if-match": etag });
    expect(changed.status).toBe(204);
    expect((await dav("GET", "standup.ics", undefined, { "if-match": etag })).status).toBe(200);
    expect((await dav("DELETE", "standup.ics", undefined, { "if-match": etag })).status).toBe(412);
    expect((await dav("DELETE", "standup.ics", undefined, { "if-match": changed.headers.get("etag")! })).status).toBe(204);
    expect((await dav("GET", "standup.ics")).status).toBe(404);
    expect(seen.listings).toBe(0);

    // A change made outside DAV shows on the next GET of that one event, as a new ETag, still without a listing.
    const named = "again.ics";
    const again = await dav("PUT", named, vevent("again-1", "Again", "20260303T090000Z"));
    const before = again.headers.get("etag")!;
    const id = (await h.call("events/list", {}, { token })).body.result.find((e: { title: string }) => e.title === "Again").id;
    await h.exec("UPDATE events_events SET title = ? WHERE id = ?", "Again, renamed", id);
    const after = await dav("GET", named);
    expect(await after.text()).toContain("SUMMARY:Again\\, renamed");
    expect(after.headers.get("etag")).not.toBe(before);
    expect(seen.listings).toBe(0);

    // The calendar's own state followed: a sync from the first token names what changed, the deleted event included.
    const since = await dav("REPORT", "", xmlOf(`<d:sync-collection xmlns:d="DAV:"><d:sync-token>${token0}</d:sync-token><d:prop><d:getetag/></d:prop></d:sync-collection>`));
    const text = await since.text();
    expect(text).toContain(`/dav/calendars/alice/events/standup.ics</d:href><d:status>HTTP/1.1 404`);
    expect(text).toContain(`/dav/calendars/alice/events/again.ics`);
    expect(text).toContain(after.headers.get("etag")!.replace(/"/g, "&quot;"));
    expect(text).not.toContain("Seeded");
  });

  test("a card's PUT and GET never list the address book", async () => {
    h = await startHearth({ clock: new TestClock() });
    const token = await h.token("alice");
    const auth = { authorization: `Basic ${Buffer.from(`alice:${token}`).toString("base64")}` };
    for (let i = 0; i < 3; i++) await h.call("contacts/add", { name: `Seeded ${i}` }, { token });
    const seen = countListings(h, "contacts");
    const url = `${h.url}/dav/addressbooks/alice/contacts/ana.vcf`;
    expect((await fetch(url, { method: "PUT", body: card3("ana-1", "Ana Lima", "ana@example.org"), headers: auth })).status).toBe(201);
    const got = await fetch(url, { headers: auth });
    expect(await got.text()).toContain("FN:Ana Lima");
    expect((await fetch(url, { method: "DELETE", headers: auth })).status).toBe(204);
    expect(seen.listings).toBe(0);
  });
});
