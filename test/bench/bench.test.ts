// The benchmark's own parts: the hand-written limit answers notes/get and
// notes/add as Hearth does, under the same rule for tokens, and the load
// generator's script and report are read right.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { load, parseWrk, wrkScript } from "../../bench/lib.ts";
import { startHearth } from "../harness.ts";

// wrk 4.1's report, as printed with --latency against a server that refused some requests.
const WRK_REPORT = `Running 3s test @ http://127.0.0.1:18792/api/v1/notes/get?title=bench
  1 threads and 32 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     2.71ms    1.43ms  21.40ms   88.61%
    Req/Sec    11.98k     1.09k   13.59k    70.00%
  Latency Distribution
     50%  412.00us
     75%    2.91ms
     90%    3.57ms
     99%    1.02s
  35783 requests in 3.00s, 6.51MB read
  Socket errors: connect 0, read 2, write 0, timeout 5
  Non-2xx or 3xx responses: 12
Requests/sec:  11927.41
Transfer/sec:      2.17MB
`;

describe("the load generator's report", () => {
  test("gives the rate, the median and 99th percentile in ms, and every failure", () => {
    expect(parseWrk(WRK_REPORT)).toEqual({ rps: 11927, p50: 0.41, p99: 1020, errors: 19 });
  });

  test("a report without a rate is refused, not read as zero", () => {
    expect(() => parseWrk("unable to connect to 127.0.0.1:1 Connection refused")).toThrow(/no rate/);
  });
});

const hasWrk = Bun.which("wrk") !== null;

describe("wrk's script", () => {
  test.skipIf(!hasWrk)("sends the method, the headers and each body in turn, bodies holding Lua's closing brackets intact", async () => {
    const seen: { method: string; auth: string | null; body: string }[] = [];
    const server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      async fetch(req) {
        if (seen.length < 50) seen.push({ method: req.method, auth: req.headers.get("authorization"), body: await req.text() });
        return new Response("{}");
      },
    });
    try {
      const bodies = ['{"id":1,"text":"a ]] b"}', '{"id":2,"text":"]=] and \\"quoted\\""}'];
      const row = await load("script", { url: `http://127.0.0.1:${server.port}/x`, method: "POST", headers: { authorization: "Bearer t]]" }, bodies, connections: 1, seconds: 1 });
      expect(row.rps).toBeGreaterThan(0);
      expect(row.errors).toBe(0);
      // The probe goes first; then wrk.
      const sent = seen.slice(1, 5);
      expect(sent.map((s) => s.method)).toEqual(["POST", "POST", "POST", "POST"]);
      expect(sent.map((s) => s.auth)).toEqual(Array(4).fill("Bearer t]]"));
      // In turn (wrk takes one request for itself before it starts, so which comes first varies).
      const [a, b] = sent[0].body === bodies[0] ? bodies : [bodies[1], bodies[0]];
      expect(sent.map((s) => s.body)).toEqual([a, b, a, b]);
    } finally {
      server.stop(true);
    }
  });

  test("one body is set once; several are prebuilt", () => {
    expect(wrkScript({ url: "", method: "POST", body: "{}", seconds: 1 })).toContain("wrk.body = [[{}]]");
    const many = wrkScript({ url: "", method: "POST", bodies: ["a", "b"], seconds: 1 });
    expect(many).toContain("request = function()");
    expect(many).not.toContain("wrk.body");
  });
});

describe("the hand-written limit", () => {
  const dir = mkdtempSync(join(tmpdir(), "hearth-limit-test-"));
  let limitUrl = "";
  let limitToken = "";
  let stop = () => {};
  let hearth: Awaited<ReturnType<typeof startHearth>>;

  beforeAll(async () => {
    process.env.HEARTH_LIMIT_DB = join(dir, "limit.db");
    const m = await import("../../bench/limit.ts");
    const server = Bun.serve({ port: 0, hostname: "127.0.0.1", routes: m.limitRoutes, fetch: () => new Response("", { status: 404 }) });
    limitUrl = `http://127.0.0.1:${server.port}`;
    limitToken = m.limitToken;
    stop = () => void server.stop(true);
    hearth = await startHearth();
  });
  afterAll(async () => {
    stop();
    await hearth.rt.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const limitCall = (path: string, token: string | null, body?: unknown) =>
    fetch(`${limitUrl}/api/v1/${path}`, {
      method: body ? "POST" : "GET",
      headers: token ? { authorization: `Bearer ${token}` } : {},
      body: body ? JSON.stringify(body) : undefined,
    });

  test("refuses a missing or unknown token with 401, as Hearth does", async () => {
    expect((await limitCall("notes/get?title=x", null)).status).toBe(401);
    expect((await limitCall("notes/get?title=x", "hth_not-a-token")).status).toBe(401);
    expect((await limitCall("notes/add", "hth_not-a-token", { title: "x", text: "y" })).status).toBe(401);
    expect((await hearth.call("notes/get", { title: "x" }, { token: "hth_not-a-token" })).status).toBe(401);
  });

  test("answers notes/add and notes/get with the body Hearth gives", async () => {
    const token = await hearth.token("bench");
    const note = { title: "bench", text: "a note read under load" };
    const added = await (await limitCall("notes/add", limitToken, note)).json();
    const ours = (await hearth.call("notes/add", note, { token })).body;
    expect(Object.keys(added.result)).toEqual(Object.keys(ours.result));
    expect(added.result).toMatchObject(note);

    const read = await limitCall("notes/get?title=bench", limitToken);
    expect(read.status).toBe(200);
    const got = await read.json();
    const hearthGot = (await hearth.call("notes/get", { title: "bench" }, { token })).body;
    expect(Object.keys(got.result)).toEqual(Object.keys(hearthGot.result));
    expect(got.result).toEqual(added.result);
    expect((await limitCall("notes/get?title=missing", limitToken)).status).toBe(404);
  });
});
