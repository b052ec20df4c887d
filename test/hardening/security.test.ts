// What a hostile user can store must never act on this instance's origin, no
// name reaches outside its folder, and every answer carries the headers that
// keep browsers from sniffing, framing or leaking referrers.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { createApp } from "../../core/http/app.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { garbageUpstream, hostileEnv, refuseOutside, type Garbage } from "./instance.ts";

let h: Hearth;
let alice: string;
let upstream: Garbage;
let undo: () => void;
const XSS = `<script>document.title="owned"</script><img src=x onerror="alert(1)"><svg onload=alert(2)>`;

beforeAll(async () => {
  // Pages that show outside data reach only a loopback stand-in.
  upstream = garbageUpstream();
  undo = refuseOutside();
  h = await startHearth({ env: { ...(await hostileEnv(upstream.url)), HEARTH_METERING: "off" } });
  alice = await h.token("alice");
});
afterAll(async () => {
  await h?.stop();
  upstream?.stop();
  undo?.();
});

const directive = (csp: string, name: string) =>
  csp
    .split(";")
    .map((d) => d.trim())
    .find((d) => d.split(/\s+/)[0] === name);

/** A CSP under which no inline or injected script can run. */
function forbidsInlineScript(csp: string | null): boolean {
  if (!csp) return false;
  if (/(^|;)\s*sandbox(\s|;|$)/.test(csp) && !/allow-same-origin/.test(csp)) return true;
  const src = directive(csp, "script-src") ?? directive(csp, "default-src");
  return !!src && !/'unsafe-inline'|'unsafe-eval'|\*|https?:|data:/.test(src);
}

test("every route answers with nosniff, a referrer policy and a CSP; every HTML page refuses framing by others", async () => {
  const routes = (createApp(h.rt).routes as { method: string; path: string }[]).filter((r) => r.method === "GET" || r.method === "ALL");
  const paths = [...new Set(routes.map((r) => r.path.replace(/:[^/]+/g, "x").replace(/\*/g, "x")))];
  expect(paths.length).toBeGreaterThan(10);
  const missing: string[] = [];
  for (const p of [...paths, "/api/v1/notes/list", "/api/v1/blog/list", "/no/such/page"]) {
    for (const token of [undefined, alice]) {
      const res = await fetch(`${h.url}${p}`, { redirect: "manual", headers: token ? { authorization: `Bearer ${token}` } : {} });
      await res.arrayBuffer();
      const hd = res.headers;
      const where = `${p} (${res.status}${token ? ", signed in" : ""})`;
      if (hd.get("x-content-type-options") !== "nosniff") missing.push(`${where}: nosniff`);
      if (!hd.get("referrer-policy")) missing.push(`${where}: referrer-policy`);
      const csp = hd.get("content-security-policy");
      if (!csp) missing.push(`${where}: content-security-policy`);
      else if (/text\/html/.test(hd.get("content-type") ?? "") && !directive(csp, "frame-ancestors") && !/sandbox/.test(csp) && !hd.get("x-frame-options"))
        missing.push(`${where}: frame-ancestors`);
    }
  }
  expect(missing).toEqual([]);
});

