// A write's entry survives the process dying the moment the write was
// answered: it was committed with the write, not held for a later batch.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { call, cli, serve, type Served } from "../hardening/process.ts";
import { startHearth, storeEnv, type Hearth } from "../harness.ts";

const dir = mkdtempSync(join(tmpdir(), "hearth-audit-crash-"));
let served: Served | null = null;
let h: Hearth | null = null;
afterAll(async () => {
  await served?.kill9();
  await h?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test("killed right after answering writes, the instance kept an entry for every one of them", async () => {
  const env = { ...(await storeEnv(dir)) };
  const token = (await cli(["token", "create", "--user", "alice"], { ...env, HEARTH_DATA: dir })).out.split("\n").pop()!;
  served = await serve(dir, env);
  const answered: string[] = [];
  let settled = 0;
  // Writes in flight when the process is killed: those answered 200 must all have their entries.
  const writes = Array.from({ length: 40 }, (_, i) =>
    call(served!.url, "notes/add", { title: `crash-${i}`, text: "t" }, token).then(
      (r) => {
        if (r.status === 200) answered.push(`crash-${i}`);
      },
      () => {},
    ).finally(() => settled++),
  );
  // Killed as soon as the first answers come back, with others still under way.
  for (;;) {
    if (answered.length >= 5 || settled === writes.length) break;
    await Bun.sleep(5);
  }
  await served.kill9();
  served = null;
  await Promise.all(writes);
  expect(answered.length).toBeGreaterThanOrEqual(5);

  h = await startHearth({ dataDir: dir, env });
  const rows = await h.rows<{ args: string; outcome: string }>("SELECT args, outcome FROM audit_entries WHERE service = 'notes' AND method = 'add'");
  const logged = new Set(rows.filter((r) => r.outcome === "ok").map((r) => JSON.parse(r.args).title as string));
  for (const title of answered) expect(logged.has(title)).toBe(true);
  // And no entry claims a write the database does not have.
  const notes = new Set((await h.rows<{ title: string }>("SELECT title FROM notes")).map((n) => n.title));
  for (const title of logged) expect(notes.has(title)).toBe(true);
});
