// A test harness for plugins, imported as "hearth/testing": starts a real
// instance with the plugin loaded from its folder (as HEARTH_PLUGINS would),
// its database in a temp folder, on a loopback port, and calls it over HTTP
// and MCP as any client would. Given a PostgreSQL server (`database`, or
// HEARTH_TEST_DATABASE_URL), it runs on a new database there instead. stop()
// leaves nothing behind: the temp folder is removed and the database dropped,
// as they are when the instance fails to start.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ensureAccount, issueToken } from "./auth/tokens.ts";
import { listen } from "./http/serve.ts";
import type { Clock } from "./plugin.ts";
import { createRuntime } from "./instance.ts";
import type { Runtime } from "./runtime.ts";
import { SQL } from "bun";

export interface Answer {
  status: number;
  /** The parsed JSON body: `{ result }` or `{ error }`. */
  body: any;
  headers: Headers;
}

export interface ToolAnswer {
  /** True when the tool refused (the error is in `structured.error` and the text). */
  isError: boolean;
  /** The tool's structured content: the method's `{ result }` or `{ error }`. */
  structured: any;
  text: string;
}

/**
 * A new, empty database on the PostgreSQL server at `server` (a URL whose
 * user may create databases), sorting text in byte order as the store
 * requires, and how to drop it.
 */
async function scratchDatabase(server: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `hearth_test_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
  const admin = async (text: string) => {
    const db = new SQL({ url: server, max: 1 });
    try {
      await db.unsafe(text);
    } finally {
      await db.close();
    }
  };
  await admin(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'`);
  const url = new URL(server);
  url.pathname = `/${name}`;
  return { url: url.href, drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

export async function startHearth(
  opts: {
    plugins?: string | string[];
    env?: Record<string, string>;
    clock?: Clock;
    /** A PostgreSQL server's URL: the instance runs on a new database there, dropped by stop(). Default HEARTH_TEST_DATABASE_URL; unset, SQLite in the temp folder. */
    database?: string;
  } = {},
) {
  const dir = mkdtempSync(join(tmpdir(), "hearth-plugin-test-"));
  const plugins = [opts.plugins ?? []].flat().map((p) => resolve(p));
  const server = opts.env?.HEARTH_DATABASE_URL ? undefined : opts.database || process.env.HEARTH_TEST_DATABASE_URL || undefined;
  let db: Awaited<ReturnType<typeof scratchDatabase>> | null = null;
  let rt: Runtime | null = null;
  let app: ReturnType<typeof listen>;
  const cleanup = async () => {
    await rt?.stop();
    rmSync(dir, { recursive: true, force: true });
    await db?.drop();
  };
  try {
    if (server) db = await scratchDatabase(server);
    rt = await createRuntime({
      env: { HEARTH_DATA: dir, HEARTH_LOG: "off", HEARTH_COLLECTORS: "off", HEARTH_PLUGINS: plugins.join(":"), ...(db ? { HEARTH_DATABASE_URL: db.url } : {}), ...opts.env },
      clock: opts.clock,
    });
    await rt.start();
    app = listen(rt, { port: 0, hostname: "127.0.0.1" });
  } catch (e) {
    await cleanup().catch(() => {});
    throw e;
  }
  const url = app.url;
  const auth = (token?: string): Record<string, string> => (token ? { authorization: `Bearer ${token}` } : {});

  let stopped: Promise<void> | null = null;
  return {
    rt: rt as Runtime,
    url,
    /** Where documents the instance serves on its sandbox origin (sandbox routes) are reached; null when off. */
    sandboxUrl: app.sandboxUrl,
    dir,
    /** Creates the account if needed and returns a new bearer token for it. */
    async token(username = "alice", o: { scopes?: "*" | string[]; admin?: boolean } = {}) {
      const account = await ensureAccount(rt.store, username, { admin: o.admin });
      return (await issueToken(rt.store, account, { scopes: o.scopes })).token;
    },
    /** Calls /api/v1/<service>/<method>: a read with GET and a query string, a write with POST and JSON. */
    async call(path: string, args: Record<string, unknown> = {}, o: { token?: string; method?: "GET" | "POST" } = {}): Promise<Answer> {
      const method = o.method ?? (rt.registry.methods.get(path)?.def.kind === "read" ? "GET" : "POST");
      let target = `${url}/api/v1/${path}`;
      const init: RequestInit = { method, headers: auth(o.token) };
      if (method === "GET") {
        const q = new URLSearchParams();
        for (const [k, v] of Object.entries(args))
          if (Array.isArray(v)) for (const item of v) q.append(k, String(item));
          else if (v !== undefined) q.set(k, typeof v === "object" ? JSON.stringify(v) : String(v));
        if (q.size) target += `?${q}`;
      } else init.body = JSON.stringify(args);
      if (init.body) (init.headers as Record<string, string>)["content-type"] = "application/json";
      const res = await fetch(target, init);
      const text = await res.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {}
      return { status: res.status, body, headers: res.headers };
    },
    /** Calls an MCP tool (`<service>_<method>`) over /mcp with one JSON-RPC request. */
    async mcp(tool: string, args: Record<string, unknown> = {}, o: { token?: string } = {}): Promise<ToolAnswer> {
      const res = await fetch(`${url}/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...auth(o.token) },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: tool, arguments: args } }),
      });
      const msg = (await res.json()) as { result?: { isError?: boolean; structuredContent?: unknown; content?: { text?: string }[] }; error?: { message: string } };
      if (!msg.result) throw new Error(`MCP ${tool}: ${msg.error?.message ?? `status ${res.status}`}`);
      return { isError: !!msg.result.isError, structured: msg.result.structuredContent, text: (msg.result.content ?? []).map((c) => c.text ?? "").join("") };
    },
    /** Stops the instance and removes what it made (its temp folder, its database); calling it again does nothing more. */
    stop() {
      stopped ??= (async () => {
        await app.stop();
        await cleanup();
      })();
      return stopped;
    },
  };
}

export type TestHearth = Awaited<ReturnType<typeof startHearth>>;
