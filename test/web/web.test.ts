import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { lookup } from "node:dns/promises";
import { hostname } from "node:os";
import { gzipSync } from "node:zlib";
import { settle } from "../../core/upstream/index.ts";
import { blockedAddress, describeBlocked } from "../../core/upstream/pages/addresses.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { startDns } from "../mail/dns.ts";
import { json, recorded, startFixture } from "../upstream/fixture-server.ts";

const html = (body: string, status = 200, extra: Record<string, string> = {}) => new Response(body, { status, headers: { "content-type": "text/html; charset=utf-8", ...extra } });
const redirect = (to: string, status = 302) => new Response(null, { status, headers: { location: to } });

const site = startFixture({
  "/search": () => json(recorded("searxng", "search-solar-eclipse.json")),
  "/res/v1/web/search": (_q, req) =>
    req.headers.get("x-subscription-token") === "brave-test-key"
      ? json(recorded("brave", "web-search-solar-eclipse.json"))
      : json('{"type":"ErrorResponse","error":{"id":"x","status":401,"code":"SUBSCRIPTION_TOKEN_INVALID","detail":"The provided subscription token is invalid."}}', 401),
  "/article": () => html(recorded("web", "article.html")),
  "/article.gz": () => html(gzipSync(recorded("web", "article.html")) as unknown as string, 200, { "content-encoding": "gzip" }),
  "/latin1": () => new Response(Buffer.from("<html><head><title>Caf\xe9</title></head><body><p>Caf\xe9 cr\xe8me</p></body></html>", "latin1"), { headers: { "content-type": "text/html; charset=iso-8859-1" } }),
  "/notes.txt": () => new Response("plain words\nsecond line\n", { headers: { "content-type": "text/plain; charset=utf-8" } }),
  "/report.pdf": () => new Response("%PDF-1.7", { headers: { "content-type": "application/pdf" } }),
  "/huge": () => html(`<html><body><p>${"x".repeat(300_000)}</p></body></html>`),
  "/gone": () => html("<h1>Not found</h1>", 404),
  // Sends nothing until long after the fetch's time limit.
  // Never answers: the fetch's own timeout is what ends it.
  "/stall": () => new Promise<Response>(() => {}),
  "/hop1": () => redirect("/hop2", 301),
  "/hop2": () => redirect("/article", 307),
  "/loop": () => redirect("/loop"),
  "/to-metadata": () => redirect("http://169.254.169.254/latest/meta-data/iam/security-credentials/"),
  "/to-private": () => redirect("http://10.0.0.5/admin"),
  "/to-private6": () => redirect("http://[fd12:3456::1]/"),
  "/to-link-local": () => redirect("http://[fe80::1]/"),
  "/to-mapped": () => redirect("http://[::ffff:192.168.1.1]/"),
  "/to-localhost": () => redirect("http://localhost:1/"),
  "/to-gopher": () => redirect("gopher://example.com/"),
});

const port = new URL(site.url).port;
let plain: Hearth; // nothing configured, loopback refused as on a real instance
let searx: Hearth; // SearXNG, loopback allowed for the fixture pages
let brave: Hearth;
let alice: string;
let bob: string;

beforeAll(async () => {
  [plain, searx, brave] = await Promise.all([
    startHearth({ env: { WEB_FETCH_TIMEOUT_MS: "3000" } }),
    startHearth({ env: { HEARTH_METER_ACCOUNTS: "all", SEARXNG_URL: site.url, WEB_FETCH_ALLOW_LOOPBACK: "true", WEB_FETCH_MAX_BYTES: "200000", WEB_FETCH_TIMEOUT_MS: "5000", UPSTREAM_RETRY_MS: "1" } }),
    startHearth({ env: { HEARTH_METER_ACCOUNTS: "all", BRAVE_URL: site.url, BRAVE_API_KEY: "brave-test-key", UPSTREAM_RETRY_MS: "1" } }),
  ]);
  alice = await searx.token("alice");
  bob = await plain.token("bob");
});
afterAll(async () => {
  for (const h of [plain, searx, brave]) {
    await settle(h.rt);
    await h.stop();
  }
  site.stop();
});

