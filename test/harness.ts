// Starts a real Hearth (runtime + Elysia app on a loopback port, database in a
// temp folder) for tests that go through the whole HTTP stack.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureAccount, issueToken } from "../core/auth/tokens.ts";
import { listen } from "../core/http/serve.ts";
import { grantCredits } from "../core/pay/grant.ts";
import type { Clock, Logger } from "../core/plugin.ts";
import { createRuntime } from "../core/instance.ts";
import { sql, type SQL } from "drizzle-orm";
import { startPg, type Pg } from "./pg.ts";
import type { startS3 } from "./s3.ts";

/**
 * HEARTH_TEST_BLOBS=s3 runs every instance a suite starts with its blobs in a
 * loopback S3 server (one per test process), so any suite checks the bucket
 * store: `HEARTH_TEST_BLOBS=s3 bun test test/files test/mail`.
 */
let s3: ReturnType<typeof startS3> | null = null;
async function blobEnv(): Promise<Record<string, string>> {
  if (process.env.HEARTH_TEST_BLOBS !== "s3") return {};
  // Loaded only where it is used: the S3 server's modules were a quarter of a second of CPU in every process of the
  // SQLite pass, which never starts one.
  s3 ??= import("./s3.ts").then((m) => m.startS3());
  return (await s3).env();
}

/**
 * HEARTH_TEST_DB=pg starts every instance a suite starts on a database of its
 * own in a loopback PostgreSQL cluster (one per test process), so any suite
 * runs on the PostgreSQL store: `HEARTH_TEST_DB=pg bun test test/notes`.
 */
const databases = new Map<string, Promise<string>>();
export async function dbEnv(dataDir?: string, o: { migrated?: boolean } = {}): Promise<Record<string, string>> {
  if (process.env.HEARTH_TEST_DB !== "pg") return {};
  // One database per data folder: an instance started again on a folder (or a command run on it) finds its data.
  // An instance the harness starts gets one with the built-in tables already made (see migratedTemplate); a command
  // run on a folder no instance has used (a restore into it) meets an empty one, as on a new install.
  const make = async () => (await startPg()).database(o.migrated ? await migratedTemplate() : undefined);
  let url: Promise<string>;
  if (dataDir === undefined) url = make();
  else {
    url = databases.get(dataDir) ?? make();
    databases.set(dataDir, url);
  }
  // A small pool each: a suite may hold dozens of instances at once on one cluster.
  return { HEARTH_DATABASE_URL: await url, HEARTH_DATABASE_POOL: "3" };
}

/**
 * A database holding the built-in owners' tables and nothing else, migrated
 * once per test process, that each started instance's database is copied from: the
 * migrations cost a PostgreSQL instance several times what its start does
 * otherwise, and the copy is the same tables, so an instance's start finds
 * every owner migrated (and migrates a drop-in's on top). The migrations
 * themselves, from empty and at once, are test/db/pg.test.ts's subject, on
 * databases of their own.
 */
let template: Promise<string> | null = null;
function migratedTemplate(): Promise<string> {
  // A cluster copied from the run's snapshot (test/run.ts) holds it already.
  template ??= startPg().then((pg) => pg.template ?? makeTemplate(pg));
  return template;
}

/** Makes the database of migrated built-in tables on this cluster, no one left connected to it; its name. */
export async function makeTemplate(pg: Pg): Promise<string> {
  const url = await pg.database();
  const name = new URL(url).pathname.slice(1);
  const dir = mkdtempSync(join(tmpdir(), "hearth-template-"));
  try {
    // Opening the store migrates it; the instance is never started, so it writes nothing else.
    const rt = await createRuntime({ env: { HEARTH_DATA: dir, HEARTH_DATABASE_URL: url, HEARTH_DATABASE_POOL: "2", HEARTH_LOG: "off", HEARTH_COLLECTORS: "off" } });
    // Its listening connection too (shared state on PostgreSQL), which would otherwise keep retrying into the template.
    await rt.shared.close();
    await rt.store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  // A copy is refused while anyone is connected to its template: no one may connect again, and a connection the
  // pool left behind is ended (CREATE DATABASE waits for it to go).
  await pg.admin(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS false`);
  // pg_terminate_backend only signals, and CREATE DATABASE waits 5 s for the others to go: on a loaded machine a
  // backend can take longer, so the template is handed out only once no session is left on it.
  for (let tries = 0; ; tries++) {
    const left = (await pg.admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}'`)) as unknown[];
    if (left.length === 0) break;
    if (tries === 600) throw new Error(`${left.length} sessions still on the template database ${name} after 30 s`);
    await Bun.sleep(50);
  }
  return name;
}

/** Where an instance on this data folder keeps its data besides the folder (its database, its bucket), as the harness chooses: for a `hearth` command run on it. */
export async function storeEnv(dataDir?: string): Promise<Record<string, string>> {
  return { ...(await blobEnv()), ...(await dbEnv(dataDir)) };
}

/** SQL with `?` placeholders, bound as drizzle binds parameters, so it runs on either store. */
export function bound(text: string, params: unknown[]): SQL {
  const parts = text.split("?");
  if (parts.length !== params.length + 1) throw new Error(`${params.length} parameters for ${parts.length - 1} placeholders: ${text}`);
  return sql.join(
    parts.map((p, i) => (i < params.length ? sql`${sql.raw(p)}${params[i]}` : sql.raw(p))),
    sql``,
  );
}

