// Temporary folders for a backup test file, removed when the file's tests end.
import { afterAll } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A `temp(name)` that makes a fresh folder under the system's temp folder, every one of them removed after the file's tests. */
export function temporaryFolders(): (name: string) => string {
  const made: string[] = [];
  afterAll(() => {
    for (const d of made) rmSync(d, { recursive: true, force: true });
  });
  return (name) => {
    const d = mkdtempSync(join(tmpdir(), `hearth-${name}-`));
    made.push(d);
    return d;
  };
}
