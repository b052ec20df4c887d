// A real `hearth serve` in its own process, for tests that kill it, starve it
// of disk, or restart it on the same data folder.
import { join } from "node:path";
import type { Subprocess } from "bun";
import { freePort } from "../ports.ts";

const MAIN = join(import.meta.dir, "..", "..", "core", "cli", "main.ts");

export const QUIET: Record<string, string> = {
  HEARTH_LOG: "off",
  HEARTH_COLLECTORS: "off",
  HEARTH_RATE_READS: "0",
  HEARTH_RATE_WRITES: "0",
  HEARTH_RATE_PRICED: "0",
  AI_OLLAMA_URL: "",
  HEARTH_PASSWORD_COST: "test",
};

export async function cli(args: string[], env: Record<string, string>, o: { cwd?: string } = {}) {
  const p = Bun.spawn(["bun", MAIN, ...args], { env: { ...process.env, ...QUIET, ...env }, cwd: o.cwd, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { out: out.trim(), err, code };
}

export interface Served {
  url: string;
  proc: Subprocess;
  /** SIGKILL: no shutdown handler runs, as in a power cut of the process. */
  kill9(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts `hearth serve` on a free loopback port and waits until /health answers.
 * `dataDir` null leaves HEARTH_DATA to the settings file or the default; `stdout`
 * keeps what it prints for the test to read once it has stopped.
 */
export async function serve(dataDir: string | null, env: Record<string, string> = {}, o: { cwd?: string; stdout?: boolean; prefix?: string[] } = {}): Promise<Served> {
  // A port found free can be taken by another program before the server binds it (eight test processes
  // start servers at once): a server that could not bind is started again on another.
  for (let attempt = 1; ; attempt++) {
    const started = await start(dataDir, env, o);
    if ("url" in started) return started;
    if (!/in use/i.test(started.failed) || attempt === 5) throw new Error(`hearth serve exited: ${started.failed}`);
  }
}

async function start(dataDir: string | null, env: Record<string, string>, o: { cwd?: string; stdout?: boolean; prefix?: string[] }): Promise<Served | { failed: string }> {
  const port = freePort();
  // `prefix` runs it under another program (test/backup/mounted.ts: in a namespace of its own) that execs the rest.
  const proc = Bun.spawn([...(o.prefix ?? []), "bun", MAIN, "serve"], {
    env: { ...process.env, ...QUIET, ...env, ...(dataDir === null ? {} : { HEARTH_DATA: dataDir }), PORT: String(port), HOST: "127.0.0.1" },
    cwd: o.cwd,
    stdout: o.stdout ? "pipe" : "ignore",
    stderr: "pipe",
  });
  const url = `http://127.0.0.1:${port}`;
  // Readiness, not timing: poll until it answers or the process has died, however long a busy machine takes to start
  // it (the runner's per-test limit still ends a server that never comes up).
  for (;;) {
    if (proc.exitCode !== null) return { failed: `${proc.exitCode}: ${await new Response(proc.stderr as ReadableStream).text()}` };
    const ok = await fetch(`${url}/health`).then((r) => r.ok).catch(() => false);
    if (ok) break;
    await Bun.sleep(100);
  }
  return {
    url,
    proc,
    async kill9() {
      proc.kill("SIGKILL");
      await proc.exited;
    },
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
    },
  };
}

/** Calls a method over HTTP: GET for reads is not needed here, POST works for both. */
export async function call(url: string, path: string, args: Record<string, unknown>, token: string) {
  const res = await fetch(`${url}/api/v1/${path}`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(args) });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, body };
}
