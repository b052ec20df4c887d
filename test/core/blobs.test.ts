import { expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sqliteTable, text } from "drizzle-orm/sqlite-core";
import { holdsBlobs } from "../../core/blobs.ts";
import { startHearth } from "../harness.ts";

test("start removes half-written blob files and keeps whole ones", async () => {
  const dir = mkdtempSync(join(tmpdir(), "hearth-blobs-"));
  mkdirSync(join(dir, "blobs", "ab"), { recursive: true });
  writeFileSync(join(dir, "blobs", ".tmp-deadbeef-1"), "half");
  writeFileSync(join(dir, "blobs", "ab", "cd"), "whole");
  const h = await startHearth({ dataDir: dir });
  try {
    expect(existsSync(join(dir, "blobs", ".tmp-deadbeef-1"))).toBe(false);
    expect(existsSync(join(dir, "blobs", "ab", "cd"))).toBe(true);
  } finally {
    await h.stop();
  }
});

test("a blob goes once no row in any declared column names it; a declared table not made here names none", async () => {
  // As a plugin's schema declares it when the plugin is not installed: its table never exists.
  holdsBlobs(sqliteTable("absent_holders", { blob: text("blob") }).blob);
  const h = await startHearth({ env: { HEARTH_BLOBS: "disk", HEARTH_METERING: "off" } });
  try {
    const alice = await h.token("alice");
    const bob = await h.token("bob");
    const bytes = new Uint8Array(4096).map((_, i) => (i * 7) % 256);
    const hash = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
    const onDisk = () => existsSync(join(h.dir, "blobs", hash.slice(0, 2), hash.slice(2)));
    const content = Buffer.from(bytes).toString("base64");
    const hers = (await h.call("files/put", { name: "a.bin", content, encoding: "base64" }, { token: alice })).body.result;
    const his = (await h.call("files/put", { name: "b.bin", content, encoding: "base64" }, { token: bob })).body.result;
    expect(onDisk()).toBe(true);
    expect((await h.call("files/delete", { id: hers.id }, { token: alice })).status).toBe(200);
    expect(onDisk()).toBe(true);
    expect((await h.call("files/delete", { id: his.id }, { token: bob })).status).toBe(200);
    expect(onDisk()).toBe(false);
  } finally {
    await h.stop();
  }
});
