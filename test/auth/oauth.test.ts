// The OAuth authorization server's rules, over HTTP as any client meets
// them: discovery documents, 401 challenges, registration, the consent
// form's checks, RFC 6749 errors, PKCE S256 only, exact redirect URIs,
// single-use codes, client ID metadata documents and audience-bound tokens.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startHearth, type Hearth } from "../harness.ts";

const b64url = (b: Uint8Array) => Buffer.from(b).toString("base64url");
function pkce() {
  const verifier = b64url(crypto.getRandomValues(new Uint8Array(32)));
  return { verifier, challenge: b64url(new Uint8Array(new Bun.CryptoHasher("sha256").update(verifier).digest())) };
}

let h: Hearth;
let session: { cookie: string; csrf: string };
/** A loopback server holding client ID metadata documents. */
let docs: ReturnType<typeof Bun.serve>;
const documents = new Map<string, unknown>();
const REDIRECT = "http://127.0.0.1:9/callback";

beforeAll(async () => {
  docs = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (req) => Response.json(documents.get(new URL(req.url).pathname) ?? {}, { status: documents.has(new URL(req.url).pathname) ? 200 : 404 }) });
  // Registration shares the sign-in attempt budget; these tests register many clients.
  h = await startHearth({ env: { HEARTH_OAUTH_LOOPBACK_CLIENTS: "on", HEARTH_RATE_SIGNIN: "0" } });
  await fetch(`${h.url}/signup`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username: "alice", password: "a long passphrase" }) });
  const res = await fetch(`${h.url}/signin`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username: "alice", password: "a long passphrase" }) });
  session = { cookie: res.headers.get("set-cookie")!.split(";")[0], csrf: (await res.json()).result.csrf };
});

afterAll(async () => {
  await h?.stop();
  docs?.stop(true);
});

async function register(body: unknown) {
  const res = await fetch(`${h.url}/oauth/register`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
}

function authorizeUrl(params: Record<string, string>, base = h.url) {
  return `${base}/oauth/authorize?${new URLSearchParams(params)}`;
}

/** Opens the consent page as the signed-in person, then posts its form back with the given decision. */
async function consent(params: Record<string, string>, o: { decision?: string; csrf?: string | null; scopes?: string[]; base?: string } = {}) {
  const page = await fetch(authorizeUrl(params, o.base), { headers: { cookie: session.cookie, accept: "text/html" }, redirect: "manual" });
  const form = new URLSearchParams({ ...params, decision: o.decision ?? "allow" });
  if (o.csrf !== null) form.set("csrf", o.csrf ?? session.csrf);
  for (const s of o.scopes ?? []) form.append("scopes", s);
  const res = await fetch(`${o.base ?? h.url}/oauth/authorize`, {
    method: "POST",
    headers: { cookie: session.cookie, "content-type": "application/x-www-form-urlencoded", origin: o.base ?? h.url },
    body: form,
    redirect: "manual",
  });
  return { page, res, location: res.headers.get("location") ? new URL(res.headers.get("location")!) : null };
}

async function token(params: Record<string, string>, base = h.url) {
  const res = await fetch(`${base}/oauth/token`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(params) });
  return { status: res.status, body: (await res.json()) as any, headers: res.headers };
}

async function newClient() {
  const r = await register({ client_name: "Probe", redirect_uris: [REDIRECT] });
  expect(r.status).toBe(201);
  return r.body.client_id as string;
}

