// one store: the listener's pause and swap, and the page it shows meanwhile; the restore between them runs on both stores in test/backup/restore-now.test.ts
// While a restore runs, the listener keeps its port and answers every new
// request with a 503 and Retry-After: JSON saying so for programs, a page
// that follows the progress for a browser (axe finds nothing on it, light
// and dark, at 1280 and 390 px). Resumed with a new runtime on the same data,
// the same port answers from it, and the old runtime's store is closed.
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { unavailable } from "../../core/backup/inplace.ts";
import { listen } from "../../core/http/serve.ts";
import { createRuntime } from "../../core/instance.ts";
import { ensureAccount, issueToken } from "../../core/auth/tokens.ts";
import { chromiumPresent, everyLook, launchChromium } from "../browser.ts";

const SHOTS = join(import.meta.dir, "..", "artifacts", "admin");
const data = mkdtempSync(join(tmpdir(), "hearth-paused-"));
afterAll(() => rmSync(data, { recursive: true, force: true }));

const open = async () => {
  const rt = await createRuntime({ env: { HEARTH_DATA: data, HEARTH_LOG: "off", HEARTH_COLLECTORS: "off", HEARTH_METERING: "off", AI_OLLAMA_URL: "" } });
  await rt.start();
  return rt;
};

test.skipIf(!chromiumPresent)("paused, every request is told to come back and a browser sees the progress; resumed, the new runtime answers on the same port", async () => {
  const first = await open();
  const account = await ensureAccount(first.store, "alice", { admin: true });
  const { token } = await issueToken(first.store, account, {});
  const l = listen(first, { port: 0, hostname: "127.0.0.1" });
  let serving = first;
  const auth = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  try {
    expect((await fetch(`${l.url}/api/v1/notes/add`, { method: "POST", headers: auth, body: JSON.stringify({ title: "one", text: "before" }) })).status).toBe(200);
    expect(await l.pause((req) => unavailable(req, "hearth-20260301T030000Z.tar.age", 2), 60_000)).toEqual({ unfinished: 0 });

    const api = await fetch(`${l.url}/api/v1/notes/get?title=one`, { headers: auth });
    expect(api.status).toBe(503);
    expect(api.headers.get("retry-after")).toBe("5");
    expect(((await api.json()) as any).error).toMatchObject({ kind: "storage_unavailable", retry: true });
    const health = await fetch(`${l.url}/health`);
    expect(health.status).toBe(503);
    const shown = await fetch(`${l.url}/settings/restore`, { headers: { accept: "text/html" } });
    expect(shown.status).toBe(503);
    const text = await shown.text();
    expect(text).toContain('<li aria-current="step"><strong>Restoring the backup…</strong></li>');
    // It asks again by itself, landing on /settings/restore once the instance is back.
    expect(text).toContain('<meta http-equiv="refresh" content="2; url=/settings/restore">');

    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ bypassCSP: true });
      // The page asks again every two seconds; these looks are of one answer, held still.
      await page.route("**/settings/restore", async (route) => {
        const res = await route.fetch();
        await route.fulfill({ response: res, body: (await res.text()).replace(/<meta http-equiv="refresh"[^>]*>/, "") });
      });
      mkdirSync(SHOTS, { recursive: true });
      const found = await everyLook(page, l.url, [{ name: "restore-progress", path: "/settings/restore", ready: (p) => p.getByRole("heading", { name: "Restoring a backup" }).waitFor() }], { shots: SHOTS });
      expect(found).toEqual({});
    } finally {
      await browser.close();
    }

    await first.stop();
    const next = await open();
    serving = next;
    l.resume(next);
    const back = await fetch(`${l.url}/api/v1/notes/get?title=one`, { headers: auth });
    expect(back.status).toBe(200);
    expect((((await back.json()) as any).result as { text: string }).text).toBe("before");
    // The old runtime let its database go: nothing of it answers any more.
    expect(() => first.store.writer.query("SELECT 1").get()).toThrow();
  } finally {
    await l.stop();
    await serving.stop();
  }
});
