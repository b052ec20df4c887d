// WebDAV locks on the drive at /files/dav/ (RFC 4918 §6, §7, §9.10): every
// write to a locked place (PUT, DELETE, MOVE, COPY onto it, MKCOL, PROPPATCH)
// needs the lock's token or is 423; shared locks are shared; a folder locked
// with depth infinity holds what is in it; refresh and Timeout; a lock on a
// name not there yet.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHearth, TestClock, type Hearth } from "../harness.ts";

let h: Hearth;
let token: string;
const clock = new TestClock();

beforeAll(async () => {
  h = await startHearth({ clock });
  token = await h.token("alice", { scopes: ["files"] });
});
afterAll(() => h.stop());

const dav = (method: string, path: string, o: { headers?: Record<string, string>; body?: string } = {}) =>
  fetch(`${h.url}/files/dav${path}`, { method, body: o.body, headers: { authorization: `Basic ${btoa(`alice:${token}`)}`, ...o.headers } });
const lockinfo = (scope: "exclusive" | "shared", owner = "tester") =>
  `<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:${scope}/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>${owner}</D:owner></D:lockinfo>`;
async function lock(path: string, scope: "exclusive" | "shared", headers: Record<string, string> = {}): Promise<{ status: number; token?: string; body: string }> {
  const r = await dav("LOCK", path, { body: lockinfo(scope), headers });
  const t = r.headers.get("lock-token");
  return { status: r.status, token: t ? /<(.+)>/.exec(t)![1] : undefined, body: await r.text() };
}
const content = async (path: string) => {
  const r = await dav("GET", path);
  return r.status === 200 ? r.text() : r.status;
};
const PATCH = `<D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><z:note xmlns:z="urn:example:z">mine</z:note></D:prop></D:set></D:propertyupdate>`;
const noteOf = async (path: string) =>
  (await (await dav("PROPFIND", path, { headers: { depth: "0" }, body: '<D:propfind xmlns:D="DAV:"><D:prop><z:note xmlns:z="urn:example:z"/></D:prop></D:propfind>' })).text()).includes(">mine</note>");

describe("a lock holds every write", () => {
  test("PROPPATCH without the token is 423 and sets nothing; with it, it is applied", async () => {
    expect((await dav("PUT", "/doc.txt", { body: "a" })).status).toBe(201);
    const l = await lock("/doc.txt", "exclusive");
    expect(l.status).toBe(200);
    const refused = await dav("PROPPATCH", "/doc.txt", { body: PATCH });
    expect(refused.status).toBe(423);
    expect(await noteOf("/doc.txt")).toBe(false);
    const ok = await dav("PROPPATCH", "/doc.txt", { body: PATCH, headers: { if: `(<${l.token}>)` } });
    expect(ok.status).toBe(207);
    expect(await noteOf("/doc.txt")).toBe(true);

    // COPY onto it, MOVE and DELETE of it, without the token.
    expect((await dav("PUT", "/other.txt", { body: "o" })).status).toBe(201);
    expect((await dav("COPY", "/other.txt", { headers: { destination: "/files/dav/doc.txt" } })).status).toBe(423);
    expect((await dav("MOVE", "/doc.txt", { headers: { destination: "/files/dav/elsewhere.txt" } })).status).toBe(423);
    expect((await dav("DELETE", "/doc.txt")).status).toBe(423);
    expect(await content("/doc.txt")).toBe("a");
    expect((await dav("UNLOCK", "/doc.txt", { headers: { "lock-token": `<${l.token}>` } })).status).toBe(204);
  });

  test("a folder locked with depth infinity holds its members, their properties and new folders in it", async () => {
    expect((await dav("MKCOL", "/Shelf")).status).toBe(201);
    expect((await dav("PUT", "/Shelf/book.txt", { body: "b" })).status).toBe(201);
    const l = await lock("/Shelf", "exclusive", { depth: "infinity" });
    expect(l.status).toBe(200);
    expect((await dav("PROPPATCH", "/Shelf/book.txt", { body: PATCH })).status).toBe(423);
    expect((await dav("MKCOL", "/Shelf/Inner")).status).toBe(423);
    expect((await dav("PUT", "/Shelf/book.txt", { body: "changed" })).status).toBe(423);
    expect(await content("/Shelf/book.txt")).toBe("b");
    expect((await dav("PROPPATCH", "/Shelf/book.txt", { body: PATCH, headers: { if: `(<${l.token}>)` } })).status).toBe(207);
    expect((await dav("MKCOL", "/Shelf/Inner", { headers: { if: `(<${l.token}>)` } })).status).toBe(201);
    // A refresh through a member reaches the folder's lock (RFC 4918 §9.10.2).
    const refreshed = await dav("LOCK", "/Shelf/book.txt", { headers: { if: `(<${l.token}>)`, timeout: "Second-600" } });
    expect(refreshed.status).toBe(200);
    expect(await refreshed.text()).toContain("<D:timeout>Second-600</D:timeout>");
    expect((await dav("UNLOCK", "/Shelf/", { headers: { "lock-token": `<${l.token}>` } })).status).toBe(204);
  });
});

