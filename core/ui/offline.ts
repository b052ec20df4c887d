// Registers the app's service worker (core/views/pwa.ts), which keeps the
// screens' pages, the home page and their bundles for when the server cannot
// be reached. Its scope is the whole instance, so the home page is kept too;
// it answers for /my/ and / only, and lets everything else through.

/** Resolves once the worker is registered (or at once where there are none: no HTTPS, an old browser). */
export function registerWorker(): Promise<void> {
  if (!("serviceWorker" in navigator)) return Promise.resolve();
  return navigator.serviceWorker.register("/my/sw.js", { scope: "/" }).then(
    () => undefined,
    () => undefined,
  );
}
