// one store: an MCP client's OAuth sign-in; the authorization server's clients, codes and tokens run on both stores in test/auth/oauth.test.ts
// An MCP client that signs in with OAuth, as remote connectors do: the SDK's
// own auth() from a cold start (protected resource metadata, authorization
// server metadata, dynamic registration), the person's consent given in a
// real browser, tools called with the token, an expired access token
// refreshed by the SDK, and the grant disconnected on /token.
import "./patient.ts";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { auth, UnauthorizedError, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Browser, Page } from "playwright-core";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { launchChromium } from "../browser.ts";
import { CHROMIUM } from "../prepare.ts";

const present = existsSync(CHROMIUM);
if (!present) console.log(`skipping the OAuth browser test: ${CHROMIUM} is missing (bun test/prepare.ts installs it as root)`);

/** The client's side of the redirect: a loopback page that keeps what the authorization server sent back. */
function callbackServer() {
  const seen: URLSearchParams[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      // The browser also asks for a favicon here; only the redirect counts.
      const url = new URL(req.url);
      if (url.pathname === "/callback") seen.push(url.searchParams);
      return new Response("You can close this window.", { headers: { "content-type": "text/plain" } });
    },
  });
  return { url: `http://127.0.0.1:${server.port}/callback`, seen, stop: () => server.stop(true) };
}

/** The SDK's OAuthClientProvider, keeping everything in memory as a desktop client keeps it on disk. */
class MemoryProvider implements OAuthClientProvider {
  info?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = "";
  authorizationUrl?: URL;
  constructor(readonly redirectUrl: string) {}
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: "Test connector", redirect_uris: [this.redirectUrl], grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "none" };
  }
  state() {
    return "state-from-the-client";
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

let h: Hearth;
let browser: Browser;
let page: Page;
let cb: ReturnType<typeof callbackServer>;
const clock = new TestClock();
const provider = () => new MemoryProvider(cb.url);
let p: MemoryProvider;
/** Every answer the SDK's transport received, to see what a 401 said. */
const answers: Response[] = [];
/** Where a connector that signs in is pointed: strangers there are asked to sign in. */
const MCP = () => new URL(`${h.url}/mcp?signin`);
let client: Client;

const recording: typeof fetch = Object.assign(
  async (input: string | URL | Request, init?: RequestInit) => {
    const res = await fetch(input, init);
    answers.push(res.clone());
    return res;
  },
  { preconnect: fetch.preconnect },
);

async function connect() {
  const transport = new StreamableHTTPClientTransport(MCP(), { authProvider: p, fetch: recording });
  const c = new Client({ name: "oauth-test", version: "1.0.0" });
  await c.connect(transport);
  return c;
}

const call = (name: string, args: Record<string, unknown> = {}) => client.callTool({ name, arguments: args }) as Promise<CallToolResult>;

beforeAll(async () => {
  if (!present) return;
  // Access tokens last five minutes here, so one expires well inside an MCP session.
  h = await startHearth({ clock, env: { HEARTH_OAUTH_ACCESS_MINUTES: "5" } });
  cb = callbackServer();
  browser = await launchChromium();
  page = await browser.newPage();
  // The person has an account with a password, as one made on /signup.
  const res = await fetch(`${h.url}/signup`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username: "alice", password: "a long passphrase" }) });
  expect(res.status).toBe(200);
});

afterAll(async () => {
  await client?.close().catch(() => {});
  await browser?.close();
  cb?.stop();
  await h?.stop();
});

