// Capability providers. The core provides db, sqlite, blobs, index, emit and
// call; other modules (upstream, ai, mail, ...) register theirs here when
// imported by the runtime, and augment CapabilityTypes in plugin.ts.
import type { Call } from "./call.ts";
import type { Caller } from "./plugin.ts";
import { registerCapabilityName } from "./registry.ts";
import type { Runtime } from "./runtime.ts";

export interface CapabilityScope {
  rt: Runtime;
  service: string;
  /** "read" calls get read-only database access; "write" calls the writer, inside their transaction. */
  kind: "read" | "write" | "instance";
  /** The call the capability serves: its own state, passed to what it starts. */
  call: Call;
  caller: Caller;
  requestId: string;
  /** Base URL of this instance as the caller reached it, passed on to nested calls for links. */
  baseUrl: string;
}

export type CapabilityFactory = (scope: CapabilityScope) => unknown;

export const capabilityFactories = new Map<string, CapabilityFactory>();

export function provideCapability(name: string, factory: CapabilityFactory) {
  capabilityFactories.set(name, factory);
  registerCapabilityName(name);
}

/** Core modules that fill in a runtime's hooks (metering, ...) register here; each runs as a runtime is made. */
export const runtimeSetups: ((rt: Runtime) => void)[] = [];
