// The mechanism for providers the instance may reach, each with the policy it
// asks of its users. Plugins define theirs (defineProvider, at module load)
// and list them in their manifest's `providers`; the core defines none. Names
// are UPPER_SNAKE: `<NAME>_URL` in the configuration replaces the base URL
// (tests point these at loopback fixture servers), `<NAME>_TIMEOUT_MS` the
// timeout. Defining the same name twice keeps the first definition, so limits
// stay instance-wide when two services share a provider.

export interface RateCap {
  /** At most `count` requests start within any window of `perMs` milliseconds. */
  count: number;
  perMs: number;
}

/** At most `n` requests a second. */
export const perSecond = (n: number): RateCap => ({ count: n, perMs: 1000 });
/** At most `n` requests a minute. */
export const perMinute = (n: number): RateCap => ({ count: n, perMs: 60_000 });

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
