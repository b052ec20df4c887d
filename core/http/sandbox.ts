// A second origin for documents someone else wrote (a hosted page, a
// published script). Framed on the instance's own origin such a document can
// only be given an opaque sandbox, and a document with an opaque origin is
// not told when it navigates itself: so it can send its frame to a host name
// or port it chose, and the browser looks that name up and connects before
// the page around it refuses the frame. On an origin of its own the document
// is told, and the guard its plugin puts first cancels the navigation.
//
// The origin is the same host name on another port (HEARTH_SANDBOX_PORT),
// which needs no configuration. That listener answers only the routes a
// plugin marks `sandbox` and reads no cookie or token: the instance's session
// cookie, which browsers send to every port of a host, stands for no one
// there (it is HttpOnly besides, so no document reads it), and nothing it
// answers sets one. Storage is per origin, so the port shares none with the
// instance's pages.
import { defineModule } from "../module.ts";
import type { PluginDef } from "../plugin.ts";
import type { Runtime } from "../runtime.ts";

/** What a plugin that lists "sandbox" in `needs` learns about the request it serves. */
export interface Sandbox {
  /**
   * The origin the page answering this request should load sandboxed
   * documents from, or null when there is none the browser can reach (the
   * port is off, or the instance is behind HEARTH_PUBLIC_URL with no port
   * named for it): the documents then stay on the instance's origin, in an
   * opaque sandbox.
   */
  readonly origin: string | null;
  /** The request came in on the sandbox origin, where it carries no caller. */
  readonly here: boolean;
  /** The instance's pages that may frame a document served here, as a CSP source; null when it is not served here. */
  readonly parent: string | null;
}

declare module "../plugin.ts" {
  interface CapabilityTypes {
    /** The second origin documents someone else wrote are served on (core/http/sandbox.ts). */
    sandbox: Sandbox;
  }
}

/** The port HEARTH_SANDBOX_PORT asks for beside `port`: empty is the next one (any free port beside an ephemeral one), off or 0 is none. */
export function sandboxPort(config: Readonly<Record<string, string>>, port: number): number | null {
  const s = (config.HEARTH_SANDBOX_PORT ?? "").trim().toLowerCase();
  if (s === "off" || s === "0") return null;
  if (s === "") return port === 0 ? 0 : port + 1;
  const n = Number(s);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new Error(`HEARTH_SANDBOX_PORT: must be a port number (1-65535), off, or empty for PORT+1 (got "${config.HEARTH_SANDBOX_PORT}")`);
  return n;
}

/** Whether the owner named the port: then it is taken to be reachable even behind HEARTH_PUBLIC_URL, and a port in use stops start-up. */
export const sandboxPortNamed = (config: Readonly<Record<string, string>>) => /^\d+$/.test((config.HEARTH_SANDBOX_PORT ?? "").trim()) && sandboxPort(config, 1) !== null;

/** The port each instance's sandbox listener is bound to, while it is. */
const bound = new WeakMap<Runtime, number>();

export function sandboxBound(rt: Runtime, port: number) {
  bound.set(rt, port);
}

/** The listener on `port` stopped: the instance has no sandbox origin unless another listener holds one. */
export function sandboxUnbound(rt: Runtime, port: number) {
  if (bound.get(rt) === port) bound.delete(rt);
}

/** Whether any plugin serves documents on the sandbox origin. */
export const sandboxRoutes = (rt: Runtime) => [...rt.registry.plugins.values()].some((p) => (p.def.routes ?? []).some((r) => r.sandbox));

/**
 * Where a page reached at `reached` (an origin) loads sandboxed documents
 * from: the same host name on the sandbox port, as the browser named it. Behind
 * HEARTH_PUBLIC_URL the browser knows only the proxy's name, whose ports are
 * the proxy's: the port is used there only when the owner named it.
 */
