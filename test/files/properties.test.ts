// Dead properties on the drive at /files/dav/ (RFC 4918 §9.1, §9.2): what a
// client sets with PROPPATCH is kept, with its namespace and XML content, and
// given back by PROPFIND; it follows the file through MOVE and COPY and goes
// with it. PROPFIND answers exactly what it is asked; PROPPATCH is all or
// nothing; a body that is not well-formed XML is a 400.
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

const NS = "http://example.com/ns/colours";
const patch = (ops: string) => `<?xml version="1.0" encoding="utf-8"?><D:propertyupdate xmlns:D="DAV:" xmlns:c="${NS}">${ops}</D:propertyupdate>`;
const propfind = (inner: string) => `<?xml version="1.0" encoding="utf-8"?><D:propfind xmlns:D="DAV:" xmlns:c="${NS}">${inner}</D:propfind>`;

/** A multistatus answer's propstats for one href: status to the XML of its D:prop. */
function propstats(xml: string, href: string): Map<number, string> {
  const response = xml.split("<D:response>").find((r) => r.includes(`<D:href>${href}</D:href>`));
  expect(response, `no response for ${href} in ${xml}`).toBeDefined();
  const out = new Map<number, string>();
  for (const m of response!.matchAll(/<D:propstat><D:prop>([\s\S]*?)<\/D:prop><D:status>HTTP\/1.1 (\d+)[^<]*<\/D:status>(?:<D:error>.*?<\/D:error>)?<\/D:propstat>/g)) out.set(Number(m[2]), m[1]);
  return out;
}

async function ask(path: string, body: string, depth = "0"): Promise<string> {
  const r = await dav("PROPFIND", path, { headers: { depth }, body });
  expect(r.status).toBe(207);
  return r.text();
}
const COLOUR = `<c:colour/>`;
const colourOf = async (path: string) => propstats(await ask(path, propfind(`<D:prop>${COLOUR}</D:prop>`)), `/files/dav${path}`);

