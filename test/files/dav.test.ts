// WebDAV at /files/dav/, driven by the `webdav` client as a file manager
// would: Basic auth with an app password, put, list, get byte for byte,
// folders, rename, copy, delete and locks; and the same files seen through
// the API, since writes go through files/put and files/delete.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createClient, type FileStat, type WebDAVClient } from "webdav";
import { startHearth, TestClock, type Hearth } from "../harness.ts";

let h: Hearth;
let dav: WebDAVClient;
let token: string;
const clock = new TestClock();
const MAX = 300_000;
const binary = new Uint8Array(256 * 3).map((_, i) => (i * 7) % 256);

beforeAll(async () => {
  h = await startHearth({ clock, env: { HEARTH_FILES_MAX_BYTES: String(MAX) } });
  token = await h.token("alice", { scopes: ["files"] });
  dav = createClient(`${h.url}/files/dav`, { username: "alice", password: token });
});
afterAll(() => h.stop());

const names = (list: FileStat[]) => list.map((f) => `${f.basename}${f.type === "directory" ? "/" : ""}`).sort();
const bytes = async (path: string) => new Uint8Array((await dav.getFileContents(path, { format: "binary" })) as ArrayBuffer);
const raw = (method: string, path: string, o: { headers?: Record<string, string>; body?: string; auth?: string } = {}) =>
  fetch(`${h.url}/files/dav${path}`, {
    method,
    body: o.body,
    headers: { authorization: o.auth ?? `Basic ${btoa(`alice:${token}`)}`, ...o.headers },
  });

describe("the webdav client drives files", () => {
  test("OPTIONS says class 1 and 2", async () => {
    const res = await raw("OPTIONS", "/");
    expect(res.status).toBe(200);
    expect(res.headers.get("dav")).toBe("1, 2");
    expect(res.headers.get("allow")).toContain("PROPFIND");
  });

  test("put, list and get back byte for byte: text, binary and a non-ASCII name", async () => {
    expect(await dav.putFileContents("/notes.txt", "milk, eggs\n")).toBe(true);
    expect(await dav.putFileContents("/pixels.bin", Buffer.from(binary))).toBe(true);
    expect(await dav.putFileContents("/Über café ☕.txt", "crème brûlée")).toBe(true);
    const list = (await dav.getDirectoryContents("/")) as FileStat[];
    expect(names(list)).toEqual(["notes.txt", "pixels.bin", "Über café ☕.txt"]);
    const bin = list.find((f) => f.basename === "pixels.bin")!;
    expect(bin.size).toBe(binary.byteLength);
    expect(bin.etag).toBeTruthy();
    expect(await bytes("/pixels.bin")).toEqual(binary);
    expect(await dav.getFileContents("/Über café ☕.txt", { format: "text" })).toBe("crème brûlée");
    expect(await dav.getFileContents("/notes.txt", { format: "text" })).toBe("milk, eggs\n");

    // The same files through the API: text stays text, binary comes back as base64.
    const api = (await h.call("files/list", {}, { token })).body.result as { id: string; name: string }[];
    const note = api.find((f) => f.name === "notes.txt")!;
    expect((await h.call("files/get", { id: note.id }, { token })).body.result).toMatchObject({ content: "milk, eggs\n", encoding: "text" });
    const pic = api.find((f) => f.name === "pixels.bin")!;
    expect(Buffer.from((await h.call("files/get", { id: pic.id }, { token })).body.result.content, "base64")).toEqual(Buffer.from(binary));
  });

  test("a range of a file", async () => {
    const res = await raw("GET", "/pixels.bin", { headers: { range: "bytes=10-19" } });
    expect(res.status).toBe(206);
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(binary.slice(10, 20));
  });

  test("overwriting replaces the file; Overwrite: F on a move refuses", async () => {
    await dav.putFileContents("/notes.txt", "bread\n");
    expect(await dav.getFileContents("/notes.txt", { format: "text" })).toBe("bread\n");
    const api = (await h.call("files/list", {}, { token })).body.result as { name: string }[];
    expect(api.filter((f) => f.name === "notes.txt")).toHaveLength(1);
    await expect(dav.moveFile("/notes.txt", "/pixels.bin", { overwrite: false })).rejects.toMatchObject({ status: 412 });
  });

  test("folders: make, put inside, list, rename a file and move a folder", async () => {
    await dav.createDirectory("/Photos");
    await dav.createDirectory("/Photos/2026");
    await dav.putFileContents("/Photos/2026/sea.bin", Buffer.from(binary.slice(0, 100)));
    expect(names((await dav.getDirectoryContents("/")) as FileStat[])).toContain("Photos/");
    expect(names((await dav.getDirectoryContents("/Photos")) as FileStat[])).toEqual(["2026/"]);
    expect(names((await dav.getDirectoryContents("/Photos/2026")) as FileStat[])).toEqual(["sea.bin"]);

    await dav.moveFile("/Photos/2026/sea.bin", "/Photos/2026/beach.bin");
    expect(names((await dav.getDirectoryContents("/Photos/2026")) as FileStat[])).toEqual(["beach.bin"]);
    await dav.moveFile("/Photos", "/Pictures");
    expect(await dav.exists("/Photos")).toBe(false);
    expect(await bytes("/Pictures/2026/beach.bin")).toEqual(binary.slice(0, 100));

    // A rename keeps the file's id, and its bytes, in the API.
    const api = (await h.call("files/list", {}, { token })).body.result as { name: string }[];
    expect(api.map((f) => f.name)).toContain("beach.bin");
    expect(api.map((f) => f.name)).not.toContain("sea.bin");

    await dav.copyFile("/Pictures/2026/beach.bin", "/beach copy.bin");
    expect(await bytes("/beach copy.bin")).toEqual(binary.slice(0, 100));

    // A file in a folder that does not exist is a conflict, as WebDAV says.
    await expect(dav.putFileContents("/Nowhere/x.txt", "x")).rejects.toMatchObject({ status: 409 });
  });

  test("delete a file and a folder with what is in it", async () => {
    await dav.deleteFile("/beach copy.bin");
    expect(await dav.exists("/beach copy.bin")).toBe(false);
    await dav.deleteFile("/Pictures");
    expect(await dav.exists("/Pictures")).toBe(false);
    const api = (await h.call("files/list", {}, { token })).body.result as { name: string }[];
    expect(api.map((f) => f.name)).not.toContain("beach.bin");
  });

  test("lock: a write without the token is refused 423, with it it works, then unlock", async () => {
    const lock = await dav.lock("/notes.txt");
    expect(lock.token).toStartWith("opaquelocktoken:");
    const refused = await raw("PUT", "/notes.txt", { body: "sneaky" });
    expect(refused.status).toBe(423);
    expect(await dav.getFileContents("/notes.txt", { format: "text" })).toBe("bread\n");
    const ok = await raw("PUT", "/notes.txt", { body: "cheese\n", headers: { if: `(<${lock.token}>)` } });
    expect(ok.status).toBe(204);
    const found = await raw("PROPFIND", "/notes.txt", { headers: { depth: "0" } });
    expect(await found.text()).toContain(lock.token);
    await dav.unlock("/notes.txt", lock.token);
    expect((await raw("PUT", "/notes.txt", { body: "free\n" })).status).toBe(204);
    expect(await dav.getFileContents("/notes.txt", { format: "text" })).toBe("free\n");
  });

  test("locking a name not yet there makes an empty file, as Finder expects before it writes", async () => {
    const lock = await dav.lock("/new.txt");
    expect((await dav.stat("/new.txt")) as FileStat).toMatchObject({ size: 0, type: "file" });
    const ok = await raw("PUT", "/new.txt", { body: "hello", headers: { if: `(<${lock.token}>)` } });
    expect(ok.status).toBe(204);
    await dav.unlock("/new.txt", lock.token);
  });

  test("bad input: a body past the cap is 413 and nothing is written; a bad name is 400", async () => {
    const big = await raw("PUT", "/big.bin", { body: "x".repeat(MAX + 1) });
    expect(big.status).toBe(413);
    expect((await big.json()).error).toMatchObject({ kind: "too_large", field: "content" });
    expect(await dav.exists("/big.bin")).toBe(false);
    const bad = await raw("PUT", "/bad%01name.txt", { body: "x" });
    expect(bad.status).toBe(400);
  });
});