test("stored HTML in a blog post, a public document and a note is shown as text, never run", async () => {
  const post = await h.call("blog/create", { title: `Hello ${XSS}`, content: `# Heading\n\n${XSS}\n\n[click](javascript:alert(3)) and more words to pass fifty characters.` }, { token: alice });
  expect(post.status).toBe(200);
  const doc = await h.call("docs/write", { title: `Doc ${XSS}`, content: `${XSS}\n\n<iframe src="javascript:alert(4)"></iframe>`, public: true }, { token: alice });
  expect(doc.status).toBe(200);
  for (const path of ["/blog", `/blog/${post.body.result.id}`, `/docs/${doc.body.result.id}`]) {
    const res = await fetch(`${h.url}${path}`);
    const page = await res.text();
    expect(res.status, path).toBe(200);
    expect(page, path).not.toContain("<script>document.title");
    expect(page, path).not.toMatch(/<img[^>]+onerror/i);
    expect(page, path).not.toMatch(/<svg[^>]+onload/i);
    expect(page, path).not.toMatch(/href="javascript:/i);
    expect(page, path).not.toMatch(/<iframe/i);
    expect(forbidsInlineScript(res.headers.get("content-security-policy")), `${path}: ${res.headers.get("content-security-policy")}`).toBe(true);
  }
  // Over the API the text comes back as stored, in JSON, which a browser never runs.
  const got = await fetch(`${h.url}/api/v1/blog/read?id=${post.body.result.id}`);
  expect(got.headers.get("content-type")).toContain("application/json");
});

test("an uploaded HTML or SVG file is served in a sandbox or as a download, never as a live page of this origin", async () => {
  for (const [name, type] of [
    ["page.html", "text/html"],
    ["image.svg", "image/svg+xml"],
    ["sneaky.txt", "text/html"],
  ]) {
    const put = await h.call("files/put", { name, content: `<html><body>${XSS}</body></html>`, type }, { token: alice });
    expect(put.status, name).toBe(200);
    const id = put.body.result.id;
    const res = await fetch(`${h.url}/files/${id}`, { headers: { authorization: `Bearer ${alice}` } });
    await res.arrayBuffer();
    expect(res.status, name).toBe(200);
    const csp = res.headers.get("content-security-policy");
    const attachment = /^attachment/i.test(res.headers.get("content-disposition") ?? "");
    expect(attachment || forbidsInlineScript(csp), `${name}: ${csp}`).toBe(true);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  }
});

test("a hosted app's page runs sandboxed, without this origin", async () => {
  const app = await h.call("apps/create", { name: "Sneaky", html: `<!doctype html><html><body>${XSS}<script>fetch("/api/v1/notes/list")</script></body></html>` }, { token: alice });
  expect(app.status).toBe(200);
  const slug = app.body.result.slug;
  let carried = 0;
  for (const path of [`/apps/${slug}`, `/apps/${slug}/frame`]) {
    const res = await fetch(`${h.url}${path}`, { headers: { authorization: `Bearer ${alice}` } });
    const text = await res.text();
    if (res.status !== 200 || !text.includes("owned")) continue;
    // The page that carries the app's own markup is sandboxed without same-origin rights.
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(/(^|;)\s*sandbox/.test(csp) && !/allow-same-origin/.test(csp), `${path}: ${csp}`).toBe(true);
    carried++;
  }
  expect(carried).toBeGreaterThan(0);
});

test("file names and ids that try to leave their folder are refused or kept inside", async () => {
  const names = ["../../../etc/passwd", "..\\..\\boot.ini", "/etc/passwd", "a/../../b", "..", ".", "\u0000x", "ok\u0000.txt", "%2e%2e%2fescape"];
  for (const name of names) {
    const put = await h.call("files/put", { name, content: "escape" }, { token: alice });
    expect(put.status, name).not.toBe(500);
    if (put.status === 200) {
      // Stored under a name that stays a name: no separator, no parent step.
      expect(put.body.result.name, name).not.toMatch(/[\\/]/);
    } else {
      expect(put.status, name).toBe(400);
      expect(put.body.error.field, name).toBe("name");
    }
  }
  // Nothing was written outside the blob store, and the data folder holds only what it should.
  for (const entry of readdirSync(h.dir)) expect(["hearth.db", "hearth.db-wal", "hearth.db-shm", "blobs", "apps", "mail", "tmp", "keys"].some((k) => entry.startsWith(k)), entry).toBe(true);
  expect(existsSync(join(h.dir, "..", "passwd"))).toBe(false);
  // Routes with ids and slugs refuse traversal rather than reading a path.
  for (const path of ["/files/..%2f..%2fetc%2fpasswd", "/blog/..%2f..%2fhearth.db", "/docs/..%2fhearth.db", "/apps/..%2f..%2fetc%2fpasswd", "/files/shared/..%2f..%2fhearth.db"]) {
    const res = await fetch(`${h.url}${path}`, { headers: { authorization: `Bearer ${alice}` } });
    const body = await res.text();
    expect(res.status, path).toBeGreaterThanOrEqual(400);
    expect(res.status, path).toBeLessThan(500);
    expect(body, path).not.toContain("SQLite format");
    expect(body, path).not.toContain("root:");
  }
  for (const slug of ["../../etc", "a/b", "..", "%2e%2e%2f", "a\\b", ".hidden"]) {
    const app = await h.call("apps/create", { name: "Traversal", html: "<p>x</p>", slug }, { token: alice });
    expect(app.status, slug).toBe(400);
    expect(app.body.error.field, slug).toBe("slug");
  }
  for (const id of ["../../etc/passwd", "..", "%2e%2e"]) {
    for (const m of ["files/get", "notes/get", "docs/read", "blog/read"]) {
      const arg = m === "notes/get" ? { title: id } : { id };
      const res = await h.call(m, arg, { token: alice });
      expect([400, 404], `${m} ${id}`).toContain(res.status);
    }
  }
});
