// Request bodies to /dav/ and /files/dav/ are read under the same caps as the
// API's: a caller who may not reach the collection is refused before the body
// is read, a body past the cap is refused as it arrives, and bodies being
// received at once are held to the instance's budget. Driven over raw sockets,
// so the server's answer can come while the client is still sending.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { bodyBudgetOf } from "../../core/http/body.ts";
import { startHearth, type Hearth } from "../harness.ts";

let h: Hearth;
let port: number;
const MiB = 1024 * 1024;

beforeAll(async () => {
  // A small budget: the largest single body a reader takes (the DAV cap, 16 MiB) and no more.
  h = await startHearth({ env: { HEARTH_BODY_BUDGET: "1", HEARTH_FILES_MAX_BYTES: String(8 * MiB), HEARTH_BODY_TIMEOUT: "120" } });
  port = Number(new URL(h.url).port);
});
afterAll(() => h.stop());

const basic = (token: string) => `Basic ${Buffer.from(`alice:${token}`).toString("base64")}`;

/**
 * An open connection: what the server answers (its status line, once it has), and a way to send more.
 * Bun's own sockets rather than node:net: a server that refuses a body closes the connection while the
 * rest is still being sent, and a write that fails then must not stop the reading of the answer that
 * came before the close (node:net destroys the socket on the write's EPIPE, answer unread).
 */
function open(head: string) {
  let got = "";
  let done = false;
  let closed = false;
  let settle: (status: number | Error) => void = () => {};
  const answered = new Promise<number>((resolve, reject) => {
    settle = (s) => {
      if (done && typeof s !== "number") return;
      done = true;
      if (typeof s === "number") resolve(s);
      else reject(s);
    };
  });
  answered.catch(() => {});
  // What is still to be written, and who waits for it.
  let queue: { bytes: Uint8Array; sent: () => void }[] = [];
  const flush = (s: { write(b: Uint8Array): number }) => {
    while (queue.length) {
      const head = queue[0]!;
      const n = closed || done ? head.bytes.length : Math.max(0, s.write(head.bytes));
      if (n < head.bytes.length) {
        head.bytes = head.bytes.subarray(n);
        return;
      }
      queue.shift();
      head.sent();
    }
  };
  const ended = (why: string) => {
    closed = true;
    const m = /^HTTP\/1\.1 (\d{3})/.exec(got);
    if (m) settle(Number(m[1]));
    else settle(new Error(`${why} without an answer`));
    for (const q of queue) q.sent();
    queue = [];
  };
  const socket = Bun.connect({
    hostname: "127.0.0.1",
    port,
    socket: {
      data(_s, d) {
        got += Buffer.from(d).toString("latin1");
        const m = /^HTTP\/1\.1 (\d{3})[\s\S]*?\r\n\r\n[\s\S]*"message"/.exec(got);
        if (m) settle(Number(m[1]));
      },
      drain: (s) => flush(s),
      close: () => ended("closed"),
      end: () => ended("ended"),
      error: (_s, e) => ended(String(e)),
      connectError: (_s, e) => ended(String(e)),
    },
  });
  const write = (b: Uint8Array | string) =>
    new Promise<void>((resolve) => {
      if (done || closed) return resolve();
      queue.push({ bytes: typeof b === "string" ? new TextEncoder().encode(b) : b, sent: resolve });
      socket.then(flush, () => ended("not connected"));
    });
  void write(head);
  return {
    answered,
    /** Sends more, unless the server has answered already (then the rest is not wanted). */
    send: write,
    close: () => void socket.then((s) => s.terminate(), () => {}),
    text: () => got,
  };
}

/** Waits for the answer, or says the server is still waiting for the body (it never comes): five minutes, so a loaded machine still answers in time; an answer that comes at all comes long before. */
async function answerOf(c: { answered: Promise<number> }): Promise<number | string> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const waiting = new Promise<string>((resolve) => (timer = setTimeout(() => resolve("no answer: the server is waiting for the body"), 300_000)));
  try {
    return await Promise.race([c.answered, waiting]);
  } finally {
    clearTimeout(timer);
  }
}

const put = (path: string, token: string, headers: string) =>
  `PUT ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: ${basic(token)}\r\nContent-Type: text/calendar\r\n${headers}\r\n`;