describe("web/search", () => {
  test("with no engine configured answers 501 naming both settings", async () => {
    const r = await plain.call("web/search", { query: "eclipse" });
    expect(r.status).toBe(501);
    expect(r.body.error.kind).toBe("not_configured");
    expect(r.body.error.message).toContain("SEARXNG_URL");
    expect(r.body.error.message).toContain("BRAVE_API_KEY");
  });

  test("through SearXNG's JSON API: titles, URLs, snippets, dates and engines; 2 credits, a cached repeat free", async () => {
    await searx.grant("alice", 10);
    const r = await searx.call("web/search", { query: "solar eclipse 2027", limit: 2 }, { token: alice });
    expect(r.status).toBe(200);
    expect(r.body.result.engine).toBe("searxng");
    expect(r.body.result.results).toHaveLength(2);
    expect(r.body.result.results[0]).toEqual({
      title: "Total Solar Eclipse of August 2, 2027 - NASA Science",
      url: "https://science.nasa.gov/eclipses/future-eclipses/eclipse-2027-aug-2/",
      snippet: expect.stringContaining("totality lasting up to 6 minutes"),
      published: null,
      source: "duckduckgo, brave, startpage",
    });
    expect(r.body.result.results[1].published).toBe("2026-10-30T00:00:00");
    const asked = site.last("/search")!;
    expect(asked.query.get("format")).toBe("json");
    expect(asked.query.get("q")).toBe("solar eclipse 2027");
    const balance = async () => (await searx.call("credits/balance", {}, { token: alice })).body.result;
    const before = await balance();
    await settle(searx.rt);
    const again = await searx.call("web/search", { query: "solar eclipse 2027", limit: 2 }, { token: alice });
    expect(again.body.result.about.cached).toBe(true);
    expect(await balance()).toEqual(before);
  });

  test("a stranger is asked to pay for an uncached search", async () => {
    const r = await searx.call("web/search", { query: "something not yet asked" });
    expect([401, 402]).toContain(r.status);
  });

  test("through Brave with the key: web and news results, tags stripped from snippets", async () => {
    const carol = await brave.token("carol");
    await brave.grant("carol", 10);
    const r = await brave.call("web/search", { query: "solar eclipse 2027" }, { token: carol });
    expect(r.status).toBe(200);
    expect(r.body.result.engine).toBe("brave");
    const urls = r.body.result.results.map((x: any) => x.url);
    expect(urls).toEqual([
      "https://science.nasa.gov/eclipses/future-eclipses/eclipse-2027-aug-2/",
      "https://en.wikipedia.org/wiki/Solar_eclipse_of_August_2,_2027",
      "https://www.example-news.es/2026/11/eclipse-2027-spain",
    ]);
    expect(r.body.result.results[0].snippet).not.toContain("<strong>");
    expect(r.body.result.results[0].source).toBe("NASA");
    expect(r.body.result.results[2].published).toBe("2026-11-18T09:12:00");
    expect(site.last("/res/v1/web/search")!.headers.get("x-subscription-token")).toBe("brave-test-key");
    expect(site.last("/res/v1/web/search")!.query.get("count")).toBe("10");
  });

  test("a key Brave refuses is a provider failure that says which setting is wrong", async () => {
    const wrong = await startHearth({ env: { BRAVE_URL: site.url, BRAVE_API_KEY: "not-a-key", HEARTH_METERING: "off", UPSTREAM_RETRY_MS: "1" } });
    try {
      const r = await wrong.call("web/search", { query: "solar eclipse 2027" });
      expect(r.status).toBe(502);
      expect(r.body.error.message).toContain("BRAVE_API_KEY");
      expect(r.body.error.retry).toBe(true);
    } finally {
      await settle(wrong.rt);
      await wrong.stop();
    }
  });

  test("limit over 20 is refused naming the field", async () => {
    const r = await searx.call("web/search", { query: "x", limit: 21 }, { token: alice });
    expect(r.status).toBe(400);
    expect(r.body.error.field).toBe("limit");
  });
});

