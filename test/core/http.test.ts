import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { makeLogger } from "../../core/log.ts";
import { startHearth, type Hearth } from "../harness.ts";

let h: Hearth;
let token: string;
const lines: Record<string, unknown>[] = [];
const logger = {
  info: () => {},
  warn: () => {},
  error: (msg: string, data?: Record<string, unknown>) => lines.push({ msg, ...data }),
  line: (d: Record<string, unknown>) => lines.push(d),
};

beforeAll(async () => {
  h = await startHearth({ env: { HEARTH_METER_ACCOUNTS: "all", HEARTH_PLUGINS: join(import.meta.dir, "../fixtures/plugins"), HEARTH_BODY_LIMIT: "2048" }, logger });
  token = await h.token("alice");
});
afterAll(() => h.stop());

const raw = (path: string, init?: RequestInit) => fetch(`${h.url}${path}`, init);

describe("the calling convention", () => {
  test("a read answers 200 with result and a request id", async () => {
    const r = await h.call("probe/echo", { n: 5 });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ result: { n: 5, d: 7 } });
    expect(r.headers.get("x-request-id")).toMatch(/^[\w-]{8,}$/);
  });

  test("query strings are coerced by the schema", async () => {
    const r = await raw("/api/v1/probe/echo?n=2.5&i=3&flag=false&list=a,b&list2=x".replace("&list2=x", "") + "&word=red&obj=%7B%22a%22%3A1%7D");
    expect((await r.json()).result).toEqual({ n: 2.5, i: 3, flag: false, list: ["a", "b"], word: "red", obj: { a: 1 }, d: 7 });
    const rep = await raw("/api/v1/probe/echo?list=a&list=b%2Cc");
    expect((await rep.json()).result.list).toEqual(["a", "b,c"]);
  });

  test("a read also accepts POST with a JSON body", async () => {
    const r = await h.call("probe/echo", { list: ["x"], flag: true }, { method: "POST" });
    expect(r.body.result).toEqual({ list: ["x"], flag: true, d: 7 });
  });

  test("GET on a write is 405", async () => {
    const r = await h.call("notes/add", { title: "a", text: "b" }, { token, method: "GET" });
    expect(r.status).toBe(405);
    expect(r.body.error.kind).toBe("method_not_allowed");
    expect(r.headers.get("allow")).toBe("POST");
  });

  test("unknown service or method is 404", async () => {
    const a = await raw("/api/v1/nope/list");
    expect(a.status).toBe(404);
    expect((await a.json()).error).toMatchObject({ status: 404, kind: "not_found", retry: false });
    const b = await raw("/api/v1/notes/nope", { headers: { authorization: `Bearer ${token}` } });
    expect(b.status).toBe(404);
    expect((await b.json()).error.message).toContain("add");
  });

  test("bad arguments are 400 naming the field", async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ n: "abc" }, "n", "must be a number"],
      [{ n: 101 }, "n", "at most 100"],
      [{ i: 1.5 }, "i", "whole number"],
      [{ word: "green" }, "word", '"red", "blue"'],
      [{ flag: "maybe" }, "flag", "true or false"],
      [{ bogus: 1 }, "bogus", "unknown argument"],
    ];
    for (const [args, field, msg] of cases) {
      const r = await h.call("probe/echo", args);
      expect(r.status).toBe(400);
      expect(r.body.error.field).toBe(field);
      expect(r.body.error.message).toContain(msg);
    }
    const missing = await h.call("notes/add", { title: "t" }, { token });
    expect(missing.body.error).toEqual({ status: 400, kind: "invalid_argument", message: "text is required", field: "text", retry: false });
  });

  test("a key given twice is 400", async () => {
    const r = await raw("/api/v1/probe/echo?n=1&n=2");
    expect(r.status).toBe(400);
    expect((await r.json()).error.field).toBe("n");
  });

  test("a body that is not a JSON object is 400; over the cap is 413", async () => {
    for (const body of ["[1,2]", "42", "{not json", '"str"']) {
      const r = await raw("/api/v1/probe/echo", { method: "POST", headers: { "content-type": "application/json" }, body });
      expect(r.status).toBe(400);
      expect((await r.json()).error.field).toBe("body");
    }
    const big = await raw("/api/v1/notes/add", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ title: "big", text: "x".repeat(5000) }),
    });
    expect(big.status).toBe(413);
    expect((await big.json()).error.kind).toBe("too_large");
  });

  test("other verbs are 405", async () => {
    const r = await raw("/api/v1/probe/echo", { method: "DELETE" });
    expect(r.status).toBe(405);
  });

  test("an unexpected failure is a 500 with a request id and no stack", async () => {
    const r = await raw("/api/v1/probe/crash");
    expect(r.status).toBe(500);
    const text = await r.text();
    expect(text).not.toContain("secret internal detail");
    expect(text).not.toContain("probe.ts");
    const body = JSON.parse(text);
    expect(body.error.kind).toBe("internal");
    expect(body.error.request_id).toBe(r.headers.get("x-request-id"));
  });

  test("unknown paths get the error shape", async () => {
    const r = await raw("/no/such/page");
    expect(r.status).toBe(404);
    expect((await r.json()).error.kind).toBe("not_found");
  });
});

