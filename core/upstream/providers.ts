// Providers the instance may reach, each with the policy it asks of its
// users. Names are UPPER_SNAKE: `<NAME>_URL` in the configuration replaces the
// base URL (tests point these at loopback fixture servers), `<NAME>_TIMEOUT_MS`
// the timeout. A plugin needing one not listed here calls defineProvider at
// module load; defining the same name twice keeps the first definition, so
// limits stay instance-wide when two services share a provider.

export interface RateCap {
  /** At most `count` requests start within any window of `perMs` milliseconds. */
  count: number;
  perMs: number;
}

export interface ProviderDef {
  /** UPPER_SNAKE name, the prefix of its settings. */
  name: string;
  /** Who the data comes from, as answers name it. */
  label: string;
  /** Base URL without a trailing slash; paths are appended to it. */
  url: string;
  /** Terms the provider asks to be credited under, shown with the answer. */
  attribution?: string;
  /** Requests in flight at once (default 4). */
  concurrency?: number;
  rate?: RateCap;
  /** Stricter caps for paths starting with a prefix (a search endpoint with its own quota). */
  lanes?: Record<string, RateCap>;
  timeoutMs?: number;
  /** Largest body read (default 20 MB). */
  maxBytes?: number;
  /** Headers every request to this provider carries (API version, Accept). */
  headers?: Record<string, string>;
  /** Settings it needs besides <NAME>_URL, <NAME>_TIMEOUT_MS and <NAME>_RATE (a key): they reach the ctx.config of plugins that declare this provider. */
  settings?: string[];
}

/** The settings a plugin declaring this provider may read. */
export const providerSettings = (p: ProviderDef): string[] => [`${p.name}_URL`, `${p.name}_TIMEOUT_MS`, `${p.name}_RATE`, ...(p.settings ?? [])];

const providers = new Map<string, ProviderDef>();

export function defineProvider(def: ProviderDef): ProviderDef {
  if (!/^[A-Z][A-Z0-9_]*$/.test(def.name)) throw new Error(`provider name "${def.name}" must be UPPER_SNAKE_CASE`);
  const existing = providers.get(def.name);
  if (existing) return existing;
  providers.set(def.name, def);
  return def;
}

export function hasProvider(name: string): boolean {
  return providers.has(name);
}

export function providerNamed(name: string): ProviderDef {
  const p = providers.get(name);
  if (!p) throw new Error(`unknown upstream provider "${name}": define it with defineProvider`);
  return p;
}

export function allProviders(): ProviderDef[] {
  return [...providers.values()];
}

const perSecond = (n: number): RateCap => ({ count: n, perMs: 1000 });
const perMinute = (n: number): RateCap => ({ count: n, perMs: 60_000 });
const openMeteo = { label: "Open-Meteo", attribution: "Weather data by Open-Meteo.com (CC BY 4.0)", concurrency: 4, rate: perMinute(500) };

// Open-Meteo serves each dataset from its own host.
defineProvider({ name: "OPEN_METEO", url: "https://api.open-meteo.com", ...openMeteo });
defineProvider({ name: "OPEN_METEO_AIR", url: "https://air-quality-api.open-meteo.com", ...openMeteo });
defineProvider({ name: "OPEN_METEO_MARINE", url: "https://marine-api.open-meteo.com", ...openMeteo });
defineProvider({ name: "OPEN_METEO_ARCHIVE", url: "https://archive-api.open-meteo.com", ...openMeteo });
defineProvider({ name: "OPEN_METEO_GEOCODING", url: "https://geocoding-api.open-meteo.com", ...openMeteo });
defineProvider({ name: "USGS", label: "USGS Earthquake Hazards Program", url: "https://earthquake.usgs.gov", concurrency: 2, rate: perSecond(2) });
defineProvider({
  name: "GDACS",
  label: "GDACS (Global Disaster Alert and Coordination System)",
  url: "https://www.gdacs.org",
  concurrency: 2,
  rate: perSecond(1),
});
defineProvider({
  name: "EA_FLOODS",
  label: "Environment Agency flood-monitoring",
  url: "https://environment.data.gov.uk",
  attribution: "This uses Environment Agency flood and river level data from the real-time data API (Beta)",
  concurrency: 2,
  rate: perSecond(2),
});
defineProvider({
  name: "OPEN_FOOD_FACTS",
  label: "Open Food Facts",
  url: "https://world.openfoodfacts.org",
  attribution: "Open Food Facts, under the Open Database License",
  concurrency: 2,
  // Its published limits: 100 product reads and 10 searches a minute.
  rate: perMinute(100),
  lanes: { "/cgi/search.pl": perMinute(10), "/api/v2/search": perMinute(10) },
});
defineProvider({
  name: "FSA",
  label: "Food Standards Agency food hygiene ratings",
  url: "https://api.ratings.food.gov.uk",
  attribution: "Food Standards Agency, Open Government Licence",
  concurrency: 2,
  rate: perSecond(2),
  headers: { "x-api-version": "2", accept: "application/json" },
});
defineProvider({
  name: "FRANKFURTER",
  label: "Frankfurter (European Central Bank reference rates)",
  url: "https://api.frankfurter.dev",
  concurrency: 2,
  rate: perSecond(2),
});
defineProvider({ name: "COINBASE", label: "Coinbase", url: "https://api.coinbase.com", concurrency: 2, rate: perSecond(3) });
defineProvider({ name: "YAHOO_FINANCE", label: "Yahoo Finance", url: "https://query1.finance.yahoo.com", concurrency: 4, rate: perSecond(4) });
defineProvider({ name: "COINGECKO", label: "CoinGecko", url: "https://api.coingecko.com", concurrency: 1, rate: perMinute(10) });
// OpenStreetMap services: Nominatim allows one request a second, OSRM's demo
// server asks the same, Overpass hands out a couple of slots per client.
defineProvider({
  name: "NOMINATIM",
  label: "OpenStreetMap Nominatim",
  url: "https://nominatim.openstreetmap.org",
  attribution: "© OpenStreetMap contributors, ODbL",
  concurrency: 1,
  rate: perSecond(1),
});
defineProvider({
  name: "OVERPASS",
  label: "OpenStreetMap Overpass API",
  url: "https://overpass-api.de",
  attribution: "© OpenStreetMap contributors, ODbL",
  concurrency: 2,
  rate: perSecond(1),
  timeoutMs: 30_000,
});
defineProvider({
  name: "OSRM",
  label: "OSRM",
  url: "https://router.project-osrm.org",
  attribution: "Routes © OpenStreetMap contributors, ODbL",
  concurrency: 1,
  rate: perSecond(1),
});