describe("dead properties", () => {
  test("set, read back with namespaces and XML content as sent, replace and remove", async () => {
    expect((await dav("PUT", "/paint.txt", { body: "blue" })).status).toBe(201);
    const set = await dav("PROPPATCH", "/paint.txt", {
      body: patch(`<D:set><D:prop><c:colour>sky <c:shade xmlns:s="urn:s" s:tone="light">pale</c:shade> &amp; deep</c:colour><plain>no namespace</plain><c:empty/></D:prop></D:set>`),
    });
    expect(set.status).toBe(207);
    const setText = await set.text();
    expect(propstats(setText, "/files/dav/paint.txt").get(200)).toContain(`<x:colour xmlns:x="${NS}"/>`);

    const got = await ask("/paint.txt", propfind(`<D:prop><c:colour/><plain/><c:empty/></D:prop>`));
    const ok = propstats(got, "/files/dav/paint.txt").get(200)!;
    expect(ok).toContain(`<colour xmlns="${NS}">sky <shade xmlns:s="urn:s" s:tone="light">pale</shade> &amp; deep</colour>`);
    expect(ok).toContain("<plain>no namespace</plain>");
    expect(ok).toContain(`<empty xmlns="${NS}"/>`);

    await dav("PROPPATCH", "/paint.txt", { body: patch(`<D:set><D:prop><c:colour>green</c:colour></D:prop></D:set>`) });
    expect((await colourOf("/paint.txt")).get(200)).toBe(`<colour xmlns="${NS}">green</colour>`);
    await dav("PROPPATCH", "/paint.txt", { body: patch(`<D:remove><D:prop><c:colour/></D:prop></D:remove>`) });
    const gone = await colourOf("/paint.txt");
    expect(gone.get(200)).toBeUndefined();
    expect(gone.get(404)).toContain(`<x:colour xmlns:x="${NS}"/>`);
  });

  test("a prefix the client chose is not what names the property: its namespace is", async () => {
    await dav("PROPPATCH", "/paint.txt", { body: `<propertyupdate xmlns="DAV:"><set><prop><q:colour xmlns:q="${NS}">violet</q:colour></prop></set></propertyupdate>` });
    expect((await colourOf("/paint.txt")).get(200)).toBe(`<colour xmlns="${NS}">violet</colour>`);
    // The same local name in another namespace is another property.
    const other = await ask("/paint.txt", `<D:propfind xmlns:D="DAV:"><D:prop><colour xmlns="urn:other"/></D:prop></D:propfind>`);
    expect(propstats(other, "/files/dav/paint.txt").get(404)).toContain("colour");
  });

  test("they follow a file moved, are copied with it, and go with it", async () => {
    expect((await dav("MOVE", "/paint.txt", { headers: { destination: "/files/dav/moved.txt" } })).status).toBe(201);
    expect((await colourOf("/moved.txt")).get(200)).toBe(`<colour xmlns="${NS}">violet</colour>`);
    expect((await dav("COPY", "/moved.txt", { headers: { destination: "/files/dav/copied.txt" } })).status).toBe(201);
    expect((await colourOf("/copied.txt")).get(200)).toBe(`<colour xmlns="${NS}">violet</colour>`);
    // The copy's are its own.
    await dav("PROPPATCH", "/copied.txt", { body: patch(`<D:set><D:prop><c:colour>amber</c:colour></D:prop></D:set>`) });
    expect((await colourOf("/moved.txt")).get(200)).toBe(`<colour xmlns="${NS}">violet</colour>`);

    expect((await dav("DELETE", "/copied.txt")).status).toBe(204);
    expect((await dav("PUT", "/copied.txt", { body: "new" })).status).toBe(201);
    expect((await colourOf("/copied.txt")).get(200)).toBeUndefined();
  });

  test("on folders too, moved and copied with what is in them", async () => {
    expect((await dav("MKCOL", "/Box")).status).toBe(201);
    expect((await dav("PUT", "/Box/in.txt", { body: "x" })).status).toBe(201);
    await dav("PROPPATCH", "/Box/", { body: patch(`<D:set><D:prop><c:colour>brown</c:colour></D:prop></D:set>`) });
    await dav("PROPPATCH", "/Box/in.txt", { body: patch(`<D:set><D:prop><c:colour>white</c:colour></D:prop></D:set>`) });
    expect((await dav("MOVE", "/Box", { headers: { destination: "/files/dav/Crate" } })).status).toBe(201);
    expect((await dav("COPY", "/Crate", { headers: { destination: "/files/dav/Chest" } })).status).toBe(201);
    for (const [path, colour] of [
      ["/Crate/", "brown"],
      ["/Crate/in.txt", "white"],
      ["/Chest/", "brown"],
      ["/Chest/in.txt", "white"],
    ])
      expect((await colourOf(path)).get(200)).toBe(`<colour xmlns="${NS}">${colour}</colour>`);
    const listing = await ask("/Crate/", propfind(`<D:prop>${COLOUR}</D:prop>`), "1");
    expect(propstats(listing, "/files/dav/Crate/in.txt").get(200)).toContain("white");
    // And in the listing of the top folder.
    const top = await ask("/", propfind(`<D:prop>${COLOUR}</D:prop>`), "1");
    expect(propstats(top, "/files/dav/Crate/").get(200)).toContain("brown");
    expect(propstats(top, "/files/dav/moved.txt").get(200)).toContain("violet");
  });

  test("a file deleted through the API takes its properties along", async () => {
    expect((await dav("PUT", "/api.txt", { body: "x" })).status).toBe(201);
    await dav("PROPPATCH", "/api.txt", { body: patch(`<D:set><D:prop><c:colour>red</c:colour></D:prop></D:set>`) });
    const list = (await h.call("files/list", {}, { token })).body.result as { id: string; name: string }[];
    await h.call("files/delete", { id: list.find((f) => f.name === "api.txt")!.id }, { token });
    expect((await dav("PUT", "/api.txt", { body: "y" })).status).toBe(201);
    expect((await colourOf("/api.txt")).get(200)).toBeUndefined();
  });
});

