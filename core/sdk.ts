// What a drop-in plugin imports: `import { definePlugin, read, write, T, invalid } from "hearth"`.
// The registry serves this module under the name "hearth" (and TypeBox under its
// own name), so a plugin in any folder loads without a node_modules of its own,
// from source and from the single binary alike.
export { definePlugin, read, write } from "./plugin.ts";
export type { Ctx, MethodDef, PluginDef, RouteDef, Caller, Account } from "./plugin.ts";
export { Type as T } from "@sinclair/typebox";
export { HearthError, invalid, notFound, forbidden, conflict, tooLarge, notConfigured, unauthenticated, upstream } from "./errors.ts";
// For a plugin offering its records to calendar and contacts apps (`dav`).
export { DavPrecondition } from "./dav/collection.ts";
export type { DavCollection, DavRecord } from "./dav/collection.ts";
export { calendarComponent, vcard, textOf, uidOf, ICAL } from "./dav/ical.ts";
