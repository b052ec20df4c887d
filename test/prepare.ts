// Makes sure the browser the browser tests drive is present: installs
// Debian's chromium when it is missing and we may (root, with apt-get). When
// it cannot be installed it says why and leaves the browser tests to skip.
import { existsSync } from "node:fs";

export const CHROMIUM = "/usr/bin/chromium";

function run(cmd: string[]): boolean {
  const p = Bun.spawnSync(cmd, { stdout: "inherit", stderr: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
  return p.exitCode === 0;
}

export function prepareChromium(): { ok: boolean; reason?: string } {
  if (existsSync(CHROMIUM)) return { ok: true };
  if (process.getuid?.() !== 0) return { ok: false, reason: `${CHROMIUM} is missing and installing it needs root (apt-get install -y chromium)` };
  if (!Bun.which("apt-get")) return { ok: false, reason: `${CHROMIUM} is missing and this system has no apt-get to install it` };
  if (!run(["apt-get", "install", "-y", "chromium"])) {
    // A fresh machine may have no package lists yet.
    if (!run(["apt-get", "update"]) || !run(["apt-get", "install", "-y", "chromium"]))
      return { ok: false, reason: "apt-get could not install chromium (no network to the Debian mirror?)" };
  }
  return existsSync(CHROMIUM) ? { ok: true } : { ok: false, reason: `apt-get ran but ${CHROMIUM} is still missing` };
}

if (import.meta.main) {
  const r = prepareChromium();
  if (r.ok) console.log(`browser tests: using ${CHROMIUM}`);
  else console.log(`browser tests will be skipped: ${r.reason}`);
}
