// A throwaway PostgreSQL cluster on loopback (Debian's postgresql package),
// kept in a temp folder for the life of the test process, so the PostgreSQL
// store runs its real client and SQL offline. Each caller asks for a
// database of its own. PostgreSQL refuses to run as root: as root the
// cluster belongs to the `postgres` user and its commands run through runuser.
// The benchmark starts its cluster here too (launchPg), with durable settings.
import { appendFileSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { pgBin } from "../core/backup/postgres.ts";
import { freePort } from "./ports.ts";

export interface Pg {
  port: number;
  /** The postmaster's process id (its backends are its children). */
  pid(): number;
  /** A new database, empty or a copy of `template` (a database of this cluster no one is connected to); its URL. */
  database(template?: string): Promise<string>;
  /** Runs SQL as the cluster's superuser (on its postgres database). */
  admin(text: string): Promise<unknown>;
  /** A database of built-in tables to copy (see test/harness.ts), when the cluster was copied from a snapshot that holds one. */
  template: string | null;
  stop(): void;
}

let started: Promise<Pg> | null = null;

/**
 * A line `cpu <seconds>` for the cluster whose data folder is $DATA, if it is running: the postmaster's own CPU and
 * that of the backends it has reaped (utime, stime, cutime, cstime in /proc/<pid>/stat), and that of its children
 * still running. Fields are counted after the command's name, which ends the first `) `.
 */
const CLUSTER_CPU_SH = `pm=$(head -n 1 $DATA/postmaster.pid 2>/dev/null) && [ -n "$pm" ] && for f in /proc/[0-9]*/stat; do cat "$f" 2>/dev/null; echo; done | awk -v pm="$pm" -v hz="$(getconf CLK_TCK)" '{ pid = $1; sub(/^[^)]*\\) /, ""); if (pid == pm) t += $12 + $13 + $14 + $15; else if ($2 == pm) t += $12 + $13 } END { printf "cpu %.2f\\n", t / hz }'`;

/** The test process's cluster, started on first use and stopped when the process exits. */
export function startPg(): Promise<Pg> {
  started ??= launchPg();
  return started;
}

/**
 * A cluster of its own, stopped by stop() or when this process is gone.
 * `settings` are PostgreSQL settings (`name=value`) over the tests' own,
 * which trade durability for speed.
 */
export async function launchPg(settings: string[] = []): Promise<Pg> {
  return (await launch(settings, process.env.HEARTH_TEST_PG_SNAPSHOT || null)).pg;
}

/**
 * A stopped cluster's folder for every test process to start a copy of instead of running initdb (a second of CPU
 * each), holding the database `prepare` makes (its name, kept with it, is each copy's `template`). test/run.ts
 * makes one per run and hands it on in HEARTH_TEST_PG_SNAPSHOT; it is removed once this process is gone.
 */
export async function snapshotPg(prepare: (pg: Pg) => Promise<string>): Promise<string> {
  const { pg, dir, quit } = await launch([], null);
  const template = await prepare(pg);
  await quit();
  writeFileSync(join(dir, "template"), template);
  return dir;
}

async function launch(settings: string[], snapshot: string | null): Promise<{ pg: Pg; dir: string; quit(): Promise<void> }> {
  const initdb = pgBin("initdb");
  const pgCtl = pgBin("pg_ctl");
  if (!initdb || !pgCtl) throw new Error("PostgreSQL is not installed (apt-get install -y postgresql): initdb and pg_ctl are missing");
  const root = process.getuid?.() === 0;
  const as = (cmd: string[]) => (root ? ["runuser", "-u", "postgres", "--", ...cmd] : cmd);
  const dir = mkdtempSync(join(tmpdir(), "hearth-pg-"));
  if (root) {
    const ids = Bun.spawnSync(["id", "-u", "postgres"]).stdout.toString().trim();
    const gid = Bun.spawnSync(["id", "-g", "postgres"]).stdout.toString().trim();
    chownSync(dir, Number(ids), Number(gid));
  }
  const data = join(dir, "data");
  const stopCmd = as([pgCtl, "-D", data, "-m", "immediate", "-s", "stop"]);
  // bun test exits without running exit handlers (nor waits for a start a timeout gave up on): a watcher, started
  // before anything else, stops the cluster and removes its folder once this process is gone, however it ends.
  const quote = (a: string) => `'${a.replace(/'/g, "'\\''")}'`;
  // The cluster runs apart from this process (pg_ctl leaves it to init), so the CPU it used is not this process's:
  // with HEARTH_TEST_CLUSTER_CPU naming a file (test/run.ts sets one per piece), each cluster notes there that it
  // started and, just before it stops, the CPU seconds it used (see clusterCpu).
  const cpuFile = process.env.HEARTH_TEST_CLUSTER_CPU;
  if (cpuFile) appendFileSync(cpuFile, "started\n");
  const noteCpu = cpuFile ? `${CLUSTER_CPU_SH.replace("$DATA", quote(data))} >> ${quote(cpuFile)} 2>/dev/null; ` : "";
  // setsid -f: the watcher is in a session of its own, so nothing ending this process or its group ends it too.
  Bun.spawn(["setsid", "-f", "sh", "-c", `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; ${noteCpu}for i in 1 2 3 4 5; do ${stopCmd.map(quote).join(" ")} >/dev/null 2>&1; rm -rf ${quote(dir)}; [ -e ${quote(dir)} ] || break; sleep 1; done`], {
    stdin: "ignore",
    stdout: "ignore",
    stderr: "ignore",
  }).unref();
  const run = (cmd: string[]) => {
    const p = Bun.spawnSync(as(cmd), { stdout: "pipe", stderr: "pipe" });
    if (p.exitCode !== 0) throw new Error(`${cmd.join(" ")} failed: ${p.stderr.toString() || p.stdout.toString()}`);
  };
  // A copy of the run's snapshot is the same cluster initdb would make (and the template), for a fraction of the CPU.
  if (snapshot) run(["cp", "-a", join(snapshot, "data"), data]);
  else run([initdb, "-D", data, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8", "--locale=C"]);
  const template = snapshot && existsSync(join(snapshot, "template")) ? readFileSync(join(snapshot, "template"), "utf8").trim() : null;
  const port = await freePort();
  // Durability is not what these tests check: without fsync a suite does not wait on the disk.
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=1000`;
  run([pgCtl, "-D", data, "-o", [opts, ...settings.map((s) => `-c ${s}`)].join(" "), "-l", join(dir, "log"), "-w", "-s", "start"]);
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    if (cpuFile) Bun.spawnSync(["sh", "-c", `${CLUSTER_CPU_SH.replace("$DATA", quote(data))} >> ${quote(cpuFile)} 2>/dev/null`]);
    Bun.spawnSync(stopCmd, { stdout: "ignore", stderr: "ignore" });
    rmSync(dir, { recursive: true, force: true });
  };
  const admin = new SQL({ url: `postgres://postgres@127.0.0.1:${port}/postgres`, max: 1 });
  let n = 0;
  const pg: Pg = {
    port,
    template,
    pid: () => Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0]),
    async database(template?: string) {
      const name = `t${process.pid}_${++n}`;
      // Text sorts in byte order, as on SQLite (the store refuses a database that sorts otherwise); a copy sorts as its template.
      await admin.unsafe(template ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'`);
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    admin: (text) => admin.unsafe(text),
    stop() {
      void admin.close();
      stop();
    },
  };
  // A clean stop that keeps the folder, for a snapshot: nothing half-written for a copy to recover.
  const quit = async () => {
    await admin.close();
    stopped = true;
    run([pgCtl, "-D", data, "-m", "fast", "-w", "-s", "stop"]);
    rmSync(join(data, "postmaster.opts"), { force: true });
  };
  return { pg, dir, quit };
}

export { pgBin };
