// The contract a core module fills in: what it brings to an instance
// (capabilities, tables, commands, routes, identifiers, hooks on a call) and
// which other modules it needs. A module only declares; core/instance.ts lists
// the modules, and `wire` below merges their declarations once, so importing a
// module changes nothing and the instance reads everything from one place.
import type { CapabilityFactory } from "./capabilities.ts";
import type { CliCommand } from "./cli/commands.ts";
import type { MigrationSet } from "./db/migrate.ts";
import type { Mount } from "./http/app.ts";
import type { AnswerHeaders, Attachment, ChallengeParams, ClientAddress, Identifier, TokenCheck } from "./http/identify.ts";
import type { AppPasswordPresets } from "./http/pages/token.ts";
import type { McpHooks } from "./mcp/hooks.ts";
import type { Runtime } from "./runtime.ts";

/** A route Bun's own router serves ahead of the app, for paths as hot as the API. */
export type NativeRoute = (rt: Runtime, req: Request, address: ClientAddress) => Response | Promise<Response>;

export interface Provides {
  /** ctx.<name> for plugins that list it in `needs`. */
  capabilities?: Record<string, CapabilityFactory>;
  /** Tables of the module's own, by owner: applied after the core's, before plugins'. */
  migrations?: Record<string, MigrationSet>;
  /** `hearth <name>` commands. */
  cli?: Record<string, CliCommand>;
  /** Pages and routes added to the app. */
  mounts?: Mount[];
  /** Paths served by Bun's router as well as by the app. */
  native?: Record<string, NativeRoute>;
  /** Ways a request says who is calling, tried in the order modules are listed. */
  identifiers?: Identifier[];
  /** What a request carries beside its caller (a payment). */
  attachments?: Attachment[];
  /** Headers added to a successful answer (a receipt). */
  answerHeaders?: AnswerHeaders[];
  /** Checks a token must pass beyond being valid (its audience). */
  tokenChecks?: TokenCheck[];
  /** Parameters a 401's challenge carries (where to get a token). */
  challengeParams?: ChallengeParams[];
  /** Taking part in an MCP tools/call. */
  mcp?: Partial<McpHooks>;
  /** App password presets offered on /token. */
  appPasswords?: AppPasswordPresets[];
}

export interface CoreModule {
  name: string;
  /** Modules that must be wired with this one. */
  requires?: string[];
  provides?: Provides;
  /** Runs as each runtime is made, to fill in what the module owns on it (metering). */
  setup?(rt: Runtime): void;
  /** Runs when the instance starts serving, not for a command that only opens it: work of its own on a timer (scheduled backups). */
  serving?(rt: Runtime): void | Promise<void>;
}

export function defineModule<M extends CoreModule>(m: M): M {
  return m;
}

/** Every module's declarations, merged in the order the modules are listed. */
export interface Wiring {
  modules: readonly CoreModule[];
  capabilities: Map<string, CapabilityFactory>;
  migrations: { owner: string; set: MigrationSet }[];
  cli: Map<string, CliCommand>;
  mounts: Mount[];
  native: Map<string, NativeRoute>;
  identifiers: Identifier[];
  attachments: Attachment[];
  answerHeaders: AnswerHeaders[];
  tokenChecks: TokenCheck[];
  challengeParams: ChallengeParams[];
  mcp: McpHooks;
  appPasswords: AppPasswordPresets[];
  setups: ((rt: Runtime) => void)[];
  serving: ((rt: Runtime) => void | Promise<void>)[];
}

export class WiringError extends Error {}

/** Merges the modules' declarations; a missing requirement or two modules claiming one name is refused by name. */
export function wire(modules: readonly CoreModule[]): Wiring {
  const w: Wiring = {
    modules,
    capabilities: new Map(),
    migrations: [],
    cli: new Map(),
    mounts: [],
    native: new Map(),
    identifiers: [],
    attachments: [],
    answerHeaders: [],
    tokenChecks: [],
    challengeParams: [],
    mcp: { caller: [], errorResult: [], resultMeta: [] },
    appPasswords: [],
    setups: [],
    serving: [],
  };
  const names = new Set<string>();
  for (const m of modules) {
    if (names.has(m.name)) throw new WiringError(`core module "${m.name}" is listed twice`);
    names.add(m.name);
  }
  const owners = new Map<string, string>();
  const claim = (kind: string, key: string, by: string) => {
    const other = owners.get(`${kind} ${key}`);
    if (other) throw new WiringError(`core modules "${other}" and "${by}" both provide the ${kind} "${key}"`);
    owners.set(`${kind} ${key}`, by);
  };
  for (const m of modules) {
    for (const r of m.requires ?? []) if (!names.has(r)) throw new WiringError(`core module "${m.name}" requires "${r}", which is not wired`);
    const p = m.provides ?? {};
    for (const [k, f] of Object.entries(p.capabilities ?? {})) (claim("capability", k, m.name), w.capabilities.set(k, f));
    for (const [k, set] of Object.entries(p.migrations ?? {})) (claim("migrations of", k, m.name), w.migrations.push({ owner: k, set }));
    for (const [k, c] of Object.entries(p.cli ?? {})) (claim("command", k, m.name), w.cli.set(k, c));
    for (const [k, r] of Object.entries(p.native ?? {})) (claim("route", k, m.name), w.native.set(k, r));
    w.mounts.push(...(p.mounts ?? []));
    w.identifiers.push(...(p.identifiers ?? []));
    w.attachments.push(...(p.attachments ?? []));
    w.answerHeaders.push(...(p.answerHeaders ?? []));
    w.tokenChecks.push(...(p.tokenChecks ?? []));
    w.challengeParams.push(...(p.challengeParams ?? []));
    w.mcp.caller.push(...(p.mcp?.caller ?? []));
    w.mcp.errorResult.push(...(p.mcp?.errorResult ?? []));
    w.mcp.resultMeta.push(...(p.mcp?.resultMeta ?? []));
    w.appPasswords.push(...(p.appPasswords ?? []));
    if (m.setup) w.setups.push(m.setup);
    if (m.serving) w.serving.push(m.serving);
  }
  return w;
}