describe("a folder locked with depth 0", () => {
  test("holds what is in it as a list (adding, removing), not the content of its members", async () => {
    expect((await dav("MKCOL", "/Tray")).status).toBe(201);
    expect((await dav("PUT", "/Tray/a.txt", { body: "a" })).status).toBe(201);
    const l = await lock("/Tray", "exclusive", { depth: "0" });
    expect(l.status).toBe(200);
    expect((await dav("PUT", "/Tray/new.txt", { body: "n" })).status).toBe(423);
    expect((await dav("MKCOL", "/Tray/Sub")).status).toBe(423);
    expect((await dav("DELETE", "/Tray/a.txt")).status).toBe(423);
    expect((await dav("MOVE", "/other.txt", { headers: { destination: "/files/dav/Tray/other.txt" } })).status).toBe(423);
    expect(await content("/Tray/new.txt")).toBe(404);
    expect(await content("/other.txt")).toBe("o");
    // A member's content is its own.
    expect((await dav("PUT", "/Tray/a.txt", { body: "changed" })).status).toBe(204);
    expect((await dav("PUT", "/Tray/new.txt", { body: "n", headers: { if: `</files/dav/Tray/> (<${l.token}>)` } })).status).toBe(201);
    expect((await dav("UNLOCK", "/Tray/", { headers: { "lock-token": `<${l.token}>` } })).status).toBe(204);
  });
});

describe("shared locks", () => {
  test("are granted as shared, several at once; an exclusive one is refused while they hold", async () => {
    expect((await dav("PUT", "/shared.txt", { body: "s" })).status).toBe(201);
    const a = await lock("/shared.txt", "shared");
    expect(a.status).toBe(200);
    expect(a.body).toContain("<D:lockscope><D:shared/></D:lockscope>");
    const b = await lock("/shared.txt", "shared");
    expect(b.status).toBe(200);
    expect(b.token).not.toBe(a.token);
    expect((await lock("/shared.txt", "exclusive")).status).toBe(423);

    // Both are discovered.
    const found = await (await dav("PROPFIND", "/shared.txt", { headers: { depth: "0" }, body: '<D:propfind xmlns:D="DAV:"><D:prop><D:lockdiscovery/></D:prop></D:propfind>' })).text();
    expect(found).toContain(a.token!);
    expect(found).toContain(b.token!);
    expect(found.match(/<D:shared\/>/g)?.length).toBe(2);

    // A write needs one of their tokens.
    expect((await dav("PUT", "/shared.txt", { body: "x" })).status).toBe(423);
    expect((await dav("PUT", "/shared.txt", { body: "by b", headers: { if: `(<${b.token}>)` } })).status).toBe(204);
    expect(await content("/shared.txt")).toBe("by b");

    for (const t of [a.token, b.token]) expect((await dav("UNLOCK", "/shared.txt", { headers: { "lock-token": `<${t}>` } })).status).toBe(204);
    const ex = await lock("/shared.txt", "exclusive");
    expect(ex.status).toBe(200);
    // And a shared one is refused while an exclusive one holds.
    expect((await lock("/shared.txt", "shared")).status).toBe(423);
    expect((await dav("UNLOCK", "/shared.txt", { headers: { "lock-token": `<${ex.token}>` } })).status).toBe(204);
  });
});

describe("Timeout, expiry and names not there yet", () => {
  test("the Timeout asked for is granted up to an hour, and a lock past its time holds nothing", async () => {
    expect((await dav("PUT", "/timed.txt", { body: "t" })).status).toBe(201);
    const short = await dav("LOCK", "/timed.txt", { body: lockinfo("exclusive"), headers: { timeout: "Second-120" } });
    expect(await short.text()).toContain("<D:timeout>Second-120</D:timeout>");
    expect((await dav("PUT", "/timed.txt", { body: "no" })).status).toBe(423);
    clock.advance(121_000);
    expect((await dav("PUT", "/timed.txt", { body: "later" })).status).toBe(204);

    const long = await dav("LOCK", "/timed.txt", { body: lockinfo("exclusive"), headers: { timeout: "Infinite, Second-4100000000" } });
    expect(long.status).toBe(200);
    expect(await long.text()).toContain("<D:timeout>Second-3600</D:timeout>");
    const t = /<(.+)>/.exec(long.headers.get("lock-token")!)![1];
    expect((await dav("UNLOCK", "/timed.txt", { headers: { "lock-token": `<${t}>` } })).status).toBe(204);
  });

  test("a lock on a name not there yet makes it; a PUT with the token writes it, without is 423", async () => {
    const l = await lock("/reserved.txt", "exclusive");
    expect(l.status).toBe(201);
    expect((await dav("PUT", "/reserved.txt", { body: "theirs" })).status).toBe(423);
    expect((await dav("PUT", "/reserved.txt", { body: "mine", headers: { if: `(<${l.token}>)` } })).status).toBeLessThan(300);
    expect(await content("/reserved.txt")).toBe("mine");
    expect((await dav("UNLOCK", "/reserved.txt", { headers: { "lock-token": `<${l.token}>` } })).status).toBe(204);
  });

  test("a lockinfo naming no scope or another type is 400", async () => {
    const none = await dav("LOCK", "/timed.txt", { body: '<D:lockinfo xmlns:D="DAV:"><D:locktype><D:write/></D:locktype></D:lockinfo>' });
    expect(none.status).toBe(400);
    const read = await dav("LOCK", "/timed.txt", { body: '<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:read/></D:locktype></D:lockinfo>' });
    expect(read.status).toBe(400);
  });
});
