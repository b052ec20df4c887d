// Requests no client should send: each gets a clear 4xx, and the server goes
// on serving everyone else as before.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect, type Socket } from "node:net";
import { MAX_REQUEST_HEAD } from "../../core/http/serve.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { errorShapeProblem } from "./instance.ts";

let h: Hearth;
let token: string;
let port: number;

beforeAll(async () => {
  h = await startHearth({ env: { HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0" } });
  token = await h.token("alice");
  port = Number(new URL(h.url).port);
});
afterAll(() => h?.stop());

const post = (path: string, body: BodyInit, headers: Record<string, string> = {}) =>
  fetch(`${h.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${token}`, ...headers }, body });

async function refusal(res: Response, status: number, field?: string) {
  const body = await res.json();
  expect(res.status).toBe(status);
  expect(errorShapeProblem(res.status, body)).toBeNull();
  if (field) expect(body.error.field).toBe(field);
  return body.error as { message: string };
}

/** The instance still answers a plain write and read correctly. */
async function stillServing() {
  const added = await h.call("notes/add", { title: `after ${crypto.randomUUID()}`, text: "ok" }, { token });
  expect(added.status).toBe(200);
  const got = await h.call("notes/get", { title: added.body.result.title }, { token });
  expect(got.status).toBe(200);
}

test("a body that is not JSON is a 400 naming the body", async () => {
  for (const body of ['{"title": "x", ', "title=x&text=y", "\u0000\u0001garbage", '{"title": "x"}}', "nul", "'single'"]) {
    const e = await refusal(await post("/api/v1/notes/add", body, { "content-type": "application/json" }), 400, "body");
    expect(e.message).toContain("JSON");
  }
  await stillServing();
});

test("a JSON body that is not an object of arguments is a 400", async () => {
  for (const body of ["[]", "[1,2]", "42", '"text"', "true", "null"]) await refusal(await post("/api/v1/notes/add", body, { "content-type": "application/json" }), 400);
  await stillServing();
});

test("wrong content types are read as what they are, not trusted: a form or multipart body is a 400", async () => {
  await refusal(await post("/api/v1/notes/add", "title=x&text=y", { "content-type": "application/x-www-form-urlencoded" }), 400, "body");
  const form = new FormData();
  form.set("title", "x");
  form.set("text", "y");
  await refusal(await post("/api/v1/notes/add", form), 400, "body");
  await refusal(await post("/api/v1/notes/add", new Uint8Array([0xff, 0xfe, 0xfd]), { "content-type": "application/octet-stream" }), 400, "body");
  await stillServing();
});

test("JSON nested a hundred thousand deep is refused, not a crash", async () => {
  const deep = `{"title": ${"[".repeat(100_000)}${"]".repeat(100_000)}, "text": "x"}`;
  const res = await post("/api/v1/notes/add", deep, { "content-type": "application/json" });
  expect(res.status).toBeGreaterThanOrEqual(400);
  expect(res.status).toBeLessThan(500);
  await stillServing();
});

test("a value nested a hundred thousand deep in an argument is a 400 naming it, over HTTP and MCP", async () => {
  const deep = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
  for (const [path, body, field] of [
    ["/api/v1/web/search", `{"query": "x", "limit": ${deep}}`, "limit"],
    ["/api/v1/apps/create", `{"name": "x", "html": "<p>x</p>", "price": ${deep}}`, "price"],
    ["/api/v1/wallet/pay", `{"tool": "notes_list", "args": {"a": ${deep}}}`, "args"],
  ]) {
    const e = await refusal(await post(path, body, { "content-type": "application/json" }), 400, field);
    expect(e.message).toContain("nested more than 100 levels");
  }
  // Nothing was made by the refused create.
  expect((await h.call("apps/read", { slug: "x" })).status).toBe(404);
  const mcp = await post("/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"apps_create","arguments":{"name":"x","html":"<p>x</p>","price":${deep}}}}`, {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  });
  const answer = (await mcp.json()) as any;
  expect(answer.result.isError).toBe(true);
  expect(answer.result.structuredContent.error).toMatchObject({ status: 400, field: "price" });
  // Deep but within bounds is data like any other.
  const fine = await h.call("wallet/pay", { tool: "notes_list", args: { a: JSON.parse(`${"[".repeat(50)}${"]".repeat(50)}`) } }, { token });
  expect(fine.status).not.toBe(500);
  expect(fine.body.error?.message ?? "").not.toContain("nested");
  await stillServing();
});

test("a NUL character in any text argument, however deep, is a 400 naming the argument on either store, and nothing is written", async () => {
  const title = await refusal(await post("/api/v1/notes/add", JSON.stringify({ title: "a\u0000b", text: "x" }), { "content-type": "application/json" }), 400, "title");
  expect(title.message).toContain("NUL character");
  await refusal(await fetch(`${h.url}/api/v1/notes/get?title=${encodeURIComponent("a\u0000")}`, { headers: { authorization: `Bearer ${token}` } }), 400, "title");
  await refusal(await post("/api/v1/wallet/pay", JSON.stringify({ tool: "notes_list", args: { deep: [{ "k\u0000": 1 }] } }), { "content-type": "application/json" }), 400, "args");
  const listed = await h.call("notes/list", {}, { token });
  expect(listed.status).toBe(200);
  expect(JSON.stringify(listed.body)).not.toContain("\\u0000");
  await stillServing();
});

test("a page's JSON form nested deep is a 400 naming the field", async () => {
  const deep = `${"[".repeat(30_000)}${"]".repeat(30_000)}`;
  const res = await fetch(`${h.url}/signin`, { method: "POST", headers: { "content-type": "application/json" }, body: `{"username": ${deep}, "password": "a long passphrase"}` });
  const e = await refusal(res, 400, "username");
  expect(e.message).toContain("nested more than 100 levels");
  await stillServing();
});

test("a body past the limit is a 413, whether declared or streamed without a length", async () => {
  const big = JSON.stringify({ title: "x", text: "y".repeat(2_000_000) });
  await refusal(await post("/api/v1/notes/add", big, { "content-type": "application/json" }), 413);
  const chunks = new ReadableStream({
    start(c) {
      for (let i = 0; i < 40; i++) c.enqueue(new TextEncoder().encode("y".repeat(64 * 1024)));
      c.close();
    },
  });
  await refusal(await post("/api/v1/notes/add", chunks, { "content-type": "application/json" }), 413);
  await stillServing();
});

test("giant headers are refused by the server with a 4xx and nothing else is disturbed", async () => {
  // Past the request-head limit, which is raised well beyond Bun's default for long query strings.
  const res = await fetch(`${h.url}/api/v1/notes/list`, { headers: { authorization: `Bearer ${token}`, "x-filler": "a".repeat(MAX_REQUEST_HEAD) } });
  expect(res.status).toBeGreaterThanOrEqual(400);
  expect(res.status).toBeLessThan(500);
  const many: Record<string, string> = { authorization: `Bearer ${token}` };
  for (let i = 0; i < 500; i++) many[`x-h-${i}`] = "v".repeat(100);
  const res2 = await fetch(`${h.url}/api/v1/notes/list`, { headers: many });
  expect(res2.status === 200 || (res2.status >= 400 && res2.status < 500)).toBe(true);
  await stillServing();
});

test("a repeated query key on a single-valued argument is a 400 naming it", async () => {
  const res = await fetch(`${h.url}/api/v1/notes/get?title=a&title=b`, { headers: { authorization: `Bearer ${token}` } });
  const e = await refusal(res, 400, "title");
  expect(e.message).toContain("2 times");
  const res2 = await fetch(`${h.url}/api/v1/blog/list?limit=1&limit=2`);
  await refusal(res2, 400, "limit");
});

test("unknown verbs, paths and methods are clear refusals", async () => {
  await refusal(await fetch(`${h.url}/api/v1/notes/add`, { method: "PUT", headers: { authorization: `Bearer ${token}` }, body: "{}" }), 405);
  await refusal(await fetch(`${h.url}/api/v1/notes/add`, { method: "DELETE" }), 405);
  await refusal(await fetch(`${h.url}/api/v1/notes/add`, { headers: { authorization: `Bearer ${token}` } }), 405);
  await refusal(await fetch(`${h.url}/api/v1/nosuch/thing`), 404);
  await refusal(await fetch(`${h.url}/api/v1/notes/nosuch`), 404);
  await refusal(await fetch(`${h.url}/api/v1/notes/list`, { headers: { authorization: "Bearer not-a-token" } }), 401);
  await refusal(await fetch(`${h.url}/api/v1/notes/list`, { headers: { authorization: "Basic Zm9vOmJhcg==" } }), 401);
});

test("bad JSON-RPC on the MCP endpoint is a 4xx, not a 500", async () => {
  for (const body of ["{", "[]", '{"jsonrpc": "2.0"}', '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"notes_add","arguments":"x"}}']) {
    const res = await fetch(`${h.url}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body,
    });
    expect(res.status, body).not.toBe(500);
    expect(res.status < 500, body).toBe(true);
    await res.arrayBuffer();
  }
  await stillServing();
});

/** Opens a raw connection and writes `head`, leaving the request unfinished. */
function openRaw(head: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(port, "127.0.0.1", () => {
      s.write(head);
      resolve(s);
    });
    s.on("error", reject);
  });
}

test("slow and abandoned bodies hold up no one else", async () => {
  // Sixteen clients each promise a body and send it a byte at a time, then stall.
  const sockets: Socket[] = [];
  for (let i = 0; i < 16; i++) {
    const s = await openRaw(
      `POST /api/v1/notes/add HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"title":`,
    );
    s.on("error", () => {});
    sockets.push(s);
  }
  for (const s of sockets) s.write('"');
  // Meanwhile writes and reads from others go through, one after another.
  for (let i = 0; i < 5; i++) await stillServing();
  // A header that never ends, too.
  const half = await openRaw(`GET /api/v1/notes/list HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: `);
  half.on("error", () => {});
  await stillServing();
  for (const s of [...sockets, half]) s.destroy();
  await stillServing();
  // No half-sent note was stored.
  const list = await h.call("notes/list", {}, { token });
  expect(list.status).toBe(200);
  expect(JSON.stringify(list.body)).not.toContain('"title":"\\"');
});
