import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { startHearth, TestClock, type Hearth } from "../harness.ts";

let h: Hearth;
const clock = new TestClock();
let alice: string;
let bob: string;
const MAX = 300_000;

beforeAll(async () => {
  // A small cap keeps the 413 test fast; the body limit leaves room for base64 past it.
  h = await startHearth({ clock, env: { HEARTH_FILES_MAX_BYTES: String(MAX), HEARTH_BODY_LIMIT: String(2 * 1024 * 1024) } });
  alice = await h.token("alice");
  bob = await h.token("bob");
});
afterAll(() => h.stop());

const put = (args: Record<string, unknown>, token = alice) => {
  clock.advance(1000);
  return h.call("files/put", args, { token });
};
const auth = (token: string, extra: Record<string, string> = {}) => ({ headers: { authorization: `Bearer ${token}`, ...extra } });
const sha256 = (b: Uint8Array) => new Bun.CryptoHasher("sha256").update(b).digest("hex");
/** Whether blobs are in the data folder (HEARTH_TEST_BLOBS=s3 runs this suite on a bucket). */
const onDisk = () => h.rt.config.HEARTH_BLOBS !== "s3";
const allBytes = new Uint8Array(256 * 4).map((_, i) => i % 256);

describe("files/put and get", () => {
  test("text round-trips, type guessed from the name", async () => {
    const r = await put({ name: "hello.md", content: "# Héllo 👋\n" });
    expect(r.status).toBe(200);
    const f = r.body.result;
    expect(f.type).toBe("text/markdown;charset=utf-8");
    expect(f.size).toBe(new TextEncoder().encode("# Héllo 👋\n").byteLength);
    expect(f.url).toBe(`${h.url}/files/${f.id}`);
    const g = await h.call("files/get", { id: f.id }, { token: alice });
    expect(g.body.result.content).toBe("# Héllo 👋\n");
    expect(g.body.result.encoding).toBe("text");
    expect((await put({ name: "notes", content: "plain" })).body.result.type).toBe("text/plain;charset=utf-8");
    expect((await put({ name: "x.bin", content: "AAEC", encoding: "base64" })).body.result.type).toBe("application/octet-stream");
    expect((await put({ name: "data", content: "{}", type: "application/json" })).body.result.type).toBe("application/json");
  });

  test("binary round-trips byte for byte through base64, get and the URL", async () => {
    const b64 = Buffer.from(allBytes).toString("base64");
    const f = (await put({ name: "all.bin", content: b64, encoding: "base64" })).body.result;
    expect(f.size).toBe(allBytes.length);
    const g = await h.call("files/get", { id: f.id }, { token: alice });
    expect(g.body.result.encoding).toBe("base64");
    expect(g.body.result.content).toBe(b64);
    const res = await fetch(f.url, auth(alice));
    expect(res.status).toBe(200);
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(allBytes);
    // Bun drops the length of a streamed body, as a bucket's is: only bytes on disk carry it.
    if (onDisk()) expect(res.headers.get("content-length")).toBe(String(allBytes.length));
    // Stored once, content-addressed, under the data folder with no temp files left behind.
    const hash = sha256(allBytes);
    expect(await h.rt.blobs.exists(hash)).toBe(true);
    if (onDisk()) {
      expect(existsSync(join(h.dir, "blobs", hash.slice(0, 2), hash.slice(2)))).toBe(true);
      expect(readdirSync(join(h.dir, "blobs")).filter((n) => n.startsWith(".tmp"))).toEqual([]);
    }
  });

  test("invalid base64 is a 400 naming content; a bad encoding or type is a 400 too", async () => {
    for (const content of ["not base64!", "A", "AAAAA", "A===", "AA=A", "data:text/plain;base64,AAAA"]) {
      const r = await put({ name: "x.bin", content, encoding: "base64" });
      expect(r.status).toBe(400);
      expect(r.body.error.field).toBe("content");
    }
    expect((await put({ name: "x.bin", content: "AAEC", encoding: "hex" })).body.error.field).toBe("encoding");
    expect((await put({ name: "x.bin", content: "x", type: "not a type" })).body.error.field).toBe("type");
    expect((await put({ name: "../etc/passwd", content: "x" })).body.error.field).toBe("name");
    expect((await put({ name: "", content: "x" })).body.error.field).toBe("name");
  });

  test("over the size cap is 413", async () => {
    const big = Buffer.alloc(MAX + 1, 7).toString("base64");
    const r = await put({ name: "big.bin", content: big, encoding: "base64" });
    expect(r.status).toBe(413);
    expect(r.body.error.field).toBe("content");
    const bigText = await put({ name: "big.txt", content: "x".repeat(MAX + 1) });
    expect(bigText.status).toBe(413);
    const exact = await put({ name: "exact.bin", content: Buffer.alloc(MAX, 7).toString("base64"), encoding: "base64" });
    expect(exact.status).toBe(200);
    expect(exact.body.result.size).toBe(MAX);
  });

  test("list is the caller's files, newest first, without content", async () => {
    const t = await h.token("lister");
    const a = (await put({ name: "a.txt", content: "a" }, t)).body.result;
    const b = (await put({ name: "b.txt", content: "b" }, t)).body.result;
    const l = (await h.call("files/list", {}, { token: t })).body.result;
    expect(l.map((f: any) => f.id)).toEqual([b.id, a.id]);
    expect(l[0].content).toBeUndefined();
  });
});

