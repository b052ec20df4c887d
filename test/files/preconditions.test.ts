// A stale writer over WebDAV is refused with 412 and changes nothing:
// If-Match and If-None-Match (RFC 9110 §13) and the If header (RFC 4918
// §10.4: lock tokens and entity tags, tagged and untagged lists, Not) on PUT,
// DELETE, MOVE, COPY and PROPPATCH of the drive at /files/dav/.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHearth, TestClock, type Hearth } from "../harness.ts";

let h: Hearth;
let token: string;

beforeAll(async () => {
  h = await startHearth({ clock: new TestClock() });
  token = await h.token("alice", { scopes: ["files"] });
});
afterAll(() => h.stop());

const dav = (method: string, path: string, o: { headers?: Record<string, string>; body?: string } = {}) =>
  fetch(`${h.url}/files/dav${path}`, { method, body: o.body, headers: { authorization: `Basic ${btoa(`alice:${token}`)}`, ...o.headers } });
const content = async (path: string) => {
  const r = await dav("GET", path);
  return r.status === 200 ? r.text() : r.status;
};
/** Puts a file and gives back the entity tag the drive answered with. */
async function put(path: string, body: string): Promise<string> {
  const r = await dav("PUT", path, { body });
  expect(r.status).toBeLessThan(300);
  return r.headers.get("etag")!;
}
const LOCKINFO = '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>';

describe("If-Match and If-None-Match", () => {
  test("a PUT with the entity tag it read succeeds; one that read an older version is 412 and the newer content stays", async () => {
    const first = await put("/list.txt", "milk\n");
    expect(first).toMatch(/^"[0-9a-f]+"$/);
    // The tag PROPFIND and GET give is the one PUT gave.
    expect((await dav("GET", "/list.txt")).headers.get("etag")).toBe(first);
    expect(await (await dav("PROPFIND", "/list.txt", { headers: { depth: "0" } })).text()).toContain(`<D:getetag>${first}</D:getetag>`);

    const ok = await dav("PUT", "/list.txt", { body: "milk, eggs\n", headers: { "if-match": first } });
    expect(ok.status).toBe(204);
    const stale = await dav("PUT", "/list.txt", { body: "bread\n", headers: { "if-match": first } });
    expect(stale.status).toBe(412);
    expect(await stale.text()).toContain("If-Match");
    expect(await content("/list.txt")).toBe("milk, eggs\n");
    // A list of tags, one of them current, is a match.
    expect((await dav("PUT", "/list.txt", { body: "cheese\n", headers: { "if-match": `"0000", ${ok.headers.get("etag")}` } })).status).toBe(204);
  });

  test("If-None-Match: * creates only where nothing is; If-Match: * writes only where something is", async () => {
    expect((await dav("PUT", "/once.txt", { body: "first", headers: { "if-none-match": "*" } })).status).toBe(201);
    expect((await dav("PUT", "/once.txt", { body: "second", headers: { "if-none-match": "*" } })).status).toBe(412);
    expect(await content("/once.txt")).toBe("first");
    expect((await dav("PUT", "/absent.txt", { body: "x", headers: { "if-match": "*" } })).status).toBe(412);
    expect(await content("/absent.txt")).toBe(404);
    const tag = (await dav("GET", "/once.txt")).headers.get("etag")!;
    expect((await dav("PUT", "/once.txt", { body: "third", headers: { "if-none-match": tag } })).status).toBe(412);
    expect(await content("/once.txt")).toBe("first");
  });

  test("DELETE and MOVE of a file changed since it was read are 412 and leave it where it is", async () => {
    const old = await put("/draft.txt", "v1");
    await put("/draft.txt", "v2");
    expect((await dav("DELETE", "/draft.txt", { headers: { "if-match": old } })).status).toBe(412);
    expect(await content("/draft.txt")).toBe("v2");
    const moved = await dav("MOVE", "/draft.txt", { headers: { "if-match": old, destination: "/files/dav/final.txt" } });
    expect(moved.status).toBe(412);
    expect(await content("/draft.txt")).toBe("v2");
    expect(await content("/final.txt")).toBe(404);
    const copied = await dav("COPY", "/draft.txt", { headers: { "if-match": old, destination: "/files/dav/copy.txt" } });
    expect(copied.status).toBe(412);
    expect(await content("/copy.txt")).toBe(404);

    const now = (await dav("GET", "/draft.txt")).headers.get("etag")!;
    expect((await dav("MOVE", "/draft.txt", { headers: { "if-match": now, destination: "/files/dav/final.txt" } })).status).toBe(201);
    expect((await dav("DELETE", "/final.txt", { headers: { "if-match": now } })).status).toBe(204);
    expect(await content("/final.txt")).toBe(404);
  });

  test("a PROPPATCH against a stale entity tag sets nothing", async () => {
    const old = await put("/tagged.txt", "a");
    await put("/tagged.txt", "b");
    const body = '<D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><z:colour xmlns:z="urn:example:z">red</z:colour></D:prop></D:set></D:propertyupdate>';
    expect((await dav("PROPPATCH", "/tagged.txt", { body, headers: { "if-match": old } })).status).toBe(412);
    const found = await dav("PROPFIND", "/tagged.txt", { headers: { depth: "0" }, body: '<D:propfind xmlns:D="DAV:"><D:prop><z:colour xmlns:z="urn:example:z"/></D:prop></D:propfind>' });
    expect(await found.text()).not.toContain("red");
  });
});

