// The screens every plugin declares (its manifest's `screens`), as the header
// lists them and the shell serves them. The core names none: each comes from
// a manifest, a drop-in's as a built-in's.
import { dirname, join, resolve } from "node:path";
import type { Caller, ScreenDef } from "../plugin.ts";
import type { Runtime } from "../runtime.ts";

export interface Screen {
  service: string;
  key: string;
  /** "<service>/<key>": the bundle's name. */
  id: string;
  title: string;
  /** Where the person opens it. */
  href: string;
  /** The view module's absolute path; null for a screen that is a page of the plugin's own. */
  file: string | null;
  order: number;
  /** The reads whose answers the shell page carries (ScreenDef.reads), as "<service>/<method>". */
  reads: { method: string; args: Record<string, unknown> }[];
}

/** Where a view lives: /my/<service> for the screen keyed by the service's name, else /my/<service>/<key>. */
export const screenPath = (service: string, key: string) => (key === service ? `/my/${service}` : `/my/${service}/${key}`);

const lists = new WeakMap<Runtime, Screen[]>();

/** Every screen of the instance, in header order. */
export function screensOf(rt: Runtime): Screen[] {
  let list = lists.get(rt);
  if (list) return list;
  list = [];
  for (const p of rt.registry.plugins.values())
    for (const [key, s] of Object.entries(p.def.screens ?? {}) as [string, ScreenDef][])
      list.push({
        service: p.def.name,
        key,
        id: `${p.def.name}/${key}`,
        title: s.title,
        href: s.href ?? screenPath(p.def.name, key),
        file: s.module ? join(dirname(resolve(p.file)), s.module) : null,
        order: s.order ?? 100,
        reads: (s.reads ?? []).map((r) => ({ method: `${p.def.name}/${r.method}`, args: r.args ?? {} })),
      });
  list.sort((a, b) => a.order - b.order || a.title.localeCompare(b.title));
  lists.set(rt, list);
  return list;
}

/** The screens this caller's scopes reach (a session reaches every one). */
export function usableBy(rt: Runtime, caller: Caller): Screen[] {
  return screensOf(rt).filter((s) => caller.scopes === "*" || caller.scopes.includes(s.service));
}

export function findScreen(rt: Runtime, service: string, key: string): Screen | null {
  return screensOf(rt).find((s) => s.service === service && s.key === key && s.file) ?? null;
}