export function sandboxOrigin(rt: Runtime, reached: string): string | null {
  const port = bound.get(rt);
  if (port === undefined) return null;
  let base: URL;
  try {
    base = new URL(rt.config.HEARTH_PUBLIC_URL || reached);
  } catch {
    return null;
  }
  if (rt.config.HEARTH_PUBLIC_URL && !sandboxPortNamed(rt.config)) return null;
  return `${base.protocol}//${base.hostname}:${port}`;
}

/** The instance's pages that frame documents served on the sandbox origin at `reached`: the same host name, any port (a proxy or a container may map the instance's). */
function parentOf(rt: Runtime, reached: string): string | null {
  try {
    const u = new URL(rt.config.HEARTH_PUBLIC_URL || reached);
    return rt.config.HEARTH_PUBLIC_URL ? u.origin : `${u.protocol}//${u.hostname}:*`;
  } catch {
    return null;
  }
}

/** Why the sandbox port cannot serve, from the settings alone (for `hearth help`, which starts no server); null when it can. */
function settingsBlock(config: Readonly<Record<string, string>>): string | null {
  let port: number | null;
  try {
    port = sandboxPort(config, 1);
  } catch (e) {
    return (e as Error).message;
  }
  if (port === null) return "HEARTH_SANDBOX_PORT is off";
  if (config.HEARTH_PUBLIC_URL && !sandboxPortNamed(config)) return "behind HEARTH_PUBLIC_URL the sandbox port is not used";
  return null;
}

/** Why documents are, or are not, in an origin of their own, as this running instance serves them. */
export function sandboxState(rt: Runtime): { on: boolean; why: string } {
  const blocked = settingsBlock(rt.config);
  if (blocked) return { on: false, why: blocked };
  const port = bound.get(rt);
  if (port === undefined) return { on: false, why: "the sandbox port could not be bound (see the log)" };
  return { on: true, why: `port ${port} (HEARTH_SANDBOX_PORT)` };
}

interface SandboxedPlugin {
  name: string;
  /** The plugin's own setting that gives its documents a host name of their own, and whether it is set. */
  host: { setting: string; set: boolean } | null;
}

/** The plugins that serve documents on the sandbox origin. */
export function sandboxedPlugins(plugins: Iterable<{ def: PluginDef }>, config: Readonly<Record<string, string>>): SandboxedPlugin[] {
  return [...plugins]
    .filter((p) => (p.def.routes ?? []).some((r) => r.sandbox))
    .map((p) => ({ name: p.def.name, host: p.def.sandboxHost ? { setting: p.def.sandboxHost, set: (config[p.def.sandboxHost] ?? "").trim() !== "" } : null }));
}

/**
 * What to tell the owner when documents some plugins serve are left on the
 * instance's own origin, where they can make the browser look up and connect
 * to a host they name: why, and the settings that close it. `why` is
 * sandboxState's when a server runs, else the settings' alone; null when
 * nothing is left open.
 */
export function sandboxAdvice(plugins: SandboxedPlugin[], config: Readonly<Record<string, string>>, why: string | null = settingsBlock(config)): string | null {
  if (!why) return null;
  const open = plugins.filter((p) => !p.host?.set);
  if (!open.length) return null;
  const own = open.filter((p) => p.host).map((p) => `${p.host!.setting} (${p.name})`);
  return `${why}, so pages ${open.map((p) => p.name).join(", ")} serve${open.length === 1 ? "s" : ""} run on the instance's own origin, where they can make the browser connect to a host they name: ${own.length ? `set ${own.join(", ")} to a name of their own, or ` : ""}set HEARTH_SANDBOX_PORT to a port the browser reaches at the instance's name`;
}

export const sandboxModule = defineModule({
  name: "sandbox",
  provides: {
    capabilities: {
      sandbox: (s): Sandbox => {
        const here = s.sandboxed === true;
        return { origin: here ? null : sandboxOrigin(s.rt, s.reached), here, parent: here ? parentOf(s.rt, s.reached) : null };
      },
    },
  },
});
