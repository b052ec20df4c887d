// An instance with a chosen set of plugins (the real events plugin beside
// stand-ins for services it calls), so the stand-ins never collide with the
// real ones. Everything else is as in test/harness.ts.
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureAccount, issueToken } from "../../core/auth/tokens.ts";
import { createApp } from "../../core/http/app.ts";
import type { Clock } from "../../core/plugin.ts";
import { createRuntime } from "../../core/instance.ts";
import { dbEnv } from "../harness.ts";

export const pluginPaths = {
  events: join(import.meta.dir, "../../plugins/events"),
  mail: join(import.meta.dir, "fixtures/mail"),
  agent: join(import.meta.dir, "fixtures/agent"),
};

/** A plugins folder holding links to exactly these plugin folders. */
export function pluginsDir(folders: string[], base = tmpdir()): string {
  const dir = mkdtempSync(join(base, "hearth-plugins-"));
  for (const f of folders) symlinkSync(f, join(dir, f.split("/").pop()!));
  return dir;
}

export async function startInstance(o: { plugins: string[]; clock: Clock; dataDir?: string; env?: Record<string, string> }) {
  const dir = o.dataDir ?? mkdtempSync(join(tmpdir(), "hearth-test-"));
  const plugins = pluginsDir(o.plugins);
  const rt = await createRuntime({ env: { HEARTH_DATA: dir, HEARTH_LOG: "off", ...(await dbEnv(dir)), ...o.env }, clock: o.clock, pluginsDir: plugins });
  await rt.start();
  const app = createApp(rt).listen({ port: 0, hostname: "127.0.0.1" });
  const url = `http://127.0.0.1:${app.server!.port}`;
  return {
    rt,
    url,
    async token(username: string, opts: { scopes?: "*" | string[] } = {}) {
      const account = await ensureAccount(rt.store, username);
      return (await issueToken(rt.store, account, { scopes: opts.scopes })).token;
    },
    async call(path: string, args: Record<string, unknown>, token: string) {
      const res = await fetch(`${url}/api/v1/${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(args),
      });
      return { status: res.status, body: (await res.json()) as any };
    },
    async stop() {
      await app.stop(true);
      await rt.stop();
      rmSync(plugins, { recursive: true, force: true });
      if (!o.dataDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