describe("web/fetch", () => {
  test("needs an account", async () => {
    const r = await searx.call("web/fetch", { url: `${site.url}/article` });
    expect(r.status).toBe(401);
  });

  test("gives the article's readable text without menus, scripts or footer", async () => {
    const r = await searx.call("web/fetch", { url: `${site.url}/article` }, { token: alice });
    expect(r.status).toBe(200);
    const a = r.body.result;
    expect(a.title).toBe("Why the 2027 eclipse will last so long");
    expect(a.site).toBe("Sky Notes");
    expect(a.published).toBe("2026-11-19T08:00:00Z");
    expect(a.lang).toBe("en-GB");
    expect(a.article).toBe(true);
    expect(a.text).toContain("six minutes and twenty-three seconds");
    expect(a.text).toContain("## Where to watch");
    expect(a.text).toContain("- Luxor: 6 minutes 23 seconds");
    expect(a.text).not.toContain("Subscribe");
    expect(a.text).not.toContain("dataLayer");
    expect(a.text).not.toContain("All rights reserved");
  });

  test("follows redirects, decompresses, honours the page's charset, reads plain text", async () => {
    const hop = await searx.call("web/fetch", { url: `${site.url}/hop1` }, { token: alice });
    expect(hop.status).toBe(200);
    expect(hop.body.result.url).toBe(`${site.url}/article`);
    expect(hop.body.result.requested).toBe(`${site.url}/hop1`);
    const gz = await searx.call("web/fetch", { url: `${site.url}/article.gz` }, { token: alice });
    expect(gz.body.result.text).toContain("Cádiz, Tarifa, Tangier");
    const latin = await searx.call("web/fetch", { url: `${site.url}/latin1` }, { token: alice });
    expect(latin.body.result.text).toContain("Café crème");
    const txt = await searx.call("web/fetch", { url: `${site.url}/notes.txt` }, { token: alice });
    expect(txt.body.result.text).toBe("plain words\nsecond line");
  });

  test("refuses what is not a page, too large, missing, or endlessly redirected", async () => {
    const pdf = await searx.call("web/fetch", { url: `${site.url}/report.pdf` }, { token: alice });
    expect(pdf.status).toBe(400);
    expect(pdf.body.error.message).toContain("application/pdf");
    const huge = await searx.call("web/fetch", { url: `${site.url}/huge` }, { token: alice });
    expect(huge.status).toBe(413);
    expect(huge.body.error.field).toBe("url");
    const gone = await searx.call("web/fetch", { url: `${site.url}/gone` }, { token: alice });
    expect(gone.status).toBe(404);
    const stall = await searx.call("web/fetch", { url: `${site.url}/stall` }, { token: alice });
    expect(stall.status).toBe(504);
    expect(stall.body.error.kind).toBe("upstream_timeout");
    const loop = await searx.call("web/fetch", { url: `${site.url}/loop` }, { token: alice });
    expect(loop.status).toBe(502);
    expect(loop.body.error.message).toContain("redirected more than 5 times");
  });

  test("only http and https, and no credentials in the URL", async () => {
    for (const url of ["ftp://example.com/file", "file:///etc/passwd", "javascript:alert(1)", "not a url"]) {
      const r = await searx.call("web/fetch", { url }, { token: alice });
      expect(r.status).toBe(400);
      expect(r.body.error.field).toBe("url");
    }
    const cred = await searx.call("web/fetch", { url: "http://user:pass@example.com/" }, { token: alice });
    expect(cred.status).toBe(400);
    const gopher = await searx.call("web/fetch", { url: `${site.url}/to-gopher` }, { token: alice });
    expect(gopher.status).toBe(400);
    expect(gopher.body.error.message).toContain("only http and https");
  });
});