describe("discovery", () => {
  test("protected resource metadata names /mcp and the instance as its authorization server", async () => {
    for (const [path, resource] of [
      ["/.well-known/oauth-protected-resource/mcp", `${h.url}/mcp`],
      ["/.well-known/oauth-protected-resource", h.url],
    ]) {
      const res = await fetch(h.url + path);
      expect(res.status).toBe(200);
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      const doc = (await res.json()) as any;
      expect(doc.resource).toBe(resource);
      expect(doc.authorization_servers).toEqual([h.url]);
      expect(doc.scopes_supported).toContain("notes");
    }
  });

  test("authorization server metadata offers the code grant with PKCE S256 only, registration and metadata documents", async () => {
    const doc = (await (await fetch(`${h.url}/.well-known/oauth-authorization-server`)).json()) as any;
    expect(doc.issuer).toBe(h.url);
    expect(doc.code_challenge_methods_supported).toEqual(["S256"]);
    expect(doc.response_types_supported).toEqual(["code"]);
    expect(doc.grant_types_supported).toEqual(["authorization_code", "refresh_token"]);
    expect(doc.registration_endpoint).toBe(`${h.url}/oauth/register`);
    expect(doc.client_id_metadata_document_supported).toBe(true);
  });

  test("every 401 says where the metadata is; one for a sent token also says the token is invalid and why", async () => {
    const none = await h.call("notes/list");
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toBe(`Bearer realm="hearth", resource_metadata="${h.url}/.well-known/oauth-protected-resource"`);
    const bad = await h.call("notes/list", {}, { token: "hth_not-a-token" });
    const challenge = bad.headers.get("www-authenticate")!;
    expect(challenge).toContain('error="invalid_token"');
    expect(challenge).toContain(`error_description="${bad.body.error.message}"`);
    const mcp = await fetch(`${h.url}/mcp`, { method: "POST", headers: { authorization: "Bearer hth_not-a-token", "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }) });
    expect(mcp.status).toBe(401);
    expect(mcp.headers.get("www-authenticate")).toContain(`resource_metadata="${h.url}/.well-known/oauth-protected-resource/mcp"`);
  });
});

describe("registration", () => {
  test("refuses redirect URIs that cannot safely receive a code, naming the field", async () => {
    for (const [body, error] of [
      [{ client_name: "x" }, "invalid_redirect_uri"],
      [{ redirect_uris: ["http://example.com/cb"] }, "invalid_redirect_uri"],
      [{ redirect_uris: ["javascript:alert(1)"] }, "invalid_redirect_uri"],
      [{ redirect_uris: ["https://example.com/cb#frag"] }, "invalid_redirect_uri"],
      [{ redirect_uris: ["ms-msdt:/id PCWDiagnostic /skip force"] }, "invalid_redirect_uri"],
      [{ redirect_uris: ["search-ms:query=x&crumb=location:\\\\evil.example\\share"] }, "invalid_redirect_uri"],
      [{ redirect_uris: ["ms-settings:privacy"] }, "invalid_redirect_uri"],
      [{ redirect_uris: ["ms-officecmd:open"] }, "invalid_redirect_uri"],
      [{ redirect_uris: ["mailto:someone@example.com"] }, "invalid_redirect_uri"],
      [{ redirect_uris: ["tel:+15551234567"] }, "invalid_redirect_uri"],
      [{ redirect_uris: ["x-apple.systempreferences:com.apple.preference"] }, "invalid_redirect_uri"],
      [{ redirect_uris: ["intent://scan/#Intent;scheme=zxing;end"] }, "invalid_redirect_uri"],
      [{ redirect_uris: ["https://example.com/cb"], grant_types: ["client_credentials"] }, "invalid_client_metadata"],
    ] as const) {
      const r = await register(body);
      expect(r.status).toBe(400);
      expect(r.body.error).toBe(error);
      expect(r.body.error_description).toMatch(/redirect_uris|grant_types/);
    }
  });

  test("a public client gets an id and no secret", async () => {
    const uris = ["https://app.example/cb", "myapp://cb", "com.example.desk:/oauth2redirect", "http://127.0.0.1:7777/cb", "http://[::1]/cb", "http://localhost/cb"];
    const r = await register({ client_name: "Desk app", redirect_uris: uris });
    expect(r.status).toBe(201);
    expect(r.body.client_secret).toBeUndefined();
    expect(r.body.token_endpoint_auth_method).toBe("none");
    expect(r.body.redirect_uris).toEqual(uris);
  });
});

describe("authorization", () => {
  test("an unknown client or a redirect URI not registered exactly is shown an error, never redirected", async () => {
    const id = await newClient();
    const { challenge } = pkce();
    for (const params of [
      { client_id: "hc_nobody", redirect_uri: REDIRECT },
      { client_id: id, redirect_uri: `${REDIRECT}/more` },
      { client_id: id, redirect_uri: "http://127.0.0.1:9/Callback" },
    ]) {
      const res = await fetch(authorizeUrl({ ...params, response_type: "code", code_challenge: challenge, code_challenge_method: "S256", state: "s" }), { headers: { cookie: session.cookie }, redirect: "manual" });
      expect(res.status).toBe(400);
      expect(res.headers.get("location")).toBeNull();
    }
  });

  test("PKCE is S256 only: plain or none is refused on the page as invalid_request, never redirected", async () => {
    const id = await newClient();
    const { verifier, challenge } = pkce();
    const cases: Record<string, string>[] = [{ code_challenge: verifier, code_challenge_method: "plain" }, { code_challenge: challenge }, {}];
    for (const extra of cases) {
      const res = await fetch(authorizeUrl({ client_id: id, redirect_uri: REDIRECT, response_type: "code", state: "st", ...extra }), { headers: { cookie: session.cookie }, redirect: "manual" });
      expect(res.status).toBe(400);
      expect(res.headers.get("location")).toBeNull();
      const text = await res.text();
      expect(text).toContain("invalid_request");
      expect(text).toContain("code_challenge");
    }
  });

  test("a resource that is not this instance is invalid_target, shown on the page", async () => {
    const id = await newClient();
    const { challenge } = pkce();
    const res = await fetch(
      authorizeUrl({ client_id: id, redirect_uri: REDIRECT, response_type: "code", code_challenge: challenge, code_challenge_method: "S256", resource: "https://elsewhere.example/mcp" }),
      { headers: { cookie: session.cookie }, redirect: "manual" },
    );
    expect(res.status).toBe(400);
    expect(res.headers.get("location")).toBeNull();
    expect(await res.text()).toContain("invalid_target");
  });

  test("an invalid request is never redirected to the client, signed in or not: the instance is no open redirector", async () => {
    const r = await register({ client_name: "Redirector", redirect_uris: ["https://evil.example/landing"] });
    expect(r.status).toBe(201);
    const { challenge } = pkce();
    const good = { client_id: r.body.client_id, redirect_uri: "https://evil.example/landing", response_type: "code", code_challenge: challenge, code_challenge_method: "S256", state: "s" };
    const faults: Record<string, string>[] = [{ response_type: "x" }, { response_type: "token" }, { code_challenge_method: "plain" }, { resource: "https://elsewhere.example/" }];
    for (const bad of faults) {
      for (const headers of [{}, { cookie: session.cookie }] as Record<string, string>[]) {
        const res = await fetch(authorizeUrl({ ...good, ...bad }), { headers, redirect: "manual" });
        expect({ bad, signedIn: !!headers.cookie, status: res.status, location: res.headers.get("location") }).toEqual({ bad, signedIn: !!headers.cookie, status: 400, location: null });
      }
    }
    // The same forged POST, with the session and its CSRF token, is shown the fault too.
    const posted = await consent({ ...good, response_type: "x" });
    expect(posted.res.status).toBe(400);
    expect(posted.location).toBeNull();
    // Refusing on the consent page is the person's answer, and that goes back to the client.
    const denied = await consent(good, { decision: "deny" });
    expect(denied.location!.origin).toBe("https://evil.example");
    expect(denied.location!.searchParams.get("error")).toBe("access_denied");
  });

  test("the consent page names the origin the answer goes to, and a client's name loses its bidi controls", async () => {
    const r = await register({ client_name: "Calendar\u202Epdf.exe\u2066 \u200Fhelper\u061C", redirect_uris: ["https://app.example:8443/cb", "com.example.app:/oauth"] });
    expect(r.status).toBe(201);
    expect(r.body.client_name).toBe("Calendarpdf.exe helper");
    const { challenge } = pkce();
    const ask = { client_id: r.body.client_id, response_type: "code", code_challenge: challenge, code_challenge_method: "S256" };
    const web = await (await fetch(authorizeUrl({ ...ask, redirect_uri: "https://app.example:8443/cb" }), { headers: { cookie: session.cookie } })).text();
    expect(web).toContain("you go back to <strong>https://app.example:8443</strong>");
    expect(web).toContain("Calendarpdf.exe helper");
    expect(web).not.toMatch(/[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/);
    const app = await (await fetch(authorizeUrl({ ...ask, redirect_uri: "com.example.app:/oauth" }), { headers: { cookie: session.cookie } })).text();
    expect(app).toContain("you go back to <strong>com.example.app: (an app on this device)</strong>");
  });

  test("the consent page cannot be framed, and its form needs the session's CSRF token", async () => {
    const id = await newClient();
    const { challenge } = pkce();
    const params = { client_id: id, redirect_uri: REDIRECT, response_type: "code", code_challenge: challenge, code_challenge_method: "S256", state: "st" };
    const { page, res, location } = await consent(params, { csrf: null });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(await page.text()).toContain("Probe");
    expect(res.status).toBe(403);
    expect(location).toBeNull();
    const denied = await consent(params, { decision: "deny" });
    expect(denied.location!.searchParams.get("error")).toBe("access_denied");
    expect(denied.location!.searchParams.get("state")).toBe("st");
  });
});

describe("token endpoint", () => {
  async function code(id: string, o: { base?: string; scopes?: string[] } = {}) {
    const { verifier, challenge } = pkce();
    const { location } = await consent({ client_id: id, redirect_uri: REDIRECT, response_type: "code", code_challenge: challenge, code_challenge_method: "S256", state: "st" }, o);
    return { verifier, code: location!.searchParams.get("code")! };
  }

  test("a wrong verifier, another redirect URI or another client is invalid_grant, as JSON", async () => {
    const id = await newClient();
    const other = await newClient();
    const c = await code(id);
    const base = { grant_type: "authorization_code", code: c.code, redirect_uri: REDIRECT, client_id: id, code_verifier: c.verifier };
    for (const wrong of [{ code_verifier: pkce().verifier }, { redirect_uri: `${REDIRECT}/x` }, { client_id: other }]) {
      const r = await token({ ...base, ...wrong });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe("invalid_grant");
      expect(r.headers.get("cache-control")).toBe("no-store");
    }
    const missing = await token({ grant_type: "authorization_code", code: c.code, redirect_uri: REDIRECT, client_id: id });
    expect(missing.body).toEqual({ error: "invalid_request", error_description: expect.stringContaining("code_verifier") });
    expect((await token({ grant_type: "password", client_id: id })).body.error).toBe("unsupported_grant_type");
    expect((await token({ ...base, resource: "https://elsewhere.example/" })).body.error).toBe("invalid_target");
  });

  test("a code works once; used again, the tokens it gave are revoked", async () => {
    const id = await newClient();
    const c = await code(id, { scopes: ["notes"] });
    const params = { grant_type: "authorization_code", code: c.code, redirect_uri: REDIRECT, client_id: id, code_verifier: c.verifier, resource: `${h.url}/mcp` };
    const first = await token(params);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ token_type: "Bearer", scope: "notes", expires_in: 3600 });
    expect((await h.call("notes/list", {}, { token: first.body.access_token })).status).toBe(200);
    const second = await token(params);
    expect(second.body.error).toBe("invalid_grant");
    expect((await h.call("notes/list", {}, { token: first.body.access_token })).status).toBe(401);
  });

  test("a token is bound to the instance it was issued for", async () => {
    const id = await newClient();
    const c = await code(id);
    const t = await token({ grant_type: "authorization_code", code: c.code, redirect_uri: REDIRECT, client_id: id, code_verifier: c.verifier });
    expect((await h.call("notes/list", {}, { token: t.body.access_token })).status).toBe(200);
    // The same server reached under another name is another resource.
    const elsewhere = await fetch(`${h.url.replace("127.0.0.1", "localhost")}/api/v1/notes/list`, { headers: { authorization: `Bearer ${t.body.access_token}` } });
    expect(elsewhere.status).toBe(401);
    expect(((await elsewhere.json()) as any).error.message).toContain(`issued for ${h.url}`);
  });
});

describe("client ID metadata documents", () => {
  test("a client named by its document's URL is shown by its name and gets a code at a redirect URI the document lists", async () => {
    const url = `http://127.0.0.1:${docs.port}/client.json`;
    documents.set("/client.json", { client_id: url, client_name: "Document client", redirect_uris: [REDIRECT] });
    const { verifier, challenge } = pkce();
    const params = { client_id: url, redirect_uri: REDIRECT, response_type: "code", code_challenge: challenge, code_challenge_method: "S256", state: "st" };
    const { page, location } = await consent(params);
    expect(await page.text()).toContain("Document client");
    const t = await token({ grant_type: "authorization_code", code: location!.searchParams.get("code")!, redirect_uri: REDIRECT, client_id: url, code_verifier: verifier });
    expect(t.status).toBe(200);
    expect((await h.call("notes/list", {}, { token: t.body.access_token })).status).toBe(200);
  });

  test("a document that names another client_id, or lacks the redirect URI, is refused on the page", async () => {
    const url = `http://127.0.0.1:${docs.port}/liar.json`;
    documents.set("/liar.json", { client_id: "https://someone.else/client.json", redirect_uris: [REDIRECT] });
    const { challenge } = pkce();
    const base = { redirect_uri: REDIRECT, response_type: "code", code_challenge: challenge, code_challenge_method: "S256" };
    const liar = await fetch(authorizeUrl({ client_id: url, ...base }), { headers: { cookie: session.cookie }, redirect: "manual" });
    expect(liar.status).toBe(400);
    expect(await liar.text()).toContain("names client_id");
    const other = `http://127.0.0.1:${docs.port}/other.json`;
    documents.set("/other.json", { client_id: other, redirect_uris: ["https://app.example/cb"] });
    const wrongUri = await fetch(authorizeUrl({ client_id: other, ...base }), { headers: { cookie: session.cookie }, redirect: "manual" });
    expect(wrongUri.status).toBe(400);
    expect(wrongUri.headers.get("location")).toBeNull();
  });
});

test("malformed requests are refused with 4xx naming what is wrong, never a 500", async () => {
  const cases: [string, RequestInit, number, string][] = [
    ["/oauth/token", { method: "POST", headers: { "content-type": "application/json" }, body: "[1,2]" }, 400, "JSON object"],
    ["/oauth/token", { method: "POST", headers: { authorization: "Basic JTpiYWQ=" }, body: "grant_type=authorization_code" }, 400, "client_id"],
    ["/oauth/token", { method: "POST", body: "grant_type=authorization_code&client_id=x&code=y&resource=::::" }, 400, "resource"],
    ["/oauth/register", { method: "POST", headers: { "content-type": "application/json" }, body: '{"redirect_uris":[1]}' }, 400, "redirect_uris"],
    ["/oauth/register", { method: "POST", headers: { "content-type": "application/json" }, body: '{"redirect_uris":["https://a.example/b"],"client_name":{"x":1}}' }, 400, "client_name"],
    ["/oauth/authorize?client_id=http://[::1/x", { method: "GET" }, 400, "client_id"],
    ["/oauth/authorize?client_id=a&client_id=b", { method: "GET" }, 400, "client_id"],
  ];
  for (const [path, init, status, names] of cases) {
    const res = await fetch(h.url + path, { redirect: "manual", ...init });
    expect({ path, status: res.status }).toEqual({ path, status });
    expect(await res.text()).toContain(names);
  }
});

test("without the loopback setting, a client document on this machine is not fetched", async () => {
  const strict = await startHearth();
  try {
    const url = `http://127.0.0.1:${docs.port}/client.json`;
    const res = await fetch(`${strict.url}/oauth/authorize?${new URLSearchParams({ client_id: url, redirect_uri: REDIRECT, response_type: "code", code_challenge: pkce().challenge, code_challenge_method: "S256" })}`, { redirect: "manual" });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("must be https");
  } finally {
    await strict.stop();
  }
});
