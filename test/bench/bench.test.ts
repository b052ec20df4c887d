// one store: the benchmark's own parts, the same in either pass: its PostgreSQL limit runs on a cluster it starts itself
// The benchmark's own parts: the hand-written limit answers notes/get and
// notes/add as Hearth does, under the same rule for tokens, and the load
// generator's script and report are read right.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { cpuUs, load, parseWrk, serve, treeCpuUs, wrkScript } from "../../bench/lib.ts";
import { growth, soakScript } from "../../bench/soak.ts";
import { startHearth } from "../harness.ts";
import { launchPg, pgBin, startPg } from "../pg.ts";

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

describe("load over several servers", () => {
  test.skipIf(!hasWrk)("wrk gives each thread the next server, so every server is loaded and the report is of them all", async () => {
    const counts = [0, 0, 0];
    const servers = counts.map((_, i) =>
      Bun.serve({
        port: 0,
        hostname: "127.0.0.1",
        fetch(req) {
          counts[i]++;
          return new Response(req.headers.get("authorization") === "Bearer t" ? "{}" : "no", { status: req.headers.get("authorization") === "Bearer t" ? 200 : 401 });
        },
      }),
    );
    try {
      const hosts = servers.map((s) => `127.0.0.1:${s.port}`);
      // The URL names the first; wrk still spreads the connections over all three.
      const row = await load("three", { url: `http://${hosts[0]}/x`, headers: { authorization: "Bearer t" }, hosts, connections: 3, seconds: 1, pid: [process.pid, process.pid] });
      expect(row.errors).toBe(0);
      expect(row.rps).toBeGreaterThan(0);
      // The probe went to the first; each server answered wrk too.
      expect(counts[1]).toBeGreaterThan(0);
      expect(counts[2]).toBeGreaterThan(0);
      expect(counts[0]).toBeGreaterThan(1);
      // The rate wrk reports (over about a second) covers all three, well beyond what any one server answered.
      expect(row.rps).toBeGreaterThan(Math.max(...counts) * 1.5);
      expect(row.cpu).toBeGreaterThanOrEqual(0);
    } finally {
      for (const s of servers) s.stop(true);
    }
  });

  test("the script sets one address a thread, in turn", () => {
    const script = wrkScript({ url: "", hosts: ["127.0.0.1:1", "127.0.0.1:2"], seconds: 1 });
    expect(script).toContain('local hosts, n = {[[127.0.0.1:1]], [[127.0.0.1:2]]}, 0');
    expect(script).toContain("setup = function(thread)");
    expect(wrkScript({ url: "", seconds: 1 })).not.toContain("setup");
  });
});

describe("CPU of a process and its children", () => {
  test("counts a running child's time, which the parent's own does not hold", async () => {
    // A shell that does nothing, its child spinning.
    const parent = Bun.spawn(["sh", "-c", `${process.execPath} -e 'for(;;){}' & wait`], { stdout: "ignore", stderr: "ignore" });
    try {
      let child = 0;
      while (!child) {
        const kids = Bun.spawnSync(["pgrep", "-P", String(parent.pid)]).stdout.toString().trim();
        child = Number(kids.split("\n")[0]) || 0;
        if (!child) await Bun.sleep(20);
      }
      while (!(cpuUs(child) > 50_000)) await Bun.sleep(20);
      const spun = cpuUs(child);
      expect(cpuUs(parent.pid)).toBeLessThan(spun);
      expect(treeCpuUs(parent.pid)).toBeGreaterThanOrEqual(spun);
      process.kill(child, "SIGKILL");
    } finally {
      parent.kill(9);
      await parent.exited;
    }
  });
});

