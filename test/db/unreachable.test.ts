// one store: it runs on a PostgreSQL cluster of its own whichever the pass, so the PostgreSQL pass would only run it again the same
// An instance whose PostgreSQL database goes out of reach mid-run (a proxy in
// front of the loopback cluster stops listening and drops what it carried):
// every call answers 503 storage_unavailable with retry true, over HTTP and
// MCP, the log says why without a query's values (a token's hash among them),
// and once the database is back the same calls answer again.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createServer, connect, type Server, type Socket } from "node:net";
import { hashToken } from "../../core/auth/ids.ts";
import { DrizzleQueryError } from "drizzle-orm/errors";
import { makeLogger } from "../../core/log.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { errorShapeProblem } from "../hardening/instance.ts";
import { mcpClient } from "../mcp/client.ts";
import { startPg } from "../pg.ts";

/** A TCP gate to the cluster: closed, its port refuses connections and the ones it carried are cut. */
function gate(target: number) {
  const sockets = new Set<Socket>();
  let server: Server | null = null;
  let port = 0;
  return {
    get port() {
      return port;
    },
    open: () =>
      new Promise<void>((ok, fail) => {
        server = createServer((c) => {
          const up = connect(target, "127.0.0.1");
          for (const [a, b] of [[c, up], [up, c]]) {
            sockets.add(a);
            a.on("error", () => {});
            a.on("close", () => {
              sockets.delete(a);
              b.destroy();
            });
            a.pipe(b);
          }
        });
        server.once("error", fail);
        server.listen(port, "127.0.0.1", () => {
          port = (server!.address() as { port: number }).port;
          ok();
        });
      }),
    close: () =>
      new Promise<void>((ok) => {
        server!.close(() => ok());
        for (const s of sockets) s.destroy();
      }),
  };
}

const logged: string[] = [];
let h: Hearth;
let door: ReturnType<typeof gate>;
let token: string;

beforeAll(async () => {
  const pg = await startPg();
  const url = new URL(await pg.database());
  door = gate(Number(url.port));
  await door.open();
  url.port = String(door.port);
  h = await startHearth({
    env: { HEARTH_DATABASE_URL: url.toString(), HEARTH_DATABASE_POOL: "3", HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0" },
    logger: makeLogger("info", { write: (s: string) => logged.push(s) }),
  });
  token = await h.token("alice");
  expect((await h.call("notes/add", { title: "kept", text: "before" }, { token })).status).toBe(200);
});

afterAll(async () => {
  await h?.stop();
  await door?.close().catch(() => {});
});

/** The log's lines so far, once its buffer (50 ms) has been written. */
async function logLines(): Promise<string> {
  const before = logged.length;
  for (let i = 0; i < 100 && logged.length === before; i++) await Bun.sleep(20);
  return logged.join("");
}

test("with the database out of reach every call answers 503 storage_unavailable to retry, the log holds no query values, and calls answer again once it is back", async () => {
  const mcp = await mcpClient(h.url, { token });
  await door.close();
  // A token never seen before is looked up in the database: its hash is a query's value.
  const stranger = "hs_unreachable_probe_0123456789abcdef0123456789";
  const calls = [
    () => h.call("notes/get", { title: "kept" }, { token }),
    () => h.call("notes/add", { title: "new", text: "while away" }, { token }),
    () => h.call("notes/list", {}, { token: stranger }),
  ];
  for (const round of [1, 2])
    for (const call of calls) {
      const r = await call();
      expect([round, r.status, r.body?.error?.kind]).toEqual([round, 503, "storage_unavailable"]);
      expect(r.body.error.retry).toBe(true);
      expect(errorShapeProblem(503, r.body)).toBeNull();
    }
  // Over MCP the request is refused as a whole (who calls is read from the database), as a JSON-RPC error carrying the same refusal.
  const viaMcp = (await mcp.call("notes_get", { title: "kept" }).catch((e: Error & { code?: number }) => e)) as Error & { code?: number };
  expect(viaMcp).toBeInstanceOf(Error);
  expect(viaMcp.code).toBe(503);
  expect(viaMcp.message).toContain('"kind":"storage_unavailable"');
  expect(viaMcp.message).toContain('"retry":true');

  const log = await logLines();
  // The cause is in the log, the query named, its values not.
  for (const t of [token, stranger]) {
    expect(log).not.toContain(hashToken(t));
    expect(log).not.toContain(t);
  }
  expect(log).toContain('"msg":"call failed"');
  expect(log).toContain("Failed query");
  expect(log).toContain("params: (not logged)");

  await door.open();
  // Back: the pool reconnects on the next call, however long that takes here.
  let back = await h.call("notes/get", { title: "kept" }, { token });
  for (let i = 0; i < 100 && back.status !== 200; i++) {
    await Bun.sleep(100);
    back = await h.call("notes/get", { title: "kept" }, { token });
  }
  expect(back.status).toBe(200);
  expect(back.body.result).toMatchObject({ title: "kept", text: "before" });
  expect((await h.call("notes/add", { title: "new", text: "after" }, { token })).status).toBe(200);
  // Nothing of the refused write was kept.
  expect((await h.call("notes/get", { title: "new" }, { token })).body.result).toMatchObject({ text: "after" });
  await mcp.close().catch(() => {});
});

test("a failed query's values are left out of a logged error even when they hold line breaks, and its query and stack are kept", async () => {
  const e = new DrizzleQueryError('select "text" from "notes" where "owner" = ? and "text" = ?', ["owner-1", "a line\n    at looks like a frame\nsecret tail"], new Error("Failed to connect"));
  const out: string[] = [];
  const log = makeLogger("info", { write: (s: string) => out.push(s) });
  log.error("call failed", { error: String(e.stack) });
  // Lines are written a moment later, together.
  while (!out.length) await Bun.sleep(10);
  const line = JSON.parse(out.join("")).error as string;
  expect(line).toStartWith('Error: Failed query: select "text" from "notes"');
  expect(line).toContain("params: (not logged)");
  for (const v of ["owner-1", "secret tail", "looks like a frame"]) expect(line).not.toContain(v);
  expect(line).toMatch(/\n\s+at .*unreachable\.test\.ts/);
});