describe("callers", () => {
  test("an account method without credentials is 401; a bad token is 401", async () => {
    expect((await h.call("notes/list")).status).toBe(401);
    const bad = await h.call("notes/list", {}, { token: "hth_nope" });
    expect(bad.status).toBe(401);
    expect(bad.body.error.kind).toBe("unauthenticated");
    const malformed = await h.call("notes/list", {}, { headers: { authorization: "Basic abc" } });
    expect(malformed.status).toBe(401);
  });

  test("a token's scope is enforced and named", async () => {
    const scoped = await h.token("alice", { scopes: ["notes"] });
    expect((await h.call("notes/list", {}, { token: scoped })).status).toBe(200);
    const r = await h.call("tasks/list", {}, { token: scoped });
    expect(r.status).toBe(403);
    expect(r.body.error.message).toContain('"tasks"');
  });

  test("a priced method refuses strangers and an account without credits, and runs for one with them", async () => {
    const r = await h.call("probe/priced");
    expect([401, 402]).toContain(r.status);
    const broke = await h.call("probe/priced", {}, { token });
    expect(broke.status).toBe(402);
    await h.grant("alice", 10);
    expect((await h.call("probe/priced", {}, { token })).status).toBe(200);
  });
});

describe("atomic writes", () => {
  test("a write that fails leaves nothing half-written, even through nested calls", async () => {
    const r = await h.call("probe/halfway", { title: "ghost" }, { token });
    expect(r.status).toBe(400);
    expect((await h.call("notes/get", { title: "ghost" }, { token })).status).toBe(404);
  });

  test("concurrent writes all land", async () => {
    await Promise.all(Array.from({ length: 40 }, (_, i) => h.call("notes/add", { title: `c${i}`, text: String(i) }, { token })));
    const list = await h.call("notes/list", {}, { token });
    expect(list.body.result.filter((n: { title: string }) => n.title.startsWith("c")).length).toBe(40);
  });
});

