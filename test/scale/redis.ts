// A redis-server on a loopback port for the shared-state tests (Debian's
// redis-server package, which test/prepare.ts installs when it is missing):
// nothing saved to disk, stopped and started again on the same port to see
// what instances do while it is away.
import { connect } from "node:net";
import { freePort } from "../ports.ts";

export const REDIS_SERVER = Bun.which("redis-server");

async function accepting(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const c = connect({ host: "127.0.0.1", port }, () => {
      c.destroy();
      resolve(true);
    });
    c.on("error", () => resolve(false));
  });
}

export async function startRedis() {
  if (!REDIS_SERVER) throw new Error("redis-server is missing: run bun test/prepare.ts (apt-get install -y redis-server)");
  const port = await freePort();
  let proc: ReturnType<typeof Bun.spawn> | null = null;
  const up = async () => {
    proc = Bun.spawn([REDIS_SERVER, "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdout: "ignore", stderr: "ignore" });
    // However long a busy machine takes to start it; one that exits instead is told at once.
    while (!(await accepting(port))) {
      if (proc.exitCode !== null) throw new Error(`redis-server exited with ${proc.exitCode} before it listened on port ${port}`);
      await Bun.sleep(20);
    }
  };
  await up();
  return {
    url: `redis://127.0.0.1:${port}`,
    /** Stops the server (its data goes with it). */
    async stop() {
      proc?.kill(9);
      await proc?.exited;
      proc = null;
    },
    /** Starts it again on the same port, empty. */
    start: up,
    /** Freezes it (SIGSTOP): connections stay open and nothing answers. */
    pause: () => proc?.kill("SIGSTOP"),
    resume: () => proc?.kill("SIGCONT"),
  };
}

export type Redis = Awaited<ReturnType<typeof startRedis>>;

/** A logger that says nothing, for shared state made by hand in tests. */
export const quiet = { warn() {}, info() {} };

/**
 * Polls until check holds, however long a busy machine takes to get there: a
 * deadline here would fail a test that is only slow. A check that never holds
 * is ended by the runner's per-test limit. Returns true once it held.
 */
export async function until(check: () => Promise<boolean> | boolean): Promise<boolean> {
  for (;;) {
    if (await check()) return true;
    await Bun.sleep(20);
  }
}