describe("DAV request bodies", () => {
  test("a token allowed none of the collections is refused 403 before its body is sent", async () => {
    const notes = await h.token("alice", { scopes: ["notes"] });
    for (const path of ["/dav/calendars/alice/events/big.ics", "/dav/", "/files/dav/big.bin"]) {
      const c = open(put(path, notes, `Content-Length: ${10 * MiB}\r\n`));
      // Not a byte of the 10 MiB is sent: an answer now is an answer given without reading it.
      expect({ path, answer: await answerOf(c) }).toEqual({ path, answer: 403 });
      expect(c.text()).toMatch(/not allowed|scope/i);
      c.close();
    }
  });

  test("a body past the cap is refused 413 as it arrives, before it ends", async () => {
    const token = await h.token("alice", { scopes: ["events", "files"] });
    for (const path of ["/dav/calendars/alice/events/big.ics", "/files/dav/big.bin"]) {
      const c = open(put(path, token, "Transfer-Encoding: chunked\r\n"));
      const chunk = `${(MiB).toString(16)}\r\n${"x".repeat(MiB)}\r\n`;
      // 18 MiB, past both caps, and no closing chunk: the body never ends.
      for (let i = 0; i < 18; i++) await c.send(chunk);
      expect({ path, answer: await answerOf(c) }).toEqual({ path, answer: 413 });
      c.close();
    }
  });

  test("bodies received at once are held to the instance's budget: the one past it is refused, not held", async () => {
    const token = await h.token("alice", { scopes: ["events", "files"] });
    // One body of 12 MiB on its way (its first bytes sent, the rest held back) takes most of the budget.
    const first = open(put("/dav/calendars/alice/events/a.ics", token, `Content-Length: ${12 * MiB}\r\n`));
    await first.send("BEGIN:VCALENDAR\r\n");
    // Its share is counted once the server has started to read it.
    while (bodyBudgetOf(h.rt).inFlight < 12 * MiB) {
      expect(first.text()).toBe("");
      await Bun.sleep(20);
    }
    // A calendar object is held whole to be read: its length is counted before a byte of it is.
    const second = open(put("/dav/calendars/alice/events/b.ics", token, `Content-Length: ${5 * MiB}\r\n`));
    expect(await answerOf(second)).toBe(429);
    second.close();
    first.close();
    // Once the first is gone its share is free again.
    while (bodyBudgetOf(h.rt).inFlight > 0) await Bun.sleep(20);
    const ok = await fetch(`${h.url}/dav/calendars/alice/events/`, { method: "PROPFIND", headers: { authorization: basic(token), depth: "0" } });
    expect(ok.status).toBe(207);
  });

  test("an upload to /files/dav/ on its way counts only what is in memory: with one large upload under way, twenty more at once are all stored", async () => {
    const token = await h.token("alice", { scopes: ["files"] });
    const budget = bodyBudgetOf(h.rt);
    expect(budget.bytes).toBe(16 * MiB);
    // An upload of 8 MiB on its way: its first 64 KiB sent, the rest held back.
    const first = open(put("/files/dav/slow.bin", token, `Content-Length: ${8 * MiB}\r\n`));
    await first.send(new Uint8Array(64 * 1024).fill(0x62));
    // Once those bytes are on disk the server waits for more, holding none of them.
    const spooled = () => {
      try {
        return readdirSync(join(h.dir, "blobs")).filter((f) => f.startsWith(".tmp-received-")).some((f) => statSync(join(h.dir, "blobs", f)).size >= 64 * 1024);
      } catch {
        return false;
      }
    };
    while (!spooled()) await Bun.sleep(20);
    // Twenty of 512 KiB at once: with the 8 MiB counted whole, most would be refused (429); held in
    // memory at most whole, they fit in what the budget has beside the first's 64 KiB.
    const body = new Uint8Array(MiB / 2).fill(0x61);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => fetch(`${h.url}/files/dav/up-${i}.bin`, { method: "PUT", body, headers: { authorization: basic(token) } }).then(async (r) => (await r.arrayBuffer(), r.status))),
    );
    expect(answers).toEqual(Array(20).fill(201));
    first.close();
    while (budget.inFlight > 0) await Bun.sleep(20);
    const listed = await h.call("files/list", {}, { token });
    const sizes = (listed.body.result.files ?? listed.body.result) as { name: string; size: number }[];
    expect(sizes.filter((f) => f.name.startsWith("up-")).map((f) => f.size)).toEqual(Array(20).fill(MiB / 2));
  });
});
