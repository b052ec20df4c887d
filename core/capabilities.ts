// Capability providers. The core provides db, sqlite, blobs, index, emit,
// writes and call (declared below); other modules (upstream, ai, mail, ...)
// declare theirs in `provides.capabilities` and augment CapabilityTypes in
// plugin.ts.
import { intersectScopes } from "./auth/tokens.ts";
import { writeFor, type Call } from "./call.ts";
import { indexFor } from "./db/fts.ts";
import { activity } from "./db/schema.ts";
import { dispatch } from "./dispatch.ts";
import { notConfigured } from "./errors.ts";
import { defineModule } from "./module.ts";
import type { Caller, Db } from "./plugin.ts";
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
  /** The origin the request came in at, as the browser named it (HEARTH_PUBLIC_URL aside); empty outside a request. */
  reached: string;
  /** The request came in on the sandbox origin (core/http/sandbox.ts). */
  sandboxed?: boolean;
}

export type CapabilityFactory = (scope: CapabilityScope) => unknown;

/** A row of the instance's activity feed, as `emit` records it. */
export type ActivityRow = typeof activity.$inferSelect;

declare module "./plugin.ts" {
  interface CapabilityTypes {
    /** The instance's activity feed (what `emit` records), a table to read through ctx.db, for a plugin showing it. */
    activity: typeof activity;
  }
}

/** The core's own capabilities: the store, the index, the activity feed and nested calls. */
export const storeModule = defineModule({
  name: "store",
  provides: {
    capabilities: {
      db: (s) => (s.kind === "read" ? s.rt.store.rdb : s.rt.store.wdb),
      sqlite: (s) => (s.kind === "read" ? s.rt.store.reader : s.rt.store.writer),
      blobs: (s) => s.rt.blobs,
      index: (s) => indexFor(s.rt.store, s.service, s.kind === "read", s.rt.log),
      activity: () => activity,
      emit: (s) => (e: { type: string; text: string; url?: string; data?: Record<string, unknown> }) => {
        const row = { at: s.rt.clock.now().getTime(), service: s.service, type: e.type, text: e.text, url: e.url ?? null, data: e.data ? JSON.stringify(e.data) : null };
        const insert = async () => {
          await s.rt.store.wdb.insert(activity).values(row).run();
        };
        if (s.kind !== "write") {
          const own = writeFor(s.rt.store, s.call, insert);
          own.catch((err) => s.rt.log.error("activity not recorded", { service: s.service, error: String(err) }));
          return own;
        }
        // In the call's transaction: the call waits for it before committing (see finished), so the event stands or falls with the call.
        const joined = insert();
        joined.catch(() => {});
        (s.call.pending ??= []).push(joined);
        return joined;
      },
      // Keys are the plugin's own: two plugins never wait on each other's.
      lock: (s) => (key: string) => s.rt.store.lock(`${s.service}:${key}`),
      afterCommit: (s) => (fn: () => void | Promise<void>) => s.rt.store.onCommit(fn),
      // A scheduled firing's writes are fenced (core/call.ts writeFor): an instance that lost the firing writes nothing of it.
      writes: (s) => <T,>(fn: (db: Db) => T | Promise<T>) => writeFor(s.rt.store, s.call, () => fn(s.rt.store.wdb)),
      // A nested call is a call of its own: its own state, price and charge, never its parent's.
      // A plugin reaches only the services its manifest requires (and itself).
      call: (s) => {
        const requires = s.rt.registry.plugins.get(s.service)?.def.requires ?? [];
        const may = (service: string) => service === s.service || requires.includes("*") || requires.includes(service) || requires.includes(`${service}?`);
        return async (service: string, method: string, args: Record<string, unknown> = {}, opts?: { scopes?: "*" | string[] }) => {
          if (!may(service)) {
            s.rt.log.error("plugin called a service it does not require", { plugin: s.service, service });
            throw notConfigured(`plugin "${s.service}" calls the service "${service}", which its manifest does not require: add it to the plugin's requires`);
          }
          return dispatch(s.rt, { service, method, args, caller: opts?.scopes ? { ...s.caller, scopes: intersectScopes(s.caller.scopes, opts.scopes) } : s.caller, parent: s.call, baseUrl: s.baseUrl });
        };
      },
    },
  },
});
