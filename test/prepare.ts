// Makes sure the browser the browser tests drive, the Redis server the
// shared-state tests start, the PostgreSQL server and client programs the
// PostgreSQL store and its backups are tested with, and the DAV clients the
// drive, calendars and address books are checked with (litmus, vdirsyncer,
// python3-caldav),
// are present: installs Debian's packages when they are missing and we may
// (root, with apt-get). When one cannot be installed it says why.
import { existsSync } from "node:fs";
import { pgBin } from "../core/backup/postgres.ts";

/**
 * Debian's headless shell: the same Chromium build without the full browser's UI, which the browser tests never
 * show. It renders the same pages for about a quarter less CPU (test/views: 61-64 s of renderers against 81-86 s).
 * The binary itself, not /usr/bin/chromium-headless-shell: that script runs it as a child rather than replacing
 * itself, so the browser Playwright launched would be a shell whose Chromium it could not account for.
 */
export const HEADLESS_SHELL = "/usr/lib/chromium/chromium-headless-shell";
/** The full browser, for what the shell lacks (Lighthouse measures the browser people run) and where the shell cannot be had. */
export const FULL_CHROMIUM = "/usr/bin/chromium";
/** The browser the browser tests drive: the headless shell, else the full browser when only that is installed. */
export const CHROMIUM = existsSync(HEADLESS_SHELL) || !existsSync(FULL_CHROMIUM) ? HEADLESS_SHELL : FULL_CHROMIUM;

function run(cmd: string[]): boolean {
  const p = Bun.spawnSync(cmd, { stdout: "inherit", stderr: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
  return p.exitCode === 0;
}

/** Installs Debian's package `pkg` unless `present()` already holds. */
function prepare(pkg: string, what: string, present: () => boolean): { ok: boolean; reason?: string } {
  if (present()) return { ok: true };
  if (process.getuid?.() !== 0) return { ok: false, reason: `${what} is missing and installing it needs root (apt-get install -y ${pkg})` };
  if (!Bun.which("apt-get")) return { ok: false, reason: `${what} is missing and this system has no apt-get to install it` };
  if (!run(["apt-get", "install", "-y", pkg])) {
    // A fresh machine may have no package lists yet.
    if (!run(["apt-get", "update"]) || !run(["apt-get", "install", "-y", pkg])) return { ok: false, reason: `apt-get could not install ${pkg} (no network to the Debian mirror?)` };
  }
  return present() ? { ok: true } : { ok: false, reason: `apt-get ran but ${what} is still missing` };
}

/** The headless shell; a machine that cannot install it but has the full browser runs the tests on that. */
export function prepareChromium(): { ok: boolean; path?: string; reason?: string } {
  const shell = prepare("chromium-headless-shell", HEADLESS_SHELL, () => existsSync(HEADLESS_SHELL));
  if (shell.ok) return { ok: true, path: HEADLESS_SHELL };
  if (existsSync(FULL_CHROMIUM)) return { ok: true, path: FULL_CHROMIUM };
  return shell;
}
/** The full browser, for the benchmarks that want it (bench/lighthouse.ts). */
export const prepareFullChromium = () => prepare("chromium", FULL_CHROMIUM, () => existsSync(FULL_CHROMIUM));
export const prepareRedis = () => prepare("redis-server", "redis-server", () => !!Bun.which("redis-server"));
export const LITMUS = "/usr/bin/litmus";
export const prepareLitmus = () => prepare("litmus", LITMUS, () => existsSync(LITMUS));
/** Debian's python3-caldav, a CalDAV client library, and the python3 it runs on. */
export const PYTHON = "/usr/bin/python3";
const caldavPresent = () => existsSync(PYTHON) && Bun.spawnSync([PYTHON, "-c", "import caldav"], { stdout: "ignore", stderr: "ignore" }).exitCode === 0;
export const prepareCaldav = () => prepare("python3-caldav", "python3-caldav", caldavPresent);
/** postgresql brings the server (initdb, postgres, pg_ctl) and the client programs backups use (pg_dump, pg_restore, psql). */
export const preparePostgres = () => prepare("postgresql", "PostgreSQL", () => ["initdb", "pg_ctl", "pg_dump", "pg_restore", "psql"].every((p) => pgBin(p) !== null));
/** vdirsyncer, the two-way CalDAV and CardDAV sync client. */
export const prepareVdirsyncer = () => prepare("vdirsyncer", "vdirsyncer", () => !!Bun.which("vdirsyncer"));

if (import.meta.main) {
  const r = prepareChromium();
  if (r.ok) console.log(`browser tests: using ${r.path}`);
  else console.log(`browser tests will be skipped: ${r.reason}`);
  const redis = prepareRedis();
  if (redis.ok) console.log("shared-state tests: using redis-server");
  else console.log(`shared-state tests will be skipped: ${redis.reason}`);
  const litmus = prepareLitmus();
  if (litmus.ok) console.log(`WebDAV suite: using ${LITMUS}`);
  else console.log(`the litmus WebDAV test will be skipped: ${litmus.reason}`);
  const caldav = prepareCaldav();
  if (caldav.ok) console.log("CalDAV client tests: using Debian's python3-caldav");
  else console.log(`the python3-caldav tests will be skipped: ${caldav.reason}`);
  const pg = preparePostgres();
  if (pg.ok) console.log("PostgreSQL tests: using Debian's postgresql");
  else console.log(`PostgreSQL tests cannot run: ${pg.reason}`);
  const vdir = prepareVdirsyncer();
  if (vdir.ok) console.log("sync client tests: using vdirsyncer");
  else console.log(`sync client tests will be skipped: ${vdir.reason}`);
}
