// CardDAV driven by a real client (tsdav): discovery, vCard 3.0 and 4.0 in
// and out, a card kept byte for byte, the unique-name rule for cards from
// clients, and sync after an API change.
import { afterEach, describe, expect, test } from "bun:test";
import { addressBookMultiGet, createDAVClient, type DAVAddressBook } from "tsdav";
import { startHearth, type Hearth } from "../harness.ts";
import { card3, cardWithPhoto } from "./fixtures.ts";

let h: Hearth | null = null;
afterEach(async () => {
  await h?.stop();
  h = null;
});

const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString("base64")}`;

async function book(hh: Hearth, token: string) {
  const c = await createDAVClient({ serverUrl: `${hh.url}/`, credentials: { username: "alice", password: token }, authMethod: "Basic", defaultAccountType: "carddav" });
  const [b] = await c.fetchAddressBooks();
  return { c, b: b as DAVAddressBook };
}

describe("CardDAV", () => {
  test("discovers the address book through /.well-known/carddav; cards made, changed and deleted go through contacts", async () => {
    h = await startHearth();
    const token = await h.token("alice");
    expect((await fetch(`${h.url}/.well-known/carddav`, { redirect: "manual" })).status).toBe(301);
    const { c, b } = await book(h, token);
    expect(b.url).toBe(`${h.url}/dav/addressbooks/alice/contacts/`);
    expect((await c.createVCard({ addressBook: b, filename: "bo.vcf", vCardString: card3("bo-1", "Bo Chen", "bo@example.org") })).status).toBe(201);
    let [ct] = (await h.call("contacts/list", {}, { token })).body.result;
    expect(ct).toMatchObject({ name: "Bo Chen", email: "bo@example.org" });

    const [card] = await c.fetchVCards({ addressBook: b });
    expect((await c.updateVCard({ vCard: { ...card, data: card3("bo-1", "Bo Chen", "bo@work.example") } })).status).toBe(204);
    [ct] = (await h.call("contacts/list", {}, { token })).body.result;
    expect(ct.email).toBe("bo@work.example");
    // A rename keeps the card's address and leaves one contact.
    const [renamed] = await c.fetchVCards({ addressBook: b });
    expect((await c.updateVCard({ vCard: { ...renamed, data: card3("bo-1", "Bo Chen-Li", "bo@work.example") } })).status).toBe(204);
    expect((await h.call("contacts/list", {}, { token })).body.result.map((x: { name: string }) => x.name)).toEqual(["Bo Chen-Li"]);
    const bad = await c.createVCard({ addressBook: b, filename: "x.vcf", vCardString: card3("x", "Xu", "not-an-address") });
    expect(bad.status).toBe(403);
    const why = await bad.text();
    expect(why).toContain("valid-address-data");
    expect(why).toContain("<d:responsedescription>email: ");

    const [now] = await c.fetchVCards({ addressBook: b });
    expect(now.url).toBe(`${b.url}bo.vcf`);
    expect((await c.deleteVCard({ vCard: now })).status).toBe(204);
    expect((await h.call("contacts/list", {}, { token })).body.result).toEqual([]);
  });

  test("a vCard 4.0 with a PHOTO data: URI comes back byte for byte, and as 4.0 once changed over the API", async () => {
    h = await startHearth();
    const token = await h.token("alice");
    const url = `${h.url}/dav/addressbooks/alice/contacts/ana.vcf`;
    const auth = { authorization: basic("alice", token) };
    const put = await fetch(url, { method: "PUT", body: cardWithPhoto, headers: { ...auth, "content-type": "text/vcard", "if-none-match": "*" } });
    expect(put.status).toBe(201);
    const got = await fetch(url, { headers: auth });
    expect(await got.text()).toBe(cardWithPhoto);
    const [ct] = (await h.call("contacts/list", {}, { token })).body.result;
    expect(ct).toMatchObject({ name: "Ana Lima", email: "ana@example.org", phone: "+44-20-7946-0958" });

    await h.call("contacts/add", { name: "Ana Lima", note: "met at the conference" }, { token });
    const after = await fetch(url, { headers: auth });
    expect(after.headers.get("etag")).not.toBe(put.headers.get("etag"));
    const text = await after.text();
    expect(text).toContain("VERSION:4.0");
    expect(text).toContain("UID:urn:uuid:4fbe8971-0bc3-424c-9c26-36c3e1eff6b1");
    expect(text).toContain("NOTE:met at the conference");
    // The rest of the card is the client's, as it sent it.
    expect(text).toContain("EMAIL;TYPE=work:ana@example.org");
    expect(text).toContain("PHOTO:data:image/png;base64,");
  });

  test("a card taking a name another card holds is refused with 409 and CARDDAV:no-uid-conflict naming that card", async () => {
    h = await startHearth();
    const token = await h.token("alice");
    const { c, b } = await book(h, token);
    expect((await c.createVCard({ addressBook: b, filename: "a.vcf", vCardString: card3("a", "Ana Lima", "ana@example.org") })).status).toBe(201);
    expect((await c.createVCard({ addressBook: b, filename: "b.vcf", vCardString: card3("b", "Bo Chen") })).status).toBe(201);
    const dup = await c.createVCard({ addressBook: b, filename: "dup.vcf", vCardString: card3("dup", "ANA LIMA", "other@example.org") });
    expect(dup.status).toBe(409);
    const body = await dup.text();
    expect(body).toContain("no-uid-conflict");
    expect(body).toContain("urn:ietf:params:xml:ns:carddav");
    expect(body).toContain("/dav/addressbooks/alice/contacts/a.vcf");
    // Renaming one card onto another's name is the same conflict; nothing changes.
    const bo = (await c.fetchVCards({ addressBook: b })).find((v) => v.url.endsWith("b.vcf"))!;
    expect((await c.updateVCard({ vCard: { ...bo, data: card3("b", "ana lima") } })).status).toBe(409);
    const names = (await h.call("contacts/list", {}, { token })).body.result.map((x: { name: string; email: string | null }) => [x.name, x.email]);
    expect(names).toEqual([
      ["Ana Lima", "ana@example.org"],
      ["Bo Chen", null],
    ]);
  });

  test("a contact added over the API appears in the client's next sync", async () => {
    h = await startHearth();
    const token = await h.token("alice");
    const { c, b } = await book(h, token);
    const first = await c.smartCollectionSync({ collection: { ...b, objects: [], objectMultiGet: addressBookMultiGet }, method: "webdav", detailedResult: true });
    expect(first.objects.created).toEqual([]);
    await h.call("contacts/add", { name: "Cy Okafor", phone: "+1 555 0100" }, { token });
    const next = await c.smartCollectionSync({ collection: { ...b, syncToken: first.syncToken, objects: [], objectMultiGet: addressBookMultiGet }, method: "webdav", detailedResult: true });
    expect(next.objects.created).toHaveLength(1);
    expect(next.objects.created[0].data).toContain("FN:Cy Okafor");
    expect(next.objects.created[0].data).toContain("VERSION:3.0");
  });

  test("an app password scoped to events and tasks cannot reach the address book", async () => {
    h = await startHearth();
    const token = await h.token("alice", { scopes: ["events", "tasks"] });
    const r = await fetch(`${h.url}/dav/addressbooks/alice/contacts/`, { method: "PROPFIND", headers: { authorization: basic("alice", token), depth: "1" } });
    expect(r.status).toBe(403);
  });
});