/** A row as a plain object by column name, as bun:sqlite gives it (the PostgreSQL store's raw rows are arrays that also answer by name). */
export function plain(row: unknown): Record<string, unknown> {
  if (!Array.isArray(row)) return row as Record<string, unknown>;
  const names = Object.getOwnPropertyNames(row).filter((k) => k !== "length" && !/^\d+$/.test(k));
  return Object.fromEntries(names.map((k) => [k, (row as unknown as Record<string, unknown>)[k]]));
}

export interface CallResult {
  status: number;
  body: any;
  headers: Headers;
}

/** A clock tests move by hand, so time-based behaviour is tested without sleeping. */
export class TestClock implements Clock {
  constructor(public t = new Date("2026-03-01T12:00:00Z").getTime()) {}
  now() {
    return new Date(this.t);
  }
  set(iso: string | Date) {
    this.t = new Date(iso).getTime();
  }
  advance(ms: number) {
    this.t += ms;
  }
}

/** A response as the harness gives it: status, the body parsed when it is JSON (else its text), headers. */
export async function answerOf(res: Response): Promise<CallResult> {
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: res.status, body: parsed, headers: res.headers };
}

export async function startHearth(
  opts: { env?: Record<string, string>; clock?: Clock; dataDir?: string; logger?: Logger & { line(data: Record<string, unknown>): void }; environment?: ReadonlySet<string> } = {},
) {
  const dir = opts.dataDir ?? mkdtempSync(join(tmpdir(), "hearth-test-"));
  // Where the instance keeps its data: a CLI process started on the same instance needs the same.
  const stores: Record<string, string> = { HEARTH_DATA: dir, ...(await blobEnv()), ...(await dbEnv(dir, { migrated: true })) };
  for (const k of Object.keys(stores)) if (opts.env?.[k] !== undefined) stores[k] = opts.env[k];
  // Passwords hashed at the least cost argon2id allows (HEARTH_PASSWORD_COST=test): at the standard cost the suite's
  // sign-ups and sign-ins spent more CPU hashing than on anything they test.
  const rt = await createRuntime({ env: { HEARTH_LOG: "off", HEARTH_COLLECTORS: "off", HEARTH_PASSWORD_COST: "test", ...opts.env, ...stores }, clock: opts.clock, logger: opts.logger, environment: opts.environment });
  await rt.start();
  const app = listen(rt, { port: 0, hostname: "127.0.0.1" });
  const url = app.url;

  return {
    rt,
    url,
    /** Where documents someone else wrote (app pages) are served, on a port of their own; null when off. */
    sandboxUrl: app.sandboxUrl,
    dir,
    /** The settings naming where its data is (data folder, database, bucket), for a `hearth` command run on the same instance. */
    env: stores,
    /** Rows of one query on committed data, on either store: `await h.rows("SELECT id FROM accounts WHERE username = ?", "alice")`. */
    async rows<T = Record<string, any>>(text: string, ...params: unknown[]): Promise<T[]> {
      return ((await rt.store.rdb.all(bound(text, params))) as unknown[]).map(plain) as T[];
    },
    /** The first row of one query, or undefined. */
    async row<T = Record<string, any>>(text: string, ...params: unknown[]): Promise<T | undefined> {
      return ((await rt.store.rdb.all(bound(text, params))) as unknown[]).map(plain)[0] as T | undefined;
    },
    /** Runs one statement outside any call, committed on its own. */
    async exec(text: string, ...params: unknown[]): Promise<void> {
      await rt.store.write(() => rt.store.wdb.run(bound(text, params)));
    },
    /** Creates the account if needed and returns a fresh bearer token for it. */
    async token(username = "alice", o: { scopes?: "*" | string[]; admin?: boolean } = {}) {
      const account = await ensureAccount(rt.store, username, { admin: o.admin });
      return (await issueToken(rt.store, account, { scopes: o.scopes })).token;
    },
    /** Grants credits to an existing account through the ledger. */
    async grant(username: string, amount: number) {
      await rt.store.write(() => grantCredits(rt.store.wdb, { username, amount, by: "test", at: rt.clock.now().getTime() }));
    },
    /** Calls /api/v1/<path>: GET with a query string by default for no token... or POST with JSON when method is POST. */
    async call(path: string, args: Record<string, unknown> = {}, o: { token?: string; method?: "GET" | "POST"; headers?: Record<string, string> } = {}): Promise<CallResult> {
      const entry = rt.registry.methods.get(path);
      const method = o.method ?? (entry?.def.kind === "read" ? "GET" : "POST");
      const headers: Record<string, string> = { ...(o.headers ?? {}) };
      if (o.token) headers.authorization = `Bearer ${o.token}`;
      let target = `${url}/api/v1/${path}`;
      let body: string | undefined;
      if (method === "GET") {
        const q = new URLSearchParams();
        for (const [k, v] of Object.entries(args)) {
          if (Array.isArray(v)) for (const item of v) q.append(k, String(item));
          else if (v !== undefined) q.set(k, typeof v === "object" ? JSON.stringify(v) : String(v));
        }
        const qs = q.toString();
        if (qs) target += `?${qs}`;
      } else {
        headers["content-type"] = "application/json";
        body = JSON.stringify(args);
      }
      return answerOf(await fetch(target, { method, headers, body }));
    },
    async stop() {
      await app.stop();
      await rt.stop();
      if (!opts.dataDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type Hearth = Awaited<ReturnType<typeof startHearth>>;