describe("web/fetch refuses internal addresses", () => {
  const refused = async (h: Hearth, token: string, url: string, word: string) => {
    const r = await h.call("web/fetch", { url }, { token });
    expect(r.status).toBe(400);
    expect(r.body.error.field).toBe("url");
    expect(r.body.error.message).toContain(word);
    return r;
  };

  test("loopback is refused by default, by address and by name after DNS resolution", async () => {
    const before = site.seen.length;
    await refused(plain, bob, `${site.url}/article`, "loopback");
    await refused(plain, bob, `http://127.1:${port}/article`, "loopback");
    await refused(plain, bob, `http://2130706433:${port}/article`, "loopback");
    await refused(plain, bob, `http://[::1]:${port}/article`, "loopback");
    await refused(plain, bob, `http://localhost:${port}/article`, "loopback");
    // Nothing reached the fixture server.
    expect(site.seen.length).toBe(before);
  });

  test("a name that is not known to be internal is judged by the addresses DNS gives it", async () => {
    // This machine's own name resolves (through /etc/hosts) to a loopback or private address.
    const name = hostname();
    const { address } = await lookup(name);
    const why = blockedAddress(address);
    expect(why).not.toBeNull();
    const before = site.seen.length;
    await refused(plain, bob, `http://${name}:${port}/article`, describeBlocked[why!]);
    const r = await plain.call("web/fetch", { url: `http://${name}:${port}/article` }, { token: bob });
    expect(r.body.error.message).toContain(`(${address})`);
    expect(site.seen.length).toBe(before);
  });

  test("private, shared, link-local, metadata and unspecified addresses, v4 and v6", async () => {
    await refused(plain, bob, "http://10.1.2.3/", "private network");
    await refused(plain, bob, "http://172.16.0.1/", "private network");
    await refused(plain, bob, "http://192.168.1.1:8080/", "private network");
    await refused(plain, bob, "http://[fd00::1]/", "private network");
    await refused(plain, bob, "http://[::ffff:10.0.0.1]/", "private network");
    await refused(plain, bob, "http://100.64.0.1/", "carrier-grade NAT");
    await refused(plain, bob, "http://169.254.10.1/", "link-local");
    await refused(plain, bob, "http://[fe80::1]/", "link-local");
    await refused(plain, bob, "http://169.254.169.254/latest/meta-data/", "metadata");
    await refused(plain, bob, "http://metadata.google.internal/computeMetadata/v1/", "metadata");
    await refused(plain, bob, "http://100.100.100.200/latest/meta-data/", "metadata");
    await refused(plain, bob, "http://[fd00:ec2::254]/", "metadata");
    await refused(plain, bob, "http://0.0.0.0/", "unspecified");
    await refused(plain, bob, "http://224.0.0.1/", "multicast");
  });

  test("NAT64: the local-use prefix is refused whatever it carries, the well-known one by the IPv4 it carries", async () => {
    await refused(plain, bob, "http://[64:ff9b:1::a00:5]/", "private network");
    await refused(plain, bob, "http://[64:ff9b:1::808:808]/", "private network");
    await refused(plain, bob, "http://[64:ff9b:1:ffff::1]/", "private network");
    await refused(plain, bob, "http://[64:ff9b::10.0.0.5]/", "private network");
    await refused(plain, bob, `http://[64:ff9b::127.0.0.1]:${port}/article`, "loopback");
    await refused(plain, bob, "http://[64:ff9b::169.254.169.254]/", "metadata");
    expect(blockedAddress("64:ff9b:1::1")).toBe("private");
    expect(blockedAddress("64:ff9b::8.8.8.8")).toBeNull();
    expect(blockedAddress("64:ff9b::c0a8:101")).toBe("private");
  });

  test("a redirect to an internal address is refused at that hop, even where loopback is allowed for tests", async () => {
    const before = site.seen.length;
    const meta = await refused(searx, alice, `${site.url}/to-metadata`, "metadata");
    expect(meta.body.error.message).toContain("redirected to http://169.254.169.254/");
    await refused(searx, alice, `${site.url}/to-private`, "private network");
    await refused(searx, alice, `${site.url}/to-private6`, "private network");
    await refused(searx, alice, `${site.url}/to-link-local`, "link-local");
    await refused(searx, alice, `${site.url}/to-mapped`, "private network");
    // Only the redirecting pages were asked; nothing else was contacted.
    expect(site.seen.slice(before).map((s) => s.path)).toEqual(["/to-metadata", "/to-private", "/to-private6", "/to-link-local", "/to-mapped"]);
  });

  test("a redirect to loopback is refused where loopback is not allowed", async () => {
    const other = await startHearth({ env: { WEB_FETCH_ALLOW_LOOPBACK: "false" } });
    try {
      const t = await other.token("dan");
      await refused(other, t, `http://localhost:${port}/to-localhost`, "loopback");
    } finally {
      await other.stop();
    }
  });

  test("the address classes themselves", () => {
    expect(blockedAddress("8.8.8.8")).toBeNull();
    expect(blockedAddress("2606:4700:4700::1111")).toBeNull();
    expect(blockedAddress("127.9.9.9")).toBe("loopback");
    expect(blockedAddress("::1")).toBe("loopback");
    expect(blockedAddress("::ffff:127.0.0.1")).toBe("loopback");
    expect(blockedAddress("64:ff9b::a9fe:a9fe")).toBe("metadata");
    expect(blockedAddress("2002:c0a8:0101::1")).toBe("private");
    expect(blockedAddress("172.31.255.255")).toBe("private");
    expect(blockedAddress("172.32.0.1")).toBeNull();
    expect(blockedAddress("fe80::abcd")).toBe("link-local");
    expect(blockedAddress("168.63.129.16")).toBe("metadata");
    expect(blockedAddress("240.0.0.1")).toBe("reserved");
  });
});