test.skipIf(!present)(
  "the SDK discovers, registers, gets consent in the browser, and calls tools with its token",
  async () => {
    p = provider();
    // Cold start: the transport meets a 401, and the SDK discovers, registers and asks for consent.
    const transport = new StreamableHTTPClientTransport(MCP(), { authProvider: p, fetch: recording });
    await expect(new Client({ name: "oauth-test", version: "1.0.0" }).connect(transport)).rejects.toThrow(UnauthorizedError);
    const first = answers[0];
    expect(first.status).toBe(401);
    expect(first.headers.get("www-authenticate")).toBe(`Bearer realm="hearth", resource_metadata="${h.url}/.well-known/oauth-protected-resource/mcp"`);
    const asked = answers.map((r) => new URL(r.url).pathname);
    expect(asked).toContain("/.well-known/oauth-protected-resource/mcp");
    expect(asked).toContain("/.well-known/oauth-authorization-server");
    expect(asked).toContain("/oauth/register");
    // Dynamic registration happened: the client has an id issued here and no secret.
    expect(p.info?.client_id).toStartWith("hc_");
    const authUrl = p.authorizationUrl!;
    expect(authUrl.origin + authUrl.pathname).toBe(`${h.url}/oauth/authorize`);
    expect(authUrl.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authUrl.searchParams.get("resource")).toBe(`${h.url}/mcp`);

    // The person signs in, then sees the consent page and allows notes only.
    await page.goto(authUrl.href);
    expect(new URL(page.url()).pathname).toBe("/signin");
    await page.getByLabel("Username").fill("alice");
    await page.getByLabel("Password").fill("a long passphrase");
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.waitForURL((u) => u.pathname === "/oauth/authorize");
    expect(await page.locator("main").textContent()).toContain("Test connector asks to use this instance as alice");
    await page.getByLabel("Only the services ticked here:").check();
    for (const box of await page.getByRole("checkbox", { checked: true }).all()) await box.uncheck();
    await page.getByRole("checkbox", { name: "notes", exact: true }).check();
    // A new app asks before it overwrites; this person lets it add and rewrite notes freely.
    expect(await page.getByLabel("Removing or overwriting").inputValue()).toBe("ask");
    await page.getByLabel("Removing or overwriting").selectOption("allow");
    await page.getByRole("button", { name: "Allow" }).click();
    await page.waitForURL((u) => u.href.startsWith(cb.url));

    const back = cb.seen.at(-1)!;
    expect(back.get("state")).toBe("state-from-the-client");
    expect(back.get("iss")).toBe(h.url);
    await transport.finishAuth(back.get("code")!);
    expect(p.saved?.refresh_token).toBeTruthy();
    expect(p.saved?.scope).toBe("notes");

    client = await connect();
    const added = await call("notes_add", { title: "over oauth", text: "signed in by a connector" });
    expect(added.isError).toBeFalsy();
    const read = await call("notes_get", { title: "over oauth" });
    expect(JSON.stringify(read.structuredContent ?? read.content)).toContain("signed in by a connector");
    // The grant holds only what the person allowed.
    const outside = await call("tasks_list");
    expect(outside.isError).toBe(true);
    expect(JSON.stringify(outside.content)).toContain("scope does not include");
  },
);

test.skipIf(!present)(
  "an expired access token is refreshed by the SDK, and refresh tokens rotate",
  async () => {
    const first = p.saved!;
    clock.advance(6 * 60_000);
    answers.length = 0;
    const read = await call("notes_get", { title: "over oauth" });
    expect(read.isError).toBeFalsy();
    // The server said the token had expired, and the SDK renewed it.
    const refused = answers.find((r) => r.status === 401)!;
    expect(refused.headers.get("www-authenticate")).toContain('error="invalid_token"');
    expect(p.saved!.access_token).not.toBe(first.access_token);
    expect(p.saved!.refresh_token).not.toBe(first.refresh_token);
    // The expired token it replaced is gone, so renewals do not pile up rows.
    expect((await h.row<{ n: number }>("SELECT COUNT(*) AS n FROM oauth_access"))!.n).toBe(1);

    // The used refresh token is spent: presented again, it is refused.
    const again = await fetch(`${h.url}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: first.refresh_token!, client_id: p.info!.client_id }),
    });
    expect(again.status).toBe(400);
    expect((await again.json()).error).toBe("invalid_grant");
    // A replayed refresh token means someone else holds one: the whole grant is withdrawn, current token included.
    const after = await h.call("notes/get", { title: "over oauth" }, { token: p.saved!.access_token });
    expect(after.status).toBe(401);
  },
);

test.skipIf(!present)(
  "a grant shows on /token, and disconnecting it there makes the next call a 401 naming the resource metadata",
  async () => {
    // Replaying a spent refresh token revoked the grant; connect once more to have a live one.
    p = provider();
    expect(await auth(p, { serverUrl: MCP() })).toBe("REDIRECT");
    await page.goto(p.authorizationUrl!.href);
    await page.getByRole("button", { name: "Allow" }).click();
    await page.waitForURL((u) => u.href.startsWith(cb.url));
    expect(await auth(p, { serverUrl: MCP(), authorizationCode: cb.seen.at(-1)!.get("code")! })).toBe("AUTHORIZED");
    await client.close();
    client = await connect();
    expect((await call("tasks_list")).isError).toBeFalsy();

    await page.goto(`${h.url}/token`);
    const row = page.getByRole("row").filter({ hasText: "Test connector" });
    await expect(row.count()).resolves.toBe(1);
    expect(await row.textContent()).toContain("All services");
    await page.getByRole("button", { name: "Disconnect Test connector" }).click();
    await page.waitForURL(`${h.url}/token?done=disconnected`);
    await expect(page.getByRole("row").filter({ hasText: "Test connector" }).count()).resolves.toBe(0);

    answers.length = 0;
    await expect(call("tasks_list")).rejects.toThrow();
    const refused = answers.find((r) => r.status === 401 && new URL(r.url).pathname === "/mcp")!;
    const challenge = refused.headers.get("www-authenticate")!;
    expect(challenge).toContain(`resource_metadata="${h.url}/.well-known/oauth-protected-resource/mcp"`);
    expect(challenge).toContain('error="invalid_token"');
    // Its refresh token died with it, so the SDK could not renew its way back in.
    expect(answers.some((r) => r.url.endsWith("/oauth/token") && r.status === 400)).toBe(true);
  },
);