describe("malformed requests are refused with a 4xx saying why, never a 500", () => {
  test("HEAD gives the headers of a file", async () => {
    const res = await raw("HEAD", "/notes.txt");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-length")).toBe("5");
  });

  test.each([
    ["PROPFIND without a finite Depth", "PROPFIND", "/", {}, undefined, 403],
    ["PROPFIND of nothing", "PROPFIND", "/nothing-here", { depth: "0" }, undefined, 404],
    ["MOVE without a Destination", "MOVE", "/notes.txt", {}, undefined, 400],
    ["MOVE to another server", "MOVE", "/notes.txt", { destination: "http://elsewhere.example/files/dav/x" }, undefined, 502],
    ["MOVE outside the drive", "MOVE", "/notes.txt", { destination: "/api/v1/x" }, undefined, 502],
    ["MOVE to a name with a control character", "MOVE", "/notes.txt", { destination: "/files/dav/a%07b" }, undefined, 400],
    ["a path that is not UTF-8", "GET", "/%C3%28", {}, undefined, 400],
    ["a name of dots", "DELETE", "/.../notes.txt", {}, undefined, 400],
    ["MKCOL with a body", "MKCOL", "/withbody", {}, "<x/>", 415],
    ["MKCOL where a file is", "MKCOL", "/notes.txt", {}, undefined, 405],
    ["a folder inside itself", "MOVE", "/Box", { destination: "/files/dav/Box/Inner" }, undefined, 409],
    ["LOCK with a body that is not a lockinfo", "LOCK", "/notes.txt", {}, "<nonsense/>", 400],
    ["LOCK refresh without a token", "LOCK", "/notes.txt", {}, undefined, 412],
    ["UNLOCK without a Lock-Token", "UNLOCK", "/notes.txt", {}, undefined, 400],
    ["UNLOCK with a token that holds nothing", "UNLOCK", "/notes.txt", { "lock-token": "<opaquelocktoken:nope>" }, undefined, 409],
    ["DELETE of the top folder", "DELETE", "/", {}, undefined, 403],
    ["a verb WebDAV does not have", "PATCH", "/notes.txt", {}, "x", 405],
  ] as [string, string, string, Record<string, string>, string | undefined, number][])("%s", async (_what, method, path, headers, body, status) => {
    if (!(await dav.exists("/Box"))) await dav.createDirectory("/Box");
    const res = await raw(method, path, { headers, body });
    expect(res.status).toBe(status);
    expect((await res.text()).length).toBeGreaterThan(0);
    expect(await dav.getFileContents("/notes.txt", { format: "text" })).toBe("free\n");
  });

  test("PROPPATCH answers each property by its namespace whatever prefix the client used; a lock keeps who holds it", async () => {
    // What Windows Explorer sends after writing a file.
    const patch = await raw("PROPPATCH", "/notes.txt", {
      body: '<?xml version="1.0" encoding="utf-8"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:schemas-microsoft-com:"><D:set><D:prop><Z:Win32LastModifiedTime>Mon, 23 Nov 2026 10:00:00 GMT</Z:Win32LastModifiedTime><Z:Win32FileAttributes>00000020</Z:Win32FileAttributes></D:prop></D:set></D:propertyupdate>',
    });
    expect(patch.status).toBe(207);
    const text = await patch.text();
    expect(text).toContain('<x:Win32LastModifiedTime xmlns:x="urn:schemas-microsoft-com:"/>');
    expect(text).toContain('<x:Win32FileAttributes xmlns:x="urn:schemas-microsoft-com:"/>');
    expect(text).toContain("HTTP/1.1 200 OK");
    // One document: a second XML declaration makes it malformed for strict clients.
    expect(text.match(/<\?xml/g)?.length).toBe(1);
    expect((await raw("PROPPATCH", "/notes.txt", { body: "<D:propertyupdate xmlns:D='DAV:'><D:set>" })).status).toBe(400);

    const lock = await raw("LOCK", "/notes.txt", {
      body: '<?xml version="1.0"?><a:lockinfo xmlns:a="DAV:"><a:lockscope><a:exclusive/></a:lockscope><a:locktype><a:write/></a:locktype><a:owner><a:href>mailto:ann@example.org</a:href></a:owner></a:lockinfo>',
    });
    expect(lock.status).toBe(200);
    expect(await lock.text()).toContain("<D:owner><D:href>mailto:ann@example.org</D:href></D:owner>");
    expect((await raw("UNLOCK", "/notes.txt", { headers: { "lock-token": lock.headers.get("lock-token")! } })).status).toBe(204);
  });

  test("a lock on a folder holds what is in it", async () => {
    const lock = await dav.lock("/Box");
    expect((await raw("PUT", "/Box/inside.txt", { body: "x" })).status).toBe(423);
    expect((await raw("PUT", "/Box/inside.txt", { body: "x", headers: { if: `(<${lock.token}>)` } })).status).toBe(201);
    expect((await raw("DELETE", "/Box")).status).toBe(423);
    await dav.unlock("/Box", lock.token);
    expect((await raw("DELETE", "/Box")).status).toBe(204);
  });
});