describe("starting Hearth for the benchmark", () => {
  test("says why, from what Hearth printed, when it does not start", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hearth-bench-serve-"));
    try {
      const env = { PATH: process.env.PATH, HOME: process.env.HOME, HEARTH_DATA: dir, HEARTH_LOG: "off", HEARTH_DATABASE_URL: "mysql://127.0.0.1/x" };
      const cmd = [process.execPath, join(import.meta.dir, "../../core/cli/main.ts")];
      // Waiting as long as the runner allows: a start on a loaded machine may take minutes, and this is about what is said.
      await expect(serve(cmd, env, 540_000)).rejects.toThrow(/did not start: .*HEARTH_DATABASE_URL: must be a postgres:\/\/ URL/);
      const up = await serve(cmd, { ...env, HEARTH_DATABASE_URL: "" }, 540_000);
      try {
        expect((await fetch(`http://${up.host}/health`)).status).toBe(200);
      } finally {
        up.proc.kill();
        await up.proc.exited;
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!pgBin("initdb"))("the benchmark's PostgreSQL cluster", () => {
  test("runs with the settings it is given over the tests' own, and names its postmaster, whose backends are its children", async () => {
    const pg = await launchPg(["fsync=on", "synchronous_commit=off"]);
    const sql = new SQL({ url: await pg.database(), max: 1 });
    try {
      const [fsync] = await sql`SHOW fsync`;
      const [commit] = await sql`SHOW synchronous_commit`;
      expect([fsync.fsync, commit.synchronous_commit]).toEqual(["on", "off"]);
      const [{ backend }] = await sql`SELECT pg_backend_pid() AS backend`;
      const parent = readFileSync(`/proc/${backend}/stat`, "utf8").split(") ")[1].split(" ")[1];
      expect(Number(parent)).toBe(pg.pid());
      expect(treeCpuUs(pg.pid())).toBeGreaterThan(0);
    } finally {
      await sql.close();
      pg.stop();
    }
  });
});

describe("the soak's script", () => {
  test.skipIf(!hasWrk)("walks the mix, counts what it sent by kind, and counts as bad a refusal and a tool's error, not only a status", async () => {
    const server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      async fetch(req) {
        const path = new URL(req.url).pathname;
        if (path === "/tool") return new Response(JSON.stringify({ result: { isError: true, body: await req.text() } }));
        if (path === "/refused") return new Response('{"error":"no"}', { status: 403 });
        return new Response('{"result":1}');
      },
    });
    const file = join(tmpdir(), `hearth-soak-test-${process.pid}.lua`);
    try {
      const script = soakScript([
        { kind: 1, method: "GET", path: "/ok", headers: { authorization: "Bearer t]]" } },
        { kind: 1, method: "GET", path: "/ok", headers: {} },
        { kind: 2, method: "POST", path: "/tool", headers: { "content-type": "application/json" }, body: '{"a":"]]"}' },
        { kind: 3, method: "GET", path: "/refused", headers: {} },
      ]);
      await Bun.write(file, script);
      const p = Bun.spawn(["wrk", "-t", "1", "-c", "1", "-d", "1s", "-s", file, `http://127.0.0.1:${server.port}`], { stdout: "pipe", stderr: "pipe" });
      const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
      expect(err).toBe("");
      const [bad, ...counts] = /SOAK-COUNTS (.*)/.exec(out)![1].split(" ").map(Number);
      expect(counts).toHaveLength(3);
      // Sent in turn: twice as many of the first kind as of each other.
      expect(Math.abs(counts[0] - 2 * counts[1])).toBeLessThanOrEqual(2);
      expect(Math.abs(counts[1] - counts[2])).toBeLessThanOrEqual(1);
      // Every answer of kinds 2 and 3 is bad (one request may be in flight at the end).
      expect(Math.abs(bad - (counts[1] + counts[2]))).toBeLessThanOrEqual(1);
      expect(out).toContain('SOAK-ERR 200 {"result":{"isError":true,"body":"{\\"a\\":\\"]]\\"}"}}');
      expect(out).toContain('SOAK-ERR 403 {"error":"no"}');
      expect(out).toMatch(/SOAK-TAIL \d+ \d+/);
    } finally {
      server.stop(true);
      rmSync(file, { force: true });
    }
  });

  test("RSS growth compares the settled level late in the run with the level early after warm-up, not one sample", () => {
    const flat = Array.from({ length: 60 }, (_, s) => ({ s, mb: 100 + (s % 7 === 0 ? 30 : 0) }));
    // A collector's peak at the end moves one sample, not the level.
    expect(growth([...flat.slice(0, 59), { s: 59, mb: 140 }])).toBe(0);
    // A leak that raises the level by a fifth over the run is seen.
    const leak = Array.from({ length: 60 }, (_, s) => ({ s, mb: 100 + (s > 10 ? (s - 10) * 0.5 : 0) }));
    expect(growth(leak)).toBeGreaterThan(15);
    // Too short a run to tell is not read as flat.
    expect(growth(flat.slice(0, 12))).toBeNaN();
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

describe.skipIf(!pgBin("initdb"))("the hand-written limit on PostgreSQL", () => {
  let proc: Bun.Subprocess<"ignore", "pipe", "inherit"> | undefined;
  let base = "";
  let token = "";
  let db: SQL;

  beforeAll(async () => {
    const url = await (await startPg()).database();
    db = new SQL({ url, max: 1 });
    proc = Bun.spawn([process.execPath, join(import.meta.dir, "../../bench/pglimit.ts")], { env: { ...process.env, PORT: "0", HEARTH_LIMIT_DATABASE_URL: url }, stdout: "pipe", stderr: "inherit" });
    // It prints its port, then its token.
    const reader = proc.stdout.getReader();
    let text = "";
    while (text.split("\n").length < 3) {
      const { done, value } = await reader.read();
      if (done) throw new Error(`the limit ended after printing: ${text}`);
      text += new TextDecoder().decode(value);
    }
    const [port, printed] = text.split("\n");
    base = `http://127.0.0.1:${port}`;
    token = printed;
  });
  afterAll(async () => {
    proc?.kill();
    await proc?.exited;
    await db?.close();
  });

  const call = (path: string, bearer: string | null, body?: unknown) =>
    fetch(`${base}/api/v1/${path}`, { method: body ? "POST" : "GET", headers: bearer ? { authorization: `Bearer ${bearer}` } : {}, body: body ? JSON.stringify(body) : undefined });

  test("answers notes/add and notes/get with the body the SQLite limit gives, and 404 for a note that is not there", async () => {
    const note = { title: "bench", text: "a note read under load" };
    const added = await call("notes/add", token, note);
    expect(added.status).toBe(200);
    const { result } = (await added.json()) as { result: Record<string, unknown> };
    expect(Object.keys(result)).toEqual(["title", "text", "created", "updated"]);
    expect(result).toMatchObject({ ...note, created: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
    const again = (await (await call("notes/add", token, { ...note, text: "rewritten" })).json()) as { result: Record<string, unknown> };
    expect([again.result.text, again.result.created]).toEqual(["rewritten", result.created]);
    const read = await call("notes/get?title=bench", token);
    expect(read.status).toBe(200);
    expect(((await read.json()) as { result: unknown }).result).toEqual(again.result);
    expect((await call("notes/get?title=missing", token)).status).toBe(404);
  });

  test("checks the token on every call: missing, unknown, revoked or expired is 401, and nothing is written", async () => {
    expect((await call("notes/get?title=bench", null)).status).toBe(401);
    expect((await call("notes/get?title=bench", "hth_not-a-token")).status).toBe(401);
    expect((await call("notes/add", "hth_not-a-token", { title: "stranger", text: "x" })).status).toBe(401);
    await db`UPDATE tokens SET expires = ${Date.now() - 1000}`;
    expect((await call("notes/get?title=bench", token)).status).toBe(401);
    expect((await call("notes/add", token, { title: "expired", text: "x" })).status).toBe(401);
    await db`UPDATE tokens SET expires = NULL, revoked = ${Date.now()}`;
    expect((await call("notes/get?title=bench", token)).status).toBe(401);
    expect((await call("notes/add", token, { title: "revoked", text: "x" })).status).toBe(401);
    expect((await db`SELECT title FROM notes ORDER BY title`).map((r: { title: string }) => r.title)).toEqual(["bench"]);
  });
});

describe("the floor's POST", () => {
  test("reads a JSON-RPC body and answers a tools/call-sized result with the request's id, GET still answers the small object, and the POST and tools/call pair answers as Hearth's does", async () => {
    const { freePort, waitFor200 } = await import("../../bench/lib.ts");
    const port = freePort();
    const floor = Bun.spawn([process.execPath, join(import.meta.dir, "../../bench/floor.ts")], { env: { ...process.env, PORT: String(port) }, stdout: "ignore" });
    try {
      await waitFor200(`http://127.0.0.1:${port}/`);
      const get = (await (await fetch(`http://127.0.0.1:${port}/`)).json()) as { result: { title: string } };
      expect(get.result.title).toBe("floor");
      const body = JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "notes_get", arguments: { title: "bench" } } });
      const post = (await (await fetch(`http://127.0.0.1:${port}/`, { method: "POST", headers: { "content-type": "application/json" }, body })).json()) as {
        id: number;
        result: { content: { text: string }[]; structuredContent: unknown };
      };
      expect(post.id).toBe(7);
      expect(JSON.parse(post.result.content[0].text)).toEqual(post.result.structuredContent);

      // The pair held beside Hearth's: POST notes/get's body and headers, and tools/call's in either era.
      const auth = { authorization: "Bearer floor", "content-type": "application/json" };
      const api = await fetch(`http://127.0.0.1:${port}/api/v1/notes/get`, { method: "POST", headers: auth, body: JSON.stringify({ title: "bench" }) });
      expect(api.headers.get("content-type")).toBe("application/json; charset=utf-8");
      expect(api.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
      expect(((await api.json()) as { result: { title: string } }).result.title).toBe("bench");
      const mcp = (headers: Record<string, string>, meta?: object) =>
        fetch(`http://127.0.0.1:${port}/mcp`, {
          method: "POST",
          headers: { ...auth, accept: "application/json, text/event-stream", ...headers },
          body: JSON.stringify({ jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "notes_get", arguments: { title: "bench" }, ...(meta ? { _meta: meta } : {}) } }),
        });
      const inSession = await mcp({ "mcp-protocol-version": "2025-06-18", "mcp-session-id": "s1" });
      expect(inSession.headers.get("mcp-session-id")).toBe("s1");
      const answer = (await inSession.json()) as { id: number; result: { content: { text: string }[]; structuredContent: { result: { title: string } } } };
      expect(answer.id).toBe(8);
      expect(answer.result.structuredContent.result.title).toBe("bench");
      expect(JSON.parse(answer.result.content[0].text)).toEqual(answer.result.structuredContent);
      const modern = await mcp({ "mcp-protocol-version": "2026-07-28" }, { "io.modelcontextprotocol/protocolVersion": "2026-07-28" });
      expect(modern.headers.get("mcp-session-id")).toBeNull();
      expect(((await modern.json()) as { result: { resultType: string } }).result.resultType).toBe("complete");
    } finally {
      floor.kill();
      await floor.exited;
    }
  });
});
