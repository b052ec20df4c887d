// one store: which hosts a drop-in's ctx.http may reach; nothing in it depends on the store
// ctx.http (and ctx.bytes) reach the host of a provider the manifest declares, and no
// other: not through a redirect the provider answers with, nor through a
// path that rewrites the URL's host (`@elsewhere/…`). What `hearth help`
// says a drop-in reaches stays the whole of what it reaches.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startHearth, type Hearth } from "../harness.ts";

const root = mkdtempSync(join(tmpdir(), "hearth-dropin-"));
const folder = join(root, "fetcher");
mkdirSync(folder);
writeFileSync(
  join(folder, "index.ts"),
  `import { defineProvider, definePlugin, read, T } from "hearth";
const FETCHER = defineProvider({ name: "FETCHER", label: "Fetcher", url: "https://fetcher.invalid" });
export default definePlugin({
  name: "fetcher",
  description: "Reads JSON from its one provider.",
  needs: ["http", "bytes"],
  providers: [FETCHER],
  methods: {
    get: read({
      description: "The provider's answer for a path.",
      args: T.Object({ path: T.String() }),
      access: "public",
      run: async ({ path }, ctx) => (await ctx.http.get("FETCHER", path, { ttl: 0 })).data,
    }),
    raw: read({
      description: "The provider's bytes for a path, as text.",
      args: T.Object({ path: T.String() }),
      access: "public",
      run: async ({ path }, ctx) => JSON.parse(new TextDecoder().decode((await ctx.bytes.get("FETCHER", path)).bytes)),
    }),
  },
});
`,
);

// The declared provider, and another host it would send requests to.
const elsewhere: string[] = [];
const other = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req) => (elsewhere.push(new URL(req.url).pathname), Response.json({ stolen: true })) });
const otherHost = `127.0.0.1:${other.port}`;
const provider = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch(req) {
    const path = new URL(req.url).pathname;
    if (path === "/moved") return new Response(null, { status: 302, headers: { location: "/here" } });
    if (path === "/away") return new Response(null, { status: 301, headers: { location: `http://${otherHost}/stolen?token=x` } });
    if (path === "/here") return Response.json({ here: true });
    return Response.json({ path });
  },
});
const providerHost = `127.0.0.1:${provider.port}`;

const errors: Record<string, unknown>[] = [];
const logger = { info: () => {}, warn: () => {}, error: (msg: string, data?: Record<string, unknown>) => void errors.push({ msg, ...data }), line: () => {} };
let h: Hearth;
beforeAll(async () => {
  h = await startHearth({ env: { HEARTH_PLUGINS: folder, FETCHER_URL: `http://${providerHost}` }, logger });
});
afterAll(async () => {
  await h?.stop();
  provider.stop(true);
  other.stop(true);
  rmSync(root, { recursive: true, force: true });
});

test("a redirect on the provider's own host is followed", async () => {
  const r = await h.call("fetcher/get", { path: "/moved" });
  expect(r.status).toBe(200);
  expect(r.body.result).toEqual({ here: true });
});

test("a redirect to a host the manifest does not declare is refused, logged, and nothing reaches that host", async () => {
  const r = await h.call("fetcher/get", { path: "/away" });
  expect(r.status).toBe(502);
  expect(r.body.error.kind).toBe("upstream_failed");
  expect(r.body.error.message).toContain(`Fetcher redirected to ${otherHost}, which plugin "fetcher" does not declare`);
  expect(elsewhere).toEqual([]);
  expect(errors).toContainEqual(expect.objectContaining({ plugin: "fetcher", provider: "FETCHER", host: otherHost }));
});

test("a path that would move the request to another host is refused, logged, and nothing is sent", async () => {
  for (const path of [`@${otherHost}/stolen`, `user:pass@${otherHost}/stolen`]) {
    const r = await h.call("fetcher/get", { path });
    expect(r.status).toBe(501);
    expect(r.body.error.kind).toBe("not_configured");
    expect(r.body.error.message).toContain(`plugin "fetcher" asked FETCHER (${providerHost}) for a path that leads to another host`);
  }
  expect(elsewhere).toEqual([]);
  expect(errors).toContainEqual(expect.objectContaining({ plugin: "fetcher", provider: "FETCHER", host: otherHost }));
  // A path on the provider's host is still fetched.
  expect((await h.call("fetcher/get", { path: "/@ok" })).body.result).toEqual({ path: "/@ok" });
});

test("hearth help names the one host it reaches", async () => {
  const p = Bun.spawn(["bun", join(import.meta.dir, "../../core/cli/main.ts"), "help", "fetcher"], {
    env: { ...process.env, HEARTH_LOG: "off", HEARTH_PLUGINS: folder, FETCHER_URL: `http://${providerHost}` },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, code] = await Promise.all([new Response(p.stdout).text(), p.exited]);
  expect(code).toBe(0);
  expect(out).toContain(`reaches: FETCHER (${providerHost})`);
});

test("ctx.bytes keeps to the provider's host too: its own redirect is followed, another host's is not, and a path cannot move it", async () => {
  expect((await h.call("fetcher/raw", { path: "/moved" })).body.result).toEqual({ here: true });
  const away = await h.call("fetcher/raw", { path: "/away" });
  expect(away.status).toBe(502);
  expect(away.body.error.message).toContain(`Fetcher redirected to ${otherHost}, which plugin "fetcher" does not declare`);
  const moved = await h.call("fetcher/raw", { path: `@${otherHost}/stolen` });
  expect(moved.status).toBe(501);
  expect(moved.body.error.message).toContain(`plugin "fetcher" asked FETCHER (${providerHost}) for a path that leads to another host`);
  expect(elsewhere).toEqual([]);
});