describe("PROPFIND answers what it is asked", () => {
  test("named properties: the known ones 200, the unknown ones 404, nothing else", async () => {
    const got = await ask("/moved.txt", propfind(`<D:prop><D:getcontentlength/><c:colour/><c:unknown/><D:nonesuch/></D:prop>`));
    const stats = propstats(got, "/files/dav/moved.txt");
    expect(stats.get(200)).toBe(`<D:getcontentlength>4</D:getcontentlength><colour xmlns="${NS}">violet</colour>`);
    expect(stats.get(404)).toBe(`<x:unknown xmlns:x="${NS}"/><D:nonesuch/>`);
    expect(got).not.toContain("getetag");
    expect(got).not.toContain("lockdiscovery");
  });

  test("propname: the names of every property, no values", async () => {
    const got = await ask("/moved.txt", `<D:propfind xmlns:D="DAV:"><D:propname/></D:propfind>`);
    const names = propstats(got, "/files/dav/moved.txt").get(200)!;
    for (const n of ["<D:getetag/>", "<D:getcontentlength/>", "<D:resourcetype/>", "<D:lockdiscovery/>", `<x:colour xmlns:x="${NS}"/>`]) expect(names).toContain(n);
    expect(names).not.toContain("violet");
  });

  test("allprop gives the dead properties with the live ones; include adds one allprop leaves out", async () => {
    const all = propstats(await ask("/", `<D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>`), "/files/dav/").get(200)!;
    expect(all).toContain("<D:resourcetype><D:collection/></D:resourcetype>");
    expect(all).not.toContain("quota-used-bytes");
    const moved = propstats(await ask("/moved.txt", ""), "/files/dav/moved.txt").get(200)!;
    expect(moved).toContain(`<colour xmlns="${NS}">violet</colour>`);
    expect(moved).toContain("<D:getetag>");
    const included = propstats(await ask("/", `<D:propfind xmlns:D="DAV:"><D:allprop/><D:include><D:quota-used-bytes/></D:include></D:propfind>`), "/files/dav/").get(200)!;
    expect(included).toMatch(/<D:quota-used-bytes>\d+<\/D:quota-used-bytes>/);
  });
});

describe("PROPPATCH is all or nothing", () => {
  test("a protected property fails 403, the rest 424, and none is applied", async () => {
    const r = await dav("PROPPATCH", "/moved.txt", {
      body: patch(`<D:set><D:prop><c:colour>black</c:colour></D:prop></D:set><D:set><D:prop><D:getetag>"forged"</D:getetag></D:prop></D:set><D:remove><D:prop><c:other/></D:prop></D:remove>`),
    });
    expect(r.status).toBe(207);
    const text = await r.text();
    const stats = propstats(text, "/files/dav/moved.txt");
    expect(stats.get(403)).toBe("<D:getetag/>");
    expect(text).toContain("<D:cannot-modify-protected-property/>");
    expect(stats.get(424)).toBe(`<x:colour xmlns:x="${NS}"/><x:other xmlns:x="${NS}"/>`);
    expect(stats.get(200)).toBeUndefined();
    expect((await colourOf("/moved.txt")).get(200)).toBe(`<colour xmlns="${NS}">violet</colour>`);
  });
});

describe("bodies that are not XML, or not the XML asked for, are 400; one too large is 413", () => {
  test.each([
    ["PROPFIND", "not well-formed", `<D:propfind xmlns:D="DAV:"><D:prop><D:getetag/></D:prop>`],
    ["PROPFIND", "an undeclared prefix", `<D:propfind xmlns:D="DAV:"><D:prop><z:x/></D:prop></D:propfind>`],
    ["PROPFIND", "an empty prefix declaration", `<D:propfind xmlns:D="DAV:"><D:prop><bar:foo xmlns:bar=""/></D:prop></D:propfind>`],
    ["PROPFIND", "another root element", `<D:lockinfo xmlns:D="DAV:"/>`],
    ["PROPPATCH", "not well-formed", `<D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><c:x xmlns:c="urn:c">1</D:prop></D:set></D:propertyupdate>`],
    ["PROPPATCH", "another root element", `<D:propfind xmlns:D="DAV:"/>`],
    ["PROPPATCH", "a body past a mebibyte (413)", patch(`<D:set><D:prop><c:big>${"x".repeat(1024 * 1024)}</c:big></D:prop></D:set>`)],
  ])("%s with %s", async (method, what, body) => {
    const r = await dav(method, "/moved.txt", { headers: { depth: "0" }, body });
    expect(r.status).toBe(what.includes("413") ? 413 : 400);
    expect((await r.text()).length).toBeGreaterThan(0);
    expect((await colourOf("/moved.txt")).get(200)).toBe(`<colour xmlns="${NS}">violet</colour>`);
  });
});