describe("the If header", () => {
  test("an untagged entity tag: the current one lets the PUT through, a stale one is 412", async () => {
    const old = await put("/if.txt", "one");
    const cur = await put("/if.txt", "two");
    expect((await dav("PUT", "/if.txt", { body: "stale", headers: { if: `([${old}])` } })).status).toBe(412);
    expect(await content("/if.txt")).toBe("two");
    expect((await dav("DELETE", "/if.txt", { headers: { if: `([${old}])` } })).status).toBe(412);
    expect((await dav("MOVE", "/if.txt", { headers: { if: `([${old}])`, destination: "/files/dav/if2.txt" } })).status).toBe(412);
    expect(await content("/if.txt")).toBe("two");
    expect((await dav("PUT", "/if.txt", { body: "three", headers: { if: `([${cur}])` } })).status).toBe(204);
    expect(await content("/if.txt")).toBe("three");
  });

  test("Not, and several lists of which one holds", async () => {
    const cur = await put("/not.txt", "a");
    // Not of the current tag fails; Not of a tag it does not have holds.
    expect((await dav("PUT", "/not.txt", { body: "b", headers: { if: `(Not [${cur}])` } })).status).toBe(412);
    expect((await dav("PUT", "/not.txt", { body: "b", headers: { if: '(Not ["0123"])' } })).status).toBe(204);
    const now = (await dav("GET", "/not.txt")).headers.get("etag")!;
    // The first list fails, the second holds: the header holds.
    expect((await dav("PUT", "/not.txt", { body: "c", headers: { if: `(["0123"]) ([${now}])` } })).status).toBe(204);
    // No lock is on it, so a list asking for one fails; with Not it holds.
    expect((await dav("PUT", "/not.txt", { body: "d", headers: { if: "(<DAV:no-lock>)" } })).status).toBe(412);
    expect((await dav("PUT", "/not.txt", { body: "d", headers: { if: "(Not <DAV:no-lock>)" } })).status).toBe(204);
    expect(await content("/not.txt")).toBe("d");
  });

  test("a tagged list is checked on the resource it names", async () => {
    const cur = await put("/tag.txt", "a");
    await put("/other.txt", "o");
    // About this file, by its full URL: holds.
    expect((await dav("PUT", "/tag.txt", { body: "b", headers: { if: `<${h.url}/files/dav/tag.txt> ([${cur}])` } })).status).toBe(204);
    // About another file, whose tag is not this: fails though the request's own file has it.
    const now = (await dav("GET", "/tag.txt")).headers.get("etag")!;
    expect((await dav("PUT", "/tag.txt", { body: "c", headers: { if: `</files/dav/other.txt> ([${now}])` } })).status).toBe(412);
    expect(await content("/tag.txt")).toBe("b");
  });

  test("a lock's token with the entity tag: a stale tag is 412 even with the right token", async () => {
    const cur = await put("/locked.txt", "a");
    const lock = await dav("LOCK", "/locked.txt", { body: LOCKINFO });
    expect(lock.status).toBe(200);
    const t = /<(.+)>/.exec(lock.headers.get("lock-token")!)![1];
    expect((await dav("PUT", "/locked.txt", { body: "b", headers: { if: `(<${t}> ["00ff"])` } })).status).toBe(412);
    // The etag holds but the token named is not the lock's: the condition fails.
    expect((await dav("PUT", "/locked.txt", { body: "b", headers: { if: `(<opaquelocktoken:not-it> [${cur}])` } })).status).toBe(412);
    expect(await content("/locked.txt")).toBe("a");
    expect((await dav("PUT", "/locked.txt", { body: "b", headers: { if: `(<${t}> [${cur}])` } })).status).toBe(204);
    expect((await dav("UNLOCK", "/locked.txt", { headers: { "lock-token": `<${t}>` } })).status).toBe(204);
  });

  test("a malformed If header is 400 saying why, and nothing is written", async () => {
    await put("/bad-if.txt", "a");
    for (const header of ["(<opaquelocktoken:x>", "nonsense", "()", "<http://x/> nothing"]) {
      const r = await dav("PUT", "/bad-if.txt", { body: "b", headers: { if: header } });
      expect({ header, status: r.status }).toEqual({ header, status: 400 });
      expect(await r.text()).toContain("If header");
    }
    expect(await content("/bad-if.txt")).toBe("a");
  });
});