describe("app passwords", () => {
  test("no credentials: 401 asking for Basic", async () => {
    const res = await fetch(`${h.url}/files/dav/`, { method: "PROPFIND", headers: { depth: "1" } });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toStartWith("Basic");
  });

  test("a token scoped to contacts cannot reach files: 403", async () => {
    const contacts = await h.token("alice", { scopes: ["contacts"] });
    const other = createClient(`${h.url}/files/dav`, { username: "alice", password: contacts });
    await expect(other.getDirectoryContents("/")).rejects.toMatchObject({ status: 403 });
    await expect(other.putFileContents("/x.txt", "x")).rejects.toMatchObject({ status: 403 });
  });

  test("the user name must be the token's account; a wrong password is 401", async () => {
    const wrongUser = createClient(`${h.url}/files/dav`, { username: "bob", password: token });
    await expect(wrongUser.getDirectoryContents("/")).rejects.toMatchObject({ status: 401 });
    const wrongPassword = createClient(`${h.url}/files/dav`, { username: "alice", password: "not-a-token" });
    await expect(wrongPassword.getDirectoryContents("/")).rejects.toMatchObject({ status: 401 });
  });

  test("someone else's files are not there", async () => {
    const bob = await h.token("bob", { scopes: ["files"] });
    const theirs = createClient(`${h.url}/files/dav`, { username: "bob", password: bob });
    expect((await theirs.getDirectoryContents("/")) as FileStat[]).toEqual([]);
    await expect(theirs.getFileContents("/notes.txt")).rejects.toMatchObject({ status: 404 });
  });
});
