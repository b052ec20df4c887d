// The data folder holds the database, its journal, blobs, keys and backups:
// nobody but the account the instance runs as may read any of it. Modes are
// given when a file or folder is made (the umask can only narrow them), and
// what an earlier version left open is closed on start.
import { chmodSync, closeSync, lstatSync, mkdirSync, openSync, readdirSync } from "node:fs";
import { join } from "node:path";

export const FILE_MODE = 0o600;
export const DIR_MODE = 0o700;

/** chmod that leaves a folder it may not change (another owner, read-only) as it is: refusing to start helps no one. */
function tighten(path: string, mode: number): boolean {
  try {
    chmodSync(path, mode);
    return true;
  } catch {
    return false;
  }
}

/** Makes a folder (and missing parents) only its owner may enter. */
export function privateDir(path: string) {
  mkdirSync(path, { recursive: true, mode: DIR_MODE });
  tighten(path, DIR_MODE);
}

/** Makes sure the file exists and only its owner may read it, before anything else (SQLite) opens it. */
export function privateFile(path: string) {
  try {
    closeSync(openSync(path, "a", FILE_MODE));
  } catch {
    // A read-only folder: whatever opens the file next says so.
  }
  tighten(path, FILE_MODE);
}

function walk(path: string, depth: number) {
  let st;
  try {
    st = lstatSync(path);
  } catch {
    return;
  }
  if (st.isSymbolicLink()) return;
  if (st.isDirectory()) {
    if ((st.mode & 0o777) !== DIR_MODE) tighten(path, DIR_MODE);
    if (depth > 0) for (const name of readdirSync(path)) walk(join(path, name), depth - 1);
  } else if (st.isFile() && (st.mode & 0o777 & ~FILE_MODE) !== 0) tighten(path, FILE_MODE);
}

/**
 * Closes the data folder to others. A folder others could enter was left by
 * an earlier version or made by hand: everything in it is tightened. One
 * already closed has only its own entries (the database and its journal) checked.
 */
export function closeDataDir(dir: string) {
  let open = false;
  try {
    open = (lstatSync(dir).mode & 0o077) !== 0;
  } catch {}
  privateDir(dir);
  walk(dir, open ? Infinity : 1);
}
