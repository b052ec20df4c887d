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

export function sandboxBound(rt: Runtime, port: number | null) {
  if (port === null) bound.delete(rt);
  else bound.set(rt, port);
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

/** Why documents are, or are not, in an origin of their own: for /status and the start-up summary. */
export function sandboxState(rt: Runtime): { on: boolean; note: string } {
  const port = bound.get(rt);
  if (port === undefined)
    return { on: false, note: sandboxPort(rt.config, 1) === null ? "HEARTH_SANDBOX_PORT is off" : "the sandbox port could not be bound (see the log)" };
  if (rt.config.HEARTH_PUBLIC_URL && !sandboxPortNamed(rt.config)) return { on: false, note: `behind HEARTH_PUBLIC_URL port ${port} may not be reachable` };
  return { on: true, note: `port ${port} (HEARTH_SANDBOX_PORT)` };
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
