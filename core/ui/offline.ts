// Registers the app's service worker (core/views/pwa.ts), which keeps the
// screens' pages and bundles for when the server cannot be reached.

/** Resolves once the worker is registered (or at once where there are none: no HTTPS, an old browser). */
export function registerWorker(): Promise<void> {
  if (!("serviceWorker" in navigator)) return Promise.resolve();
  return navigator.serviceWorker.register("/my/sw.js", { scope: "/my/" }).then(
    () => undefined,
    () => undefined,
  );
}
