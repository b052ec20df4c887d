// Uploads to /files/dav/ go to the blob store as they arrive, never held
// whole: the bytes are on their way to the store while the client is still
// sending, come back intact, and a client that stops mid-body leaves nothing
// (no file, no changed file, no temp file, no blob). Driven over raw sockets
// so the test can look at the server while a body is half sent.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, statSync } from "node:fs";
import net from "node:net";
import { join } from "node:path";
import { bodyBudgetOf } from "../../core/http/body.ts";
import { startHearth, type Hearth } from "../harness.ts";

let h: Hearth;
let token: string;
let port: number;
const MiB = 1024 * 1024;

beforeAll(async () => {
  h = await startHearth({ env: { HEARTH_BODY_TIMEOUT: "600" } });
  token = await h.token("alice", { scopes: ["files"] });
  port = Number(new URL(h.url).port);
});
afterAll(() => h.stop());

const auth = () => `Basic ${Buffer.from(`alice:${token}`).toString("base64")}`;
const dav = (method: string, path: string, o: { body?: BodyInit; headers?: Record<string, string> } = {}) =>
  fetch(`${h.url}/files/dav${path}`, { method, body: o.body, headers: { authorization: auth(), ...o.headers } });

/** Bytes that differ from block to block, so a chunk lost, doubled or reordered shows. */
function pattern(n: number, seed: number): Uint8Array {
  const b = new Uint8Array(n);
  let x = seed;
  for (let i = 0; i < n; i += 4) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    b[i] = x & 0xff;
    b[i + 1] = (x >>> 8) & 0xff;
    b[i + 2] = (x >>> 16) & 0xff;
    b[i + 3] = (x >>> 24) & 0xff;
  }
  return b;
}

/** Bodies being received: the temp files in the data folder's blob space, with their sizes. */
function receiving(): number[] {
  try {
    const root = join(h.dir, "blobs");
    return readdirSync(root)
      .filter((n) => n.startsWith(".tmp-"))
      .map((n) => {
        try {
          return statSync(join(root, n)).size;
        } catch {
          return -1;
        }
      })
      .filter((s) => s >= 0);
  } catch {
    return [];
  }
}

/** A PUT whose body is sent by hand: its head now, the body as the test says. */
function open(path: string, length: number) {
  const socket = net.connect(port, "127.0.0.1");
  let got = "";
  socket.on("data", (d) => (got += d.toString("latin1")));
  socket.on("error", () => {});
  const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
  socket.write(`PUT /files/dav${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: ${auth()}\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n`);
  return {
    send: (b: Uint8Array) => new Promise<void>((resolve, reject) => socket.write(b, (e) => (e ? reject(e) : resolve()))),
    abort: () => socket.destroy(),
    answer: async () => {
      await closed;
      return Number(/^HTTP\/1\.1 (\d{3})/.exec(got)?.[1] ?? 0);
    },
  };
}

/** Waits until the server has let go of every body (its budget is back to nothing, no temp file is left). */
async function settled() {
  while (bodyBudgetOf(h.rt).inFlight > 0 || receiving().length > 0) await Bun.sleep(20);
}