describe("file URLs", () => {
  let f: any;
  beforeAll(async () => {
    f = (await put({ name: "abc déjà.txt", content: "0123456789abcdefghij" })).body.result;
  });

  test("served with type, disposition and nosniff; only to the owner", async () => {
    const res = await fetch(f.url, auth(alice));
    expect(res.headers.get("content-type")).toBe("text/plain;charset=utf-8");
    expect(res.headers.get("content-disposition")).toBe(`inline; filename="abc d_j_.txt"; filename*=UTF-8''abc%20d%C3%A9j%C3%A0.txt`);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(await res.text()).toBe("0123456789abcdefghij");
    for (const init of [undefined, auth(bob)]) {
      const other = await fetch(f.url, init);
      expect(other.status).toBe(404);
      expect(await other.text()).not.toContain("0123");
    }
  });

  test("Range: first bytes, open end, suffix, unsatisfiable, and whole file for several ranges", async () => {
    const get = (range: string, extra: Record<string, string> = {}) => fetch(f.url, auth(alice, { range, ...extra }));
    let r = await get("bytes=0-3");
    expect(r.status).toBe(206);
    expect(r.headers.get("content-range")).toBe("bytes 0-3/20");
    expect(await r.text()).toBe("0123");
    r = await get("bytes=15-");
    expect(await r.text()).toBe("fghij");
    r = await get("bytes=-4");
    expect(r.headers.get("content-range")).toBe("bytes 16-19/20");
    expect(await r.text()).toBe("ghij");
    r = await get("bytes=10-1000");
    expect(r.headers.get("content-range")).toBe("bytes 10-19/20");
    r = await get("bytes=20-");
    expect(r.status).toBe(416);
    expect(r.headers.get("content-range")).toBe("bytes */20");
    r = await get("bytes=0-1,4-5");
    expect(r.status).toBe(200);
    expect(await r.text()).toBe("0123456789abcdefghij");
    const etag = r.headers.get("etag")!;
    r = await get("bytes=0-1", { "if-range": '"stale"' });
    expect(r.status).toBe(200);
    r = await get("bytes=0-1", { "if-range": etag });
    expect(r.status).toBe(206);
    r = await fetch(f.url, auth(alice, { "if-none-match": etag }));
    expect(r.status).toBe(304);
  });

  test("HTML and SVG are downloads under a sandboxing CSP, whatever type is claimed", async () => {
    const html = (await put({ name: "page.html", content: "<script>fetch('/api/v1/files/list')</script>" })).body.result;
    const svg = (await put({ name: "pic.svg", content: '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>' })).body.result;
    const sneaky = (await put({ name: "pic.png", content: "<script>alert(1)</script>", type: "text/html" })).body.result;
    for (const x of [html, svg, sneaky]) {
      const res = await fetch(x.url, auth(alice));
      expect(res.headers.get("content-disposition")!.startsWith("attachment;")).toBe(true);
      expect(res.headers.get("content-security-policy")!.split(";")[0]).toBe("sandbox");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    }
    const png = (await put({ name: "dot.png", content: "iVBORw0KGgo=", encoding: "base64" })).body.result;
    const res = await fetch(png.url, auth(alice));
    expect(res.headers.get("content-type")).toBe("image/png");
    expect(res.headers.get("content-disposition")!.startsWith("inline;")).toBe(true);
  });

  test("a share link (made by its owner) opens the file for anyone until withdrawn", async () => {
    const share = (token: string | undefined, body?: unknown) =>
      fetch(`${f.url}/share`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const s = await share(alice);
    expect(s.status).toBe(200);
    const link = (await s.json()).result.share_url;
    expect(link).toMatch(/\/files\/shared\/[\w-]{32}$/);
    expect((await h.call("files/get", { id: f.id }, { token: alice })).body.result.share_url).toBe(link);
    const res = await fetch(link);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("0123456789abcdefghij");
    expect((await fetch(link, { headers: { range: "bytes=0-1" } })).status).toBe(206);
    expect((await share(bob)).status).toBe(404);
    expect((await share(undefined)).status).toBe(401);
    expect((await share(alice, { shared: "no" })).status).toBe(400);
    expect((await fetch(`${f.url}/share`, { method: "GET", headers: { authorization: `Bearer ${alice}` } })).status).toBe(404);
    const off = await share(alice, { shared: false });
    expect((await off.json()).result.share_url).toBeNull();
    expect((await fetch(link)).status).toBe(404);
    expect((await fetch(`${h.url}/files/shared/${"x".repeat(32)}`)).status).toBe(404);
    // A new link is a new secret: the withdrawn one stays dead.
    const again = (await (await share(alice)).json()).result.share_url;
    expect(again).not.toBe(link);
    expect((await fetch(link)).status).toBe(404);
    expect((await fetch(again)).status).toBe(200);
  });
});

describe("files/delete", () => {
  test("only the owner; the blob goes when no other file references it", async () => {
    const bytes = new TextEncoder().encode("shared bytes between two accounts");
    const hash = sha256(bytes);
    const a = (await put({ name: "a.txt", content: "shared bytes between two accounts" })).body.result;
    const b = (await put({ name: "b.txt", content: "shared bytes between two accounts" }, bob)).body.result;
    expect((await h.call("files/delete", { id: a.id }, { token: bob })).status).toBe(404);
    expect((await h.call("files/delete", { id: a.id }, { token: alice })).status).toBe(200);
    expect((await h.call("files/get", { id: a.id }, { token: alice })).status).toBe(404);
    expect((await fetch(a.url, auth(alice))).status).toBe(404);
    expect(await h.rt.blobs.exists(hash)).toBe(true);
    expect((await h.call("files/get", { id: b.id }, { token: bob })).body.result.content).toBe("shared bytes between two accounts");
    expect((await h.call("files/delete", { id: b.id }, { token: bob })).status).toBe(200);
    expect(await h.rt.blobs.exists(hash)).toBe(false);
  });
});

test("a name of dots alone is refused", async () => {
  const t = await h.token("dots");
  for (const name of [".", "..", "..."]) {
    const r = await h.call("files/put", { name, content: "x" }, { token: t });
    expect(r.status).toBe(400);
    expect(r.body.error.field).toBe("name");
  }
});
