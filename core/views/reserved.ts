// The names under /my/ the instance serves itself (see module.ts and pwa.ts):
// the live stream, the search, the bundles, the offline page, the preview,
// the service worker, the manifest and the icons. A plugin's screen is served
// at /my/<service>[/<key>], so a service by one of these names would have its
// screens answered by the instance's own route (or take that route from every
// page): its manifest is refused at load instead. Kept free of imports, as
// the registry reads it before anything is mounted.
export const RESERVED_MY_NAMES = ["live", "find", "search", "assets", "offline", "preview", "manifest", "icon", "sw"] as const;
