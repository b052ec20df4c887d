// one store: how request bodies are read, before any method runs; the writes they carry run on both stores in their services' tests
// Request bodies are read as they stream, under a cap: a body past it is
// refused the moment the cap is passed, on every reader, so a sender cannot
// make the instance hold a body of any size (with or without a Content-Length).
// Bodies being received at once share a budget; past it, 429 with Retry-After.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bodyBudgetOf } from "../../core/http/body.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { errorShapeProblem } from "./instance.ts";
import { rawRequest } from "./raw.ts";

const LIMIT = 64 * 1024;
let h: Hearth;
let token: string;
let port: number;

beforeAll(async () => {
  // A budget of 1 byte is raised to the largest single body (an upload), so two large uploads overfill it.
  h = await startHearth({ env: { HEARTH_BODY_LIMIT: String(LIMIT), HEARTH_BODY_BUDGET: "1", HEARTH_RATE_WRITES: "0" } });
  token = await h.token("alice");
  port = Number(new URL(h.url).port);
});
afterAll(() => h?.stop());

// Four times the cap is written and the body is never finished: only a server that stops reading at the cap answers.
const OPEN = 4 * LIMIT;

test("an endless chunked body to /signin, the API and /mcp is answered 413 as soon as it passes the cap", async () => {
  const cases: { path: string; headers: Record<string, string> }[] = [
    { path: "/signin", headers: { "content-type": "application/x-www-form-urlencoded" } },
    { path: "/signup", headers: { "content-type": "application/json" } },
    { path: "/api/v1/notes/add", headers: { "content-type": "application/json", authorization: `Bearer ${token}` } },
    { path: "/mcp", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` } },
  ];
  for (const c of cases) {
    const r = await rawRequest(port, { path: c.path, headers: c.headers, openBody: OPEN });
    expect(r.status, c.path).toBe(413);
    const body = JSON.parse(r.text);
    expect(errorShapeProblem(413, c.path === "/mcp" ? body.error.data : body), c.path).toBeNull();
    expect(r.text, c.path).not.toMatch(/\n\s+at /);
  }
  // Nothing is left reserved once the refused reads are over.
  expect(bodyBudgetOf(h.rt).inFlight).toBe(0);
  expect((await h.call("notes/add", { title: "still here", text: "ok" }, { token })).status).toBe(200);
});

test("a plugin's own POST route reads its body under the same cap", async () => {
  const r = await rawRequest(port, { path: "/files/nope/share", headers: { authorization: `Bearer ${token}` }, openBody: OPEN });
  expect(r.status).toBe(413);
  expect(errorShapeProblem(413, JSON.parse(r.text))).toBeNull();
});

test("a declared length over the cap is refused before any of the body is read", async () => {
  // Under the server's own backstop (the largest body any method takes), over this reader's cap.
  const r = await rawRequest(port, { path: "/signin", headers: { "content-type": "application/json", "content-length": "1000000" } });
  expect(r.status).toBe(413);
  expect(r.sent).toBe(0);
  expect(JSON.parse(r.text).error.message).toContain("1000000 bytes");
});

test("bodies received at once share a budget: past it the next is refused with 429 and Retry-After; freed, it is taken again", async () => {
  const budget = bodyBudgetOf(h.rt);
  const big = 20_000_000;
  const upload = { path: "/api/v1/files/put", headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "content-length": String(big) } };
  // An upload that declares 20 MB and then sends nothing holds its share while it waits.
  const hangUp = new AbortController();
  const holding = rawRequest(port, { ...upload, signal: hangUp.signal }, 60_000).catch((e: Error) => e.message);
  while (budget.inFlight < big) await Bun.sleep(5);
  const refused = await rawRequest(port, upload);
  expect(refused.status).toBe(429);
  expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0);
  expect(errorShapeProblem(429, JSON.parse(refused.text))).toBeNull();
  // Small bodies still fit beside it.
  expect((await h.call("notes/add", { title: "beside", text: "ok" }, { token })).status).toBe(200);
  // The sender hangs up: its share comes back.
  hangUp.abort();
  expect(await holding).toBe("hung up");
  while (budget.inFlight > 0) await Bun.sleep(5);
  const again = await rawRequest(port, { ...upload, headers: { ...upload.headers, "content-length": "2" }, body: "{}" });
  expect(again.status).toBe(400);
});

describe("a body that trickles in", () => {
  let slow: Hearth;
  let slowToken: string;
  let slowPort: number;
  beforeAll(async () => {
    // One second, and a second more per megabyte: a byte every 100 ms never makes it.
    slow = await startHearth({ env: { HEARTH_BODY_TIMEOUT: "1", HEARTH_BODY_MIN_RATE: "1048576", HEARTH_RATE_WRITES: "0" } });
    slowToken = await slow.token("alice");
    slowPort = Number(new URL(slow.url).port);
  });
  afterAll(() => slow?.stop());

  test("is answered 408 on every reader once HEARTH_BODY_TIMEOUT has passed, its connection closed, and the instance serves on", async () => {
    const auth = { authorization: `Bearer ${slowToken}` };
    const cases: { path: string; headers: Record<string, string> }[] = [
      { path: "/api/v1/notes/add", headers: { ...auth, "content-type": "application/json", "content-length": "1000" } },
      { path: "/api/v1/notes/add", headers: { ...auth, "content-type": "application/json" } },
      { path: "/mcp", headers: { ...auth, "content-type": "application/json", accept: "application/json, text/event-stream", "content-length": "1000" } },
      { path: "/signin", headers: { "content-type": "application/x-www-form-urlencoded" } },
      { path: "/files/nope/share", headers: { ...auth, "content-length": "1000" } },
    ];
    for (const c of cases) {
      const where = `${c.path} ${c.headers["content-length"] ? "with a length" : "chunked"}`;
      // The sender goes on dripping until it is answered: only a server that bounds the time answers at all.
      const r = await rawRequest(slowPort, { path: c.path, headers: c.headers, trickle: 100 }, 120_000);
      expect(r.status, where).toBe(408);
      const body = JSON.parse(r.text);
      expect(errorShapeProblem(408, c.path === "/mcp" ? body.error.data : body), where).toBeNull();
      expect((c.path === "/mcp" ? body.error.data : body).error, where).toMatchObject({ kind: "request_timeout", retry: true });
      expect(r.headers.connection, where).toBe("close");
    }
    // Nothing is left reserved, and the instance answers as before.
    expect(bodyBudgetOf(slow.rt).inFlight).toBe(0);
    expect((await fetch(`${slow.url}/health`)).status).toBe(200);
    const add = await slow.call("notes/add", { title: "after", text: "the trickles" }, { token: slowToken });
    expect(add.status).toBe(200);
    expect((await slow.call("notes/get", { title: "after" }, { token: slowToken })).body.result).toMatchObject({ text: "the trickles" });
  });
});
