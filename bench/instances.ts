// Three instances against one: three `hearth serve` processes on one data
// folder (and one database), sharing state through a redis-server, as
// test/scale/instances.test.ts runs them. wrk loads them straight, a thread
// per instance (no proxy, which on two cores would take the CPU it measures),
// and its report is of all three at once. On a machine with two cores the
// rows cannot show scale-out: they show what running several costs per
// request, and that they answer together under load without errors.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { installed, interleaved, loadGenerator, serve, type LoadOptions, type Row, type Served } from "./lib.ts";

export interface InstancesResult {
  rows: Row[];
  /** Each store that could not run, with the reason. */
  skipped: string[];
}

export interface InstancesOptions {
  /** The command that starts Hearth (dist/hearth, or bun core/cli/main.ts). */
  cmd: string[];
  seconds: number;
  rounds: number;
  /** A new PostgreSQL database's URL, to run the instances on it too; or why there is none. */
  postgres?: (() => Promise<string>) | string;
  /** PostgreSQL's postmaster, for its CPU per request. */
  postgresPid?: () => number;
}

interface Group {
  label: string;
  instances: Served[];
  token: string;
  dbPid?: () => number;
}

export async function benchInstances(opts: InstancesOptions): Promise<InstancesResult> {
  const skipped: string[] = [];
  if (loadGenerator() !== "wrk") return { rows: [], skipped: ["skipped: loading several instances at once needs wrk"] };
  if (!installed("redis-server", () => Bun.which("redis-server") !== null)) return { rows: [], skipped: ["skipped: redis-server is not installed (apt-get install -y redis-server)"] };
  const { startRedis } = await import("../test/scale/redis.ts");
  const cleanup: (() => Promise<unknown> | void)[] = [];
  try {
    const groups: Group[] = [];
    const start = async (label: string, database?: string, dbPid?: () => number) => {
      // On one data folder the instances share their state through Redis; on PostgreSQL, through the database itself.
      const redis = database ? null : await startRedis();
      if (redis) cleanup.push(() => redis.stop());
      const dir = mkdtempSync(join(tmpdir(), "hearth-bench-instances-"));
      cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
      const env = {
        ...process.env,
        HEARTH_DATA: dir,
        HEARTH_LOG: "off",
        HEARTH_COLLECTORS: "off",
        HEARTH_METERING: "off",
        HEARTH_RATE_READS: "0",
        HEARTH_RATE_WRITES: "0",
        HEARTH_RATE_PRICED: "0",
        ...(redis ? { HEARTH_REDIS_URL: redis.url } : {}),
        ...(database ? { HEARTH_DATABASE_URL: database } : {}),
      };
      // The account and its token are made before the instances start on the same data.
      const made = Bun.spawnSync([...opts.cmd, "token", "create", "--user", "bench"], { env, stdout: "pipe", stderr: "pipe" });
      if (made.exitCode !== 0) throw new Error(`token create failed: ${made.stderr.toString().trim().split("\n").pop()}`);
      const token = made.stdout.toString().trim();
      const instances: Served[] = [];
      cleanup.push(async () => {
        for (const i of instances) i.proc.kill();
        await Promise.all(instances.map((i) => i.proc.exited));
      });
      for (let n = 0; n < 3; n++) instances.push(await serve(opts.cmd, env));
      const note = await fetch(`${instances[0].base}/api/v1/notes/add`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ title: "bench", text: "a note read under load" }),
      });
      if (note.status !== 200) throw new Error(`notes/add answered ${note.status}: ${(await note.text()).slice(0, 200)}`);
      groups.push({ label, instances, token, dbPid });
    };
    await start("SQLite");
    if (typeof opts.postgres === "string") skipped.push(`PostgreSQL skipped: ${opts.postgres}`);
    else if (opts.postgres) {
      try {
        await start("PostgreSQL", await opts.postgres(), opts.postgresPid);
      } catch (e) {
        skipped.push(`PostgreSQL skipped: ${(e as Error).message}`);
      }
    }

    const each = Math.max(1, Math.round(opts.seconds / opts.rounds));
    const written = JSON.stringify({ title: "bench-write", text: "written under load" });
    const scenarios: [string, LoadOptions][] = [];
    for (const g of groups) {
      const headers = { authorization: `Bearer ${g.token}` };
      const one = { pid: g.instances[0].proc.pid, dbPid: g.dbPid };
      const three = { pid: g.instances.map((i) => i.proc.pid), hosts: g.instances.map((i) => i.host), dbPid: g.dbPid };
      const get = { url: `${g.instances[0].base}/api/v1/notes/get?title=bench`, headers, seconds: each };
      const add = { url: `${g.instances[0].base}/api/v1/notes/add`, method: "POST" as const, headers: { ...headers, "content-type": "application/json" }, body: written, seconds: each };
      scenarios.push(
        [`notes/get, 1 instance (${g.label})`, { ...get, ...one }],
        [`notes/get, 3 instances (${g.label})`, { ...get, ...three }],
        [`notes/add, 1 instance (${g.label})`, { ...add, ...one }],
        [`notes/add, 3 instances (${g.label})`, { ...add, ...three }],
      );
    }
    return { rows: await interleaved(scenarios, opts.rounds), skipped };
  } finally {
    for (const c of cleanup.reverse()) await c();
  }
}