describe("web/fetch name lookups, through a DNS server on loopback (WEB_FETCH_DNS)", () => {
  let dns: Awaited<ReturnType<typeof startDns>>;
  let viaDns: Hearth; // looks names up at the stand-in
  let deafDns: Hearth; // its DNS server never answers
  let silent: { port: number; close(): void };
  let carol: string;
  let dave: string;

  beforeAll(async () => {
    dns = await startDns(
      new Map([
        ["pages.example.com", { A: ["127.0.0.1"] }],
        ["inside.example.com", { A: ["10.0.0.5"] }],
        ["broken.example.com", { rcode: 2 }],
        ["refusing.example.com", { rcode: 5 }],
      ]),
    );
    silent = await Bun.udpSocket({ hostname: "127.0.0.1", socket: { data() {} } });
    // DNS is given up on within half the fetch's time: at 2 s that left the silent server's give-up 1 s before the
    // fetch's own timeout, which a busy machine overran.
    [viaDns, deafDns] = await Promise.all([
      startHearth({ env: { WEB_FETCH_DNS: dns.server, WEB_FETCH_ALLOW_LOOPBACK: "true", WEB_FETCH_TIMEOUT_MS: "10000" } }),
      startHearth({ env: { WEB_FETCH_DNS: `127.0.0.1:${silent.port}`, WEB_FETCH_TIMEOUT_MS: "10000" } }),
    ]);
    carol = await viaDns.token("carol");
    dave = await deafDns.token("dave");
  });
  afterAll(async () => {
    for (const h of [viaDns, deafDns]) await h.stop();
    dns.stop();
    silent.close();
  });

  test("a name is fetched at the address the configured DNS gives it, and still judged by it", async () => {
    const ok = await viaDns.call("web/fetch", { url: `http://pages.example.com:${port}/article` }, { token: carol });
    expect(ok.status).toBe(200);
    expect(ok.body.result.title).toBeTruthy();
    const inside = await viaDns.call("web/fetch", { url: "http://inside.example.com/admin" }, { token: carol });
    expect(inside.status).toBe(400);
    expect(inside.body.error).toMatchObject({ kind: "invalid_argument", field: "url" });
    expect(inside.body.error.message).toContain("(10.0.0.5)");
  });

  test("a name DNS says does not exist is the outside world's failure: 502, retry", async () => {
    const r = await viaDns.call("web/fetch", { url: "https://no-such-name.example.com/page" }, { token: carol });
    expect(r.status).toBe(502);
    expect(r.body.error).toMatchObject({ kind: "upstream_failed", retry: true });
    expect(r.body.error.message).toBe("no-such-name.example.com does not resolve to any address: DNS has no such name");
  });

  test("DNS that fails, refuses or does not answer is 503, retry", async () => {
    for (const [h, token, host, code] of [
      [viaDns, carol, "broken.example.com", "ESERVFAIL"],
      [viaDns, carol, "refusing.example.com", "EREFUSED"],
      [deafDns, dave, "pages.example.com", "ETIMEOUT"],
    ] as const) {
      const r = await h.call("web/fetch", { url: `https://${host}/page` }, { token });
      expect({ host, status: r.status }).toEqual({ host, status: 503 });
      expect(r.body.error).toMatchObject({ kind: "upstream_unavailable", retry: true });
      expect(r.body.error.message).toBe(`${host} could not be looked up: DNS did not answer (${code})`);
    }
  });
});
