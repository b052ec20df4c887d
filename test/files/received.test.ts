// A body received into the blob store holds no more memory than the chunk it
// is writing: each chunk's bytes are given back once they are on disk, not when
// the collector gets to them, so many large uploads at once do not add up
// (nor call for a full collection, which holds every request while it runs).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startHearth, type Hearth } from "../harness.ts";

let h: Hearth;
beforeAll(async () => {
  h = await startHearth();
});
afterAll(() => h.stop());

test("each chunk a body streamed in is given back once written, a view into a larger buffer left whole, and the bytes received are the bytes sent", async () => {
  const own = [new Uint8Array(64 * 1024).fill(1), new Uint8Array(100_000).fill(2)];
  const shared = new Uint8Array(8192).fill(3);
  const view = shared.subarray(1024, 5120);
  const sent = [own[0], view, own[1]];
  const expected = new Bun.CryptoHasher("sha256");
  for (const c of sent) expected.update(c);
  const hash = expected.digest("hex");
  const size = sent.reduce((n, c) => n + c.byteLength, 0);
  let i = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      if (i < sent.length) c.enqueue(sent[i++]);
      else c.close();
    },
  });
  const got = await h.rt.blobs.receive(body, { max: 1 << 20, over: (n) => new Error(`over: ${n}`) });
  try {
    expect({ hash: got.hash, size: got.size }).toEqual({ hash, size });
    // The chunks that were whole buffers are emptied; the view's buffer still holds its bytes.
    expect(own.map((c) => c.buffer.byteLength)).toEqual([0, 0]);
    expect(shared.byteLength).toBe(8192);
    expect(shared.every((b) => b === 3)).toBe(true);
  } finally {
    await got.drop();
  }
});