describe("uploads to the drive stream to the blob store", () => {
  test("a large body is on its way to the store before it has all arrived, and comes back byte for byte", async () => {
    const bytes = pattern(24 * MiB, 7);
    const c = open("/big.bin", bytes.byteLength);
    await c.send(bytes.subarray(0, 8 * MiB));
    // Half the body sent: the part that has arrived is being written out, not gathered in memory.
    while (!receiving().some((n) => n >= MiB)) await Bun.sleep(20);
    await c.send(bytes.subarray(8 * MiB));
    expect(await c.answer()).toBe(201);
    await settled();

    const res = await dav("GET", "/big.bin");
    expect(res.status).toBe(200);
    expect(Buffer.compare(new Uint8Array(await res.arrayBuffer()), bytes)).toBe(0);
    const part = await dav("GET", "/big.bin", { headers: { range: `bytes=${10 * MiB}-${10 * MiB + 99}` } });
    expect(part.status).toBe(206);
    expect(Buffer.compare(new Uint8Array(await part.arrayBuffer()), bytes.subarray(10 * MiB, 10 * MiB + 100))).toBe(0);
    // The API sees the same file, under the hash of its bytes.
    const listed = (await h.call("files/list", {}, { token })).body.result as { name: string; size: number; encoding: string }[];
    expect(listed.find((f) => f.name === "big.bin")).toMatchObject({ size: 24 * MiB, encoding: "base64" });
    const hash = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
    expect(await h.rt.blobs.size(hash)).toBe(24 * MiB);
  });

  test("text and binary are stored as files/put stores them, and a copy is the same bytes", async () => {
    expect((await dav("PUT", "/note.txt", { body: "crème brûlée\n" })).status).toBe(201);
    expect((await dav("PUT", "/latin.txt", { body: new Uint8Array([0x63, 0x72, 0xe8, 0x6d, 0x65]) })).status).toBe(201);
    expect((await dav("PUT", "/empty.bin", { body: new Uint8Array() })).status).toBe(201);
    expect((await dav("COPY", "/big.bin", { headers: { destination: `${h.url}/files/dav/copy.bin` } })).status).toBe(201);
    const listed = (await h.call("files/list", {}, { token })).body.result as { id: string; name: string; size: number; encoding: string }[];
    const by = (name: string) => listed.find((f) => f.name === name)!;
    expect(by("note.txt")).toMatchObject({ encoding: "text", size: Buffer.byteLength("crème brûlée\n") });
    // Not UTF-8: kept as the bytes they are, not as text with replacement characters.
    expect(by("latin.txt")).toMatchObject({ encoding: "base64", size: 5 });
    expect(Buffer.from((await h.call("files/get", { id: by("latin.txt").id }, { token })).body.result.content, "base64")).toEqual(Buffer.from([0x63, 0x72, 0xe8, 0x6d, 0x65]));
    expect((await h.call("files/get", { id: by("note.txt").id }, { token })).body.result.content).toBe("crème brûlée\n");
    expect(by("empty.bin").size).toBe(0);
    expect(by("copy.bin").size).toBe(24 * MiB);
    const copy = await dav("GET", "/copy.bin");
    expect(Buffer.compare(new Uint8Array(await copy.arrayBuffer()), pattern(24 * MiB, 7))).toBe(0);
    await settled();
  });

  test("a client that stops mid-body leaves nothing: no new file, the old one unchanged, no temp file, no blob", async () => {
    const fresh = pattern(8 * MiB, 11);
    const c = open("/cut.bin", fresh.byteLength);
    await c.send(fresh.subarray(0, 3 * MiB));
    while (!receiving().some((n) => n >= MiB)) await Bun.sleep(20);
    c.abort();
    await settled();
    expect((await dav("PROPFIND", "/cut.bin", { headers: { depth: "0" } })).status).toBe(404);
    expect(await h.rt.blobs.size(new Bun.CryptoHasher("sha256").update(fresh.subarray(0, 3 * MiB)).digest("hex"))).toBeNull();

    // Replacing a file: cut off half way, the file keeps what it had.
    const before = await (await dav("GET", "/big.bin")).arrayBuffer();
    const r = open("/big.bin", fresh.byteLength);
    await r.send(fresh.subarray(0, 2 * MiB));
    while (!receiving().some((n) => n >= MiB)) await Bun.sleep(20);
    r.abort();
    await settled();
    const after = await dav("GET", "/big.bin");
    expect(Buffer.compare(new Uint8Array(await after.arrayBuffer()), new Uint8Array(before))).toBe(0);
    const names = ((await h.call("files/list", {}, { token })).body.result as { name: string }[]).map((f) => f.name).sort();
    expect(names).toEqual(["big.bin", "copy.bin", "empty.bin", "latin.txt", "note.txt"]);
  });

  test("a body past the cap stops being written the moment it passes, and leaves no temp file", async () => {
    const res = await dav("PUT", "/over.bin", {
      body: new ReadableStream({
        start(out) {
          // No length declared: the cap is found as the bytes arrive.
          for (let i = 0; i < 26; i++) out.enqueue(new Uint8Array(MiB).fill(i));
          out.close();
        },
      }),
    });
    expect(res.status).toBe(413);
    await settled();
    expect((await dav("PROPFIND", "/over.bin", { headers: { depth: "0" } })).status).toBe(404);
  });
});
