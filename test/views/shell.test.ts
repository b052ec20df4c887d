// The frame every screen runs in, over HTTP: the shell page for a signed-in
// person (header, CSRF token, policy, hashed bundles), the sign-in detour for
// anyone else, the bundles' caching, the Markdown preview, the live stream of
// change notices, and the manifest's rules for `screens`.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { read, T } from "../../core/sdk.ts";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildRegistry, ManifestError, validateManifest } from "../../core/registry.ts";
import { get, post, signUp, type Signed } from "../auth/people.ts";
import { startHearth, type Hearth } from "../harness.ts";

let h: Hearth;
let erin: Signed;

beforeAll(async () => {
  h = await startHearth({ env: { HEARTH_SIGNUP: "open", HEARTH_METERING: "off", HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0" } });
  erin = await signUp(h, "erin");
});
afterAll(() => h.stop());

test("a screen sends a visitor who is not signed in to sign in, and back after", async () => {
  const r = await get(h, "/my/notes?open=Shopping");
  expect(r.status).toBe(303);
  expect(r.headers.get("location")).toBe(`/signin?next=${encodeURIComponent("/my/notes?open=Shopping")}`);
});

test("the shell carries the header, the session's CSRF token and only this instance's scripts, cached for good under hashed names", async () => {
  const r = await get(h, "/my/notes", { cookie: erin.cookie });
  expect(r.status).toBe(200);
  expect(r.headers.get("content-security-policy")).toContain("script-src 'self'");
  expect(r.headers.get("content-security-policy")).not.toContain("unsafe-eval");
  expect(r.headers.get("cache-control")).toBe("no-store");
  expect(r.text).toContain(`<meta name="csrf-token" content="${erin.csrf}">`);
  expect(r.text).toContain('<a href="/my/notes" aria-current="page">Notes</a>');
  for (const page of ["/agent", "/apps", "/blog", "/mcp"]) expect(r.text).toContain(`href="${page}"`);
  expect(r.text).toContain('role="search"');
  const scripts = [...r.text.matchAll(/(?:src|href)="(\/my\/assets\/[^"]+)"/g)].map((m) => m[1]);
  expect(scripts).toHaveLength(2);
  for (const path of scripts) {
    expect(path).toMatch(/\.[0-9a-f]{16}\.js$/);
    const js = await fetch(h.url + path, { headers: { "accept-encoding": "gzip" } });
    expect(js.status).toBe(200);
    expect(js.headers.get("cache-control")).toContain("immutable");
    expect(js.headers.get("content-type")).toContain("javascript");
    const text = await js.text();
    // Nothing from a CDN or anywhere else: the bundles import only each other, by this instance's paths.
    expect(text).not.toMatch(/(?:from|import)\s*\(?\s*["'](?:https?:)?\/\//);
    expect(text).not.toContain('"hearth/ui"');
  }
  const stale = scripts[0].replace(/\.[0-9a-f]{16}\.js$/, ".0000000000000000.js");
  expect((await fetch(h.url + stale)).status).toBe(404);
  // The home page gains the same header.
  const home = await get(h, "/", { cookie: erin.cookie });
  expect(home.text).toContain('href="/my/notes"');
});

test("the preview is the published page's Markdown, sanitized, and needs the session's CSRF token", async () => {
  const text = "# Hi\n\n<script>alert(1)</script><img src=x onerror=alert(1)>\n\nSome **bold**";
  const refused = await post(h, "/my/preview", { text }, { cookie: erin.cookie });
  expect(refused.status).toBe(403);
  const r = await post(h, "/my/preview", { text }, { cookie: erin.cookie, "x-csrf-token": erin.csrf });
  expect(r.status).toBe(200);
  expect(r.body.result).toContain("<h1");
  expect(r.body.result).toContain("<strong>bold</strong>");
  expect(r.body.result).not.toContain("<script");
  expect(r.body.result).not.toContain("onerror");
  const bad = await post(h, "/my/preview", { text: 3 }, { cookie: erin.cookie, "x-csrf-token": erin.csrf });
  expect(bad.status).toBe(400);
  expect(bad.body.error.field).toBe("text");
  expect((await post(h, "/my/preview", { text })).status).toBe(401);
});

/** Reads server-sent events from /my/live until `until` holds, returning the change notices seen. */
async function listen(cookie: string, act: () => Promise<unknown>, until: (seen: { service: string; method: string }[]) => boolean) {
  const ac = new AbortController();
  const res = await fetch(`${h.url}/my/live`, { headers: { cookie }, signal: ac.signal });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/event-stream");
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const seen: { service: string; method: string }[] = [];
  let buf = "";
  // The stream's first lines say it listens: acting before that could be missed.
  while (!buf.includes(": listening")) buf += (await reader.read()).value ?? "";
  await act();
  while (!until(seen)) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += value;
    let end;
    while ((end = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, end);
      buf = buf.slice(end + 2);
      const data = /^event: change\ndata: (.*)$/m.exec(block);
      if (data) seen.push(JSON.parse(data[1]));
    }
  }
  ac.abort();
  return seen;
}

test("the live stream tells a person's pages of each write of theirs, from any client, and of nobody else's", async () => {
  const token = await h.token("erin");
  const other = await h.token("olga");
  const seen = await listen(
    erin.cookie,
    async () => {
      expect((await h.call("notes/add", { title: "olga's", text: "not erin's" }, { token: other })).status).toBe(200);
      expect((await h.call("notes/list", {}, { token })).status).toBe(200);
      // A write refused inside its transaction is rolled back: its notice waits for a commit that never comes.
      expect((await h.call("notes/delete", { title: "never written" }, { token })).status).toBe(404);
      expect((await h.call("notes/add", { title: "Shopping", text: "milk" }, { token })).status).toBe(200);
      expect((await h.call("notes/delete", { title: "Shopping" }, { token })).status).toBe(200);
    },
    (s) => s.length >= 2,
  );
  // Reads are not told, nor refused writes, nor another person's writes: only erin's two writes, in order.
  expect(seen).toEqual([
    { service: "notes", method: "add" },
    { service: "notes", method: "delete" },
  ]);
  expect((await get(h, "/my/live")).status).toBe(401);
});

test("a manifest's screens are checked at start, naming the field", () => {
  const base = { name: "demo", description: "A demo.", methods: { list: read({ description: "Lists.", args: T.Object({}), access: "account", run: () => [] }) } };
  const bad = (screens: unknown) => () => validateManifest("demo/index.ts", { ...base, screens });
  expect(bad({ main: { title: "Demo", module: "../elsewhere.ts" } })).toThrow("screens.main.module");
  expect(bad({ main: { title: "Demo" } })).toThrow("either module");
  expect(bad({ main: { title: "Demo", module: "a.ts", href: "/demo" } })).toThrow("either module");
  expect(bad({ main: { title: "Demo", href: "/other" } })).toThrow('must be a page of this plugin, starting with "/demo"');
  expect(bad({ Main: { title: "Demo", module: "a.ts" } })).toThrow("screens.Main");
  expect(bad({ main: { title: "", module: "a.ts" } })).toThrow("screens.main.title");
  expect(() => validateManifest("demo/index.ts", { ...base, screens: { demo: { title: "Demo", module: "screens/demo.ts" }, page: { title: "Page", href: "/demo/page" } } })).not.toThrow();
});

test("a service named as one of /my/'s own routes may not bring screens: refused at load, saying which and why", async () => {
  const base = { description: "A demo.", methods: { list: read({ description: "Lists.", args: T.Object({}), access: "account", run: () => [] }) } };
  for (const name of ["live", "find", "search", "assets", "offline", "preview", "manifest", "icon", "sw"])
    expect(() => validateManifest(`${name}/index.ts`, { ...base, name, screens: { [name]: { title: "Mine", module: "screens/mine.ts" } } })).toThrow(`/my/${name} is the instance's own`);
  // Its methods alone, or a page of its own linked from the header, take nothing under /my/.
  expect(() => validateManifest("live/index.ts", { ...base, name: "live" })).not.toThrow();
  expect(() => validateManifest("live/index.ts", { ...base, name: "live", screens: { live: { title: "Live", href: "/live" } } })).not.toThrow();

  // A drop-in folder is refused as it is loaded, naming its file and the field.
  const dir = mkdtempSync(join(tmpdir(), "hearth-my-names-"));
  try {
    mkdirSync(join(dir, "preview", "screens"), { recursive: true });
    writeFileSync(join(dir, "preview", "screens", "preview.ts"), `import { html } from "hearth/ui";\nexport default () => html\`<p>hi</p>\`;\n`);
    writeFileSync(
      join(dir, "preview", "index.ts"),
      `import { definePlugin, read, T } from "hearth";\nexport default definePlugin({ name: "preview", description: "d", screens: { preview: { title: "Preview", module: "screens/preview.ts" } }, methods: { m: read({ description: "d", args: T.Object({}), access: "account", run: () => 1 }) } });\n`,
    );
    const err = await buildRegistry({ extra: dir }).catch((e) => e);
    expect(err).toBeInstanceOf(ManifestError);
    expect(err.message).toContain("preview/index.ts: screens:");
    expect(err.message).toContain('a service named "preview" cannot bring screens: /my/preview is the instance\'s own');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
