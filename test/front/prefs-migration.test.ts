// A home page's choices kept before cards came from plugins' manifests (the
// prayer columns) are carried into the per-card choices when the instance
// starts on the old database, so nobody loses the card they turned on.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyMigrations, readMigrations } from "../../core/db/migrate.ts";
import { prefsOf } from "../../core/http/pages/home/prefs.ts";
import { createRuntime } from "../../core/instance.ts";

const dir = mkdtempSync(join(tmpdir(), "hearth-prefs-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("the prayer columns become the prayer card's choices, and are dropped", async () => {
  const rt = await createRuntime({ env: { HEARTH_DATA: dir, HEARTH_LOG: "off" } });
  try {
    // The home table as its first migration made it, with choices in it.
    const all = readMigrations(join(import.meta.dir, "../../core/http/pages/home/migrations"))!;
    const first = all.journal.entries[0];
    applyMigrations(rt.store.writer, "home", { journal: { entries: [first] }, sql: { [first.tag]: all.sql[first.tag] } });
    const insert = rt.store.writer.prepare("INSERT INTO home_prefs (account, place, lat, lon, prayer, prayer_method, updated) VALUES (?, ?, ?, ?, ?, ?, 1)");
    insert.run("on-mwl", "Luxor", 25.7, 32.6, 1, "mwl");
    insert.run("on-usual", null, null, null, 1, null);
    insert.run("off-chose", null, null, null, 0, "isna");
    insert.run("nothing", "Oslo", 59.9, 10.7, 0, null);

    rt.migrate();
    expect(await prefsOf(rt, "on-mwl")).toEqual({ place: "Luxor", lat: 25.7, lon: 32.6, cards: { prayer: { on: true, choice: "mwl" } } });
    expect((await prefsOf(rt, "on-usual")).cards).toEqual({ prayer: { on: true, choice: null } });
    expect((await prefsOf(rt, "off-chose")).cards).toEqual({ prayer: { on: false, choice: "isna" } });
    expect(await prefsOf(rt, "nothing")).toEqual({ place: "Oslo", lat: 59.9, lon: 10.7, cards: {} });
    const columns = rt.store.reader.query<{ name: string }, []>("SELECT name FROM pragma_table_info('home_prefs')").all().map((c) => c.name);
    expect(columns).toEqual(["account", "place", "lat", "lon", "updated", "cards"]);
  } finally {
    await rt.stop();
  }
});
