// Each screen's first load, as a browser with an empty cache fetches it: the
// shell page and the scripts it names, gzipped as they travel (the page as a
// proxy would compress it; the bundles are served gzipped). Target: under
// 150 KB each. `bun bench/views.ts` alone, or within `bun run bench`.
import { gzipSync } from "node:zlib";
import { screensOf } from "../core/views/screens.ts";
import { signUp } from "../test/auth/people.ts";
import { startHearth } from "../test/harness.ts";

export interface ViewLoad {
  screen: string;
  path: string;
  page_gzip_bytes: number;
  scripts_gzip_bytes: number;
  total_kb: number;
}

export async function benchViews(): Promise<ViewLoad[]> {
  const h = await startHearth({ env: { HEARTH_SIGNUP: "open", HEARTH_METERING: "off" } });
  try {
    const who = await signUp(h, "bench");
    const out: ViewLoad[] = [];
    for (const s of screensOf(h.rt).filter((s) => s.file)) {
      const page = await fetch(h.url + s.href, { headers: { cookie: who.cookie } });
      const text = await page.text();
      const pageBytes = gzipSync(text).byteLength;
      let scripts = 0;
      for (const m of text.matchAll(/(?:src|href)="(\/my\/assets\/[^"]+\.js)"/g)) {
        const js = await fetch(h.url + m[1], { headers: { "accept-encoding": "gzip" }, decompress: false } as RequestInit);
        scripts += (await js.arrayBuffer()).byteLength;
      }
      out.push({ screen: s.title, path: s.href, page_gzip_bytes: pageBytes, scripts_gzip_bytes: scripts, total_kb: Math.round(((pageBytes + scripts) / 1024) * 10) / 10 });
    }
    return out;
  } finally {
    await h.stop();
  }
}

export function viewsTable(rows: ViewLoad[]): string {
  const lines = rows.map((r) => `${r.screen.padEnd(14)} ${r.path.padEnd(16)} page ${String(r.page_gzip_bytes).padStart(6)} B  scripts ${String(r.scripts_gzip_bytes).padStart(6)} B  total ${String(r.total_kb).padStart(6)} KB ${r.total_kb < 150 ? "(< 150 KB)" : "(OVER 150 KB)"}`);
  return lines.join("\n");
}

if (import.meta.main) console.log(viewsTable(await benchViews()));
