import { expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
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
