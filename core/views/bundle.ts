// The scripts of the person's screens: `hearth/ui` (Preact, htm and the shared
// components) as one bundle, and each view as a small bundle of its own that
// imports it. Both are built by Bun: from source on first use, or once by
// `bun run build`, which embeds them in the single binary. Their URLs carry
// a hash of their text, so they are cached for good and a new build is a
// new URL. A drop-in's view is built from its folder on first use either way,
// since it imports nothing but `hearth/ui` and files of its own.
import { join } from "node:path";

const UI_ENTRY = join(import.meta.dir, "../ui/index.ts");
/** How a view bundle names the shared one until it is linked to its URL. */
const UI_IMPORT = /(from|import)\s*"hearth\/ui"/g;

export interface Bundle {
  /** Where it is served: /my/assets/<name>.<hash>.js */
  path: string;
  text: string;
  gzip: Uint8Array<ArrayBuffer>;
}

/** What the single binary carries instead of source: the shared bundle and each built-in view's, by "<service>/<key>". */
export interface EmbeddedViews {
  ui: string;
  screens: Record<string, string>;
}
let embedded: EmbeddedViews | undefined;
export function setEmbeddedViews(v: EmbeddedViews) {
  embedded = v;
}

function failed(what: string, logs: readonly unknown[]): Error {
  return new Error(`${what} did not build: ${logs.map(String).join("\n") || "no reason given"}`);
}

/** Builds `hearth/ui` into one minified ES module. */
export async function buildUi(): Promise<string> {
  const out = await Bun.build({ entrypoints: [UI_ENTRY], format: "esm", minify: true, target: "browser" });
  if (!out.success) throw failed("hearth/ui", out.logs);
  return out.outputs[0].text();
}

/**
 * Builds a view module (an absolute path) into an ES module that mounts its
 * default export, importing `hearth/ui` by that name (see link()).
 */
export async function buildScreen(file: string): Promise<string> {
  const entry = `${file}.hearth-entry.js`;
  const out = await Bun.build({
    entrypoints: [entry],
    files: { [entry]: `import View from ${JSON.stringify(file)};\nimport { boot } from "hearth/ui";\nboot(View);\n` },
    external: ["hearth/ui"],
    format: "esm",
    minify: true,
    target: "browser",
  } as Parameters<typeof Bun.build>[0]);
  if (!out.success) throw failed(file, out.logs);
  return out.outputs[0].text();
}

const hashOf = (text: string) => new Bun.CryptoHasher("sha256").update(text).digest("hex").slice(0, 16);

function bundle(name: string, text: string): Bundle {
  return { path: `/my/assets/${name}.${hashOf(text)}.js`, text, gzip: Bun.gzipSync(new TextEncoder().encode(text)) as Uint8Array<ArrayBuffer> };
}

// Built once per process: every instance in it serves the same files.
let ui: Promise<Bundle> | null = null;
const screens = new Map<string, Promise<Bundle>>();

export function uiBundle(): Promise<Bundle> {
  ui ??= (embedded ? Promise.resolve(embedded.ui) : buildUi()).then((t) => bundle("ui", t));
  ui.catch(() => (ui = null));
  return ui;
}

/** The bundle of one screen: `id` is "<service>/<key>", `file` its module's absolute path (for a view not embedded). */
export function screenBundle(id: string, file: string): Promise<Bundle> {
  let b = screens.get(id);
  if (!b) {
    const text = embedded?.screens[id];
    b = Promise.all([text !== undefined ? Promise.resolve(text) : buildScreen(file), uiBundle()]).then(([t, u]) => bundle(id.replace("/", "."), link(t, u.path)));
    screens.set(id, b);
    b.catch(() => screens.delete(id));
  }
  return b;
}

/**
 * The home page's script: the shared bundle's page boot (the offline notice,
 * the app's worker, the header's live search) and no view, named for the
 * shared bundle it imports so the worker keeps it beside it.
 */
let home: Promise<Bundle> | null = null;
export function homeBundle(): Promise<Bundle> {
  home ??= uiBundle().then((u) => bundle("home", `import { bootPage } from ${JSON.stringify(u.path)};\nbootPage();\n`));
  home.catch(() => (home = null));
  return home;
}

/**
 * The worker that checks, off the page's thread, the dates a view drew before
 * the page had a formatter (core/ui/dates.ts): given `[options, [y, m, d, h,
 * min], text]` triples it answers the options whose text differs from what
 * the browser's own formatter says. Its first formatter loads the language's
 * data, which the browser then keeps for the page's thread too.
 */
const DATES_CHECK = `const made = new Map();
onmessage = (e) => {
  const wrong = new Set();
  for (const [key, [y, m, d, h, min], text] of e.data) {
    let f = made.get(key);
    if (!f) made.set(key, (f = new Intl.DateTimeFormat(undefined, { ...JSON.parse(key), timeZone: "UTC" })));
    if (f.format(Date.UTC(y, m, d, h, min)) !== text) wrong.add(key);
  }
  postMessage([...wrong]);
  close();
};
`;
let datesCheck: Bundle | null = null;
export function datesBundle(): Bundle {
  return (datesCheck ??= bundle("dates", DATES_CHECK));
}

/** Points a view bundle's imports of `hearth/ui` at the shared bundle's URL. */
export function link(text: string, uiPath: string): string {
  return text.replace(UI_IMPORT, (_m, word: string) => `${word}${JSON.stringify(uiPath)}`);
}

/** A bundle as a response: cached for good (its URL changes with its text), gzipped for a client that takes it. */
export function serveBundle(b: Bundle, req: Request): Response {
  const gz = (req.headers.get("accept-encoding") ?? "").includes("gzip");
  return new Response(gz ? b.gzip : b.text, {
    headers: {
      "content-type": "text/javascript; charset=utf-8",
      "cache-control": "public, max-age=31536000, immutable",
      "x-content-type-options": "nosniff",
      vary: "accept-encoding",
      ...(gz ? { "content-encoding": "gzip" } : {}),
    },
  });
}