describe("logging", () => {
  test("one structured line per call with service, method, status, ms and caller, never the token", async () => {
    lines.length = 0;
    await h.call("notes/get", { title: "c1" }, { token });
    while (!lines.some((l) => l.service === "notes" && l.method === "get")) await Bun.sleep(5);
    const mine = lines.filter((l) => l.service === "notes" && l.method === "get");
    expect(mine.length).toBe(1);
    expect(mine[0]).toMatchObject({ status: 200 });
    expect(typeof mine[0].ms).toBe("number");
    expect(typeof mine[0].caller).toBe("string");
    expect(JSON.stringify(lines)).not.toContain(token);
  });

  test("HEARTH_LOG=info writes a line per call over HTTP and MCP, with the client's trace; above info it writes none and still writes warnings", async () => {
    const written = (level: string) => {
      const out: string[] = [];
      return { out, logger: makeLogger(level, { write: (s: string) => out.push(s) }) };
    };
    const info = written("info");
    const warn = written("warn");
    expect([info.logger.quiet, warn.logger.quiet]).toEqual([false, true]);
    for (const w of [info, warn]) {
      const one = await startHearth({ logger: w.logger });
      try {
        const t = await one.token("bob");
        const get = await fetch(`${one.url}/api/v1/notes/get?title=none`, { headers: { authorization: `Bearer ${t}`, "x-request-id": "trace-1234" } });
        expect(get.status).toBe(404);
        const mcp = await fetch(`${one.url}/mcp`, {
          method: "POST",
          headers: { authorization: `Bearer ${t}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "notes_get", arguments: { title: "none" } } }),
        });
        expect(mcp.status).toBe(200);
        await mcp.arrayBuffer();
        // A warning written after the calls arrives after their lines, if any: once it shows, every line is in.
        one.rt.log.warn("the calls are done");
        while (!w.out.join("").includes("the calls are done")) await Bun.sleep(10);
      } finally {
        await one.stop();
      }
    }
    const calls = (out: string[]) =>
      out
        .join("")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .filter((l) => l.service === "notes");
    expect(calls(info.out).map((l) => [l.method, l.status, l.via ?? "http", typeof l.ms, l.trace])).toEqual([
      ["get", 404, "http", "number", "trace-1234"],
      ["get", 404, "mcp", "number", undefined],
    ]);
    expect(calls(warn.out)).toEqual([]);
  });
});

describe("calls from pages on other origins", () => {
  test("preflights on /api/v1 and /mcp name the methods and headers, allow no credentials, and are cached", async () => {
    for (const [path, methods] of [
      ["/api/v1/notes/add", "POST"],
      ["/api/v1/prices", "GET"],
      ["/mcp", "DELETE"],
    ]) {
      const res = await fetch(`${h.url}${path}`, {
        method: "OPTIONS",
        headers: { origin: "https://elsewhere.example", "access-control-request-method": methods, "access-control-request-headers": "authorization, content-type, payment-signature" },
      });
      expect(res.status, path).toBe(204);
      expect(res.headers.get("access-control-allow-origin"), path).toBe("*");
      expect(res.headers.get("access-control-allow-methods"), path).toContain(methods);
      const allowed = res.headers.get("access-control-allow-headers")!.toLowerCase();
      for (const name of ["authorization", "content-type", "x-payment", "payment-signature", "mcp-session-id", "mcp-protocol-version"]) expect(allowed, `${path} ${name}`).toContain(name);
      expect(Number(res.headers.get("access-control-max-age"))).toBeGreaterThan(0);
      expect(res.headers.get("access-control-allow-credentials"), path).toBeNull();
    }
  });

  test("answers, refusals included, may be read by any origin, with the headers a client acts on exposed", async () => {
    for (const r of [await h.call("notes/get", { title: "c1" }, { token }), await h.call("notes/get", { title: "c1" }), await h.call("probe/get", { id: "x" })]) {
      expect(r.headers.get("access-control-allow-origin")).toBe("*");
      const exposed = r.headers.get("access-control-expose-headers")!.toLowerCase();
      for (const name of ["payment-required", "payment-response", "x-payment-response", "mcp-session-id", "www-authenticate"]) expect(exposed).toContain(name);
      expect(r.headers.get("access-control-allow-credentials")).toBeNull();
    }
  });

  test("a session cookie sent from another origin identifies no one; from this origin it does", async () => {
    const { startSession } = await import("../../core/auth/sessions.ts");
    const account = (await h.rt.tokens.identify(token, h.rt.clock.now().getTime())).account!;
    const { cookie } = await startSession(h.rt, new Request(h.url), account);
    const jar = cookie.split(";")[0];
    const read = (origin: string) => fetch(`${h.url}/api/v1/notes/get?title=c1`, { headers: { cookie: jar, origin } });
    expect((await read(h.url)).status).toBe(200);
    expect((await read("https://elsewhere.example")).status).toBe(401);
    expect((await read("null")).status).toBe(401);
  });
});
