// Openverse (api.openverse.org): openly licensed images, searched without a
// key. Anonymous callers get at most 20 results a page and a few requests a
// minute, so answers are cached for a day.
import { upstream, type Ctx, defineProvider } from "hearth";

defineProvider({
  name: "OPENVERSE",
  label: "Openverse",
  url: "https://api.openverse.org",
  attribution: "Image search by Openverse (openverse.org); each image carries its own licence and credit",
  concurrency: 1,
  rate: { count: 20, perMs: 60_000 },
});

export const MAX_LIMIT = 20;
const PATH = "/v1/images/";
const DAY = 86_400;

export const queryOf = (q: string, limit: number) => ({ q: q.trim(), page_size: limit });

export interface FoundImage {
  title: string | null;
  url: string;
  thumbnail: string | null;
  /** The page the image comes from, where its licence is stated. */
  page: string | null;
  creator: string | null;
  creator_url: string | null;
  /** Readable licence name: "CC BY 2.0", "CC0 1.0", "Public Domain Mark 1.0". */
  license: string;
  license_code: string;
  license_version: string | null;
  license_url: string | null;
  /** The credit line to show with the image, as Openverse words it. */
  attribution: string;
  width: number | null;
  height: number | null;
  source: string | null;
}

export function licenseName(code: string, version: string | null): string {
  const v = version ? ` ${version}` : "";
  if (code === "cc0") return `CC0${v}`;
  if (code === "pdm") return `Public Domain Mark${v}`;
  if (/^(by|by-sa|by-nd|by-nc|by-nc-sa|by-nc-nd|sampling\+|nc-sampling\+)$/.test(code)) return `CC ${code.toUpperCase()}${v}`;
  return `${code}${v}`;
}

const str = (v: unknown) => (typeof v === "string" && v ? v : null);
const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : null);

function shape(r: any): FoundImage | null {
  const url = str(r?.url);
  const code = str(r?.license);
  if (!url || !code) return null;
  const version = str(r.license_version);
  const license = licenseName(code, version);
  const title = str(r.title);
  const creator = str(r.creator);
  return {
    title,
    url,
    thumbnail: str(r.thumbnail),
    page: str(r.foreign_landing_url),
    creator,
    creator_url: str(r.creator_url),
    license,
    license_code: code,
    license_version: version,
    license_url: str(r.license_url),
    // Openverse always sends one; a line is made in its words when it does not.
    attribution: str(r.attribution) ?? `${title ? `"${title}"` : "This work"}${creator ? ` by ${creator}` : ""} is licensed under ${license}.`,
    width: num(r.width),
    height: num(r.height),
    source: str(r.source) ?? str(r.provider),
  };
}

function parse(body: any): { total: number; results: FoundImage[] } {
  if (!body || typeof body !== "object" || !Array.isArray(body.results)) throw upstream("upstream_failed", "Openverse sent an answer without results");
  return { total: num(body.result_count) ?? body.results.length, results: body.results.map(shape).filter((x: FoundImage | null): x is FoundImage => x !== null) };
}

export function isCached(ctx: Ctx, query: string, limit: number): boolean | Promise<boolean> {
  return ctx.http.peek("OPENVERSE", PATH, { query: queryOf(query, limit) });
}

export async function search(ctx: Ctx, query: string, limit: number) {
  const f = await ctx.http.get("OPENVERSE", PATH, { query: queryOf(query, limit), ttl: DAY, parse });
  return { query: query.trim(), total: f.data.total, results: f.data.results.slice(0, limit), about: f.about };
}
