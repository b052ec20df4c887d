// one store: the browser's CORS checks; priced calls run on both stores in test/pay
// A web page on another origin (another loopback port) calling the instance
// in Chromium: a public method, a token call, a priced call it could pay for,
// and MCP all pass the browser's CORS checks; the instance's session cookie,
// which the browser sends along, identifies no one from there.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { startSession } from "../../core/auth/sessions.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { launchChromium, chromiumPresent } from "../browser.ts";
import { CHROMIUM } from "../prepare.ts";

const present = chromiumPresent;
if (!present) console.log(`skipping the browser test: ${CHROMIUM} is missing (bun test/prepare.ts installs it as root)`);

let h: Hearth;
let browser: Browser;
let elsewhere: ReturnType<typeof Bun.serve>;
const lines: Record<string, unknown>[] = [];
const logger = { info: () => {}, warn: () => {}, error: () => {}, line: (d: Record<string, unknown>) => lines.push(d) };

beforeAll(async () => {
  if (!present) return;
  h = await startHearth({
    logger,
    env: {
      HEARTH_PLUGINS: `${import.meta.dir}/plugins`,
      X402_PAY_TO: "0x2222222222222222222222222222222222222222",
      X402_NETWORK: "eip155:84532",
      X402_ASSET: "0x3333333333333333333333333333333333333333",
    },
  });
  elsewhere = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("<!doctype html><title>elsewhere</title><p>another site", { headers: { "content-type": "text/html" } }) });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  elsewhere?.stop(true);
  await h?.stop();
});

test.skipIf(!present)(
  "a page on another origin calls public methods, with a token, for payment and over MCP, but not with the cookie",
  async () => {
    const token = await h.token("alice");
    await h.call("notes/add", { title: "Mine", text: "only for alice" }, { token });
    const account = (await h.rt.tokens.identify(token, h.rt.clock.now().getTime())).account!;
    const { cookie } = await startSession(h.rt, new Request(h.url), account);
    const context = await browser.newContext();
    // Signed in on the instance: the browser holds its session cookie, and sends it to any port of 127.0.0.1.
    await context.addCookies([{ name: "hearth_session", value: cookie.split(";")[0].split("=")[1], url: h.url }]);
    const page = await context.newPage();
    const other = `http://127.0.0.1:${elsewhere.port}`;
    await page.goto(other);
    expect(new URL(page.url()).origin).not.toBe(new URL(h.url).origin);

    const seen = await page.evaluate(
      async ([base, token]) => {
        const out: Record<string, unknown> = {};
        const attempt = async (name: string, go: () => Promise<unknown>) => {
          try {
            out[name] = await go();
          } catch (e) {
            out[name] = `threw ${(e as Error).name}`;
          }
        };
        await attempt("public", async () => {
          const r = await fetch(`${base}/api/v1/meter/free`);
          return { status: r.status, body: await r.json(), rid: r.headers.get("x-request-id") };
        });
        await attempt("token", async () => {
          const r = await fetch(`${base}/api/v1/notes/get?title=Mine`, { headers: { authorization: `Bearer ${token}` } });
          return { status: r.status, body: await r.json() };
        });
        await attempt("write", async () => {
          const r = await fetch(`${base}/api/v1/notes/add`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify({ title: "From elsewhere", text: "by token" }) });
          return { status: r.status };
        });
        await attempt("priced", async () => {
          const r = await fetch(`${base}/api/v1/meter/echo?text=hi`);
          return { status: r.status, challenge: r.headers.get("payment-required"), body: await r.json() };
        });
        await attempt("payment", async () => {
          const r = await fetch(`${base}/api/v1/meter/echo?text=hi`, { headers: { "PAYMENT-SIGNATURE": "not-a-payment", "Access-Control-Expose-Headers": "PAYMENT-RESPONSE" } });
          return { status: r.status, body: await r.json() };
        });
        await attempt("mcp", async () => {
          const headers = { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` };
          const init = await fetch(`${base}/mcp`, {
            method: "POST",
            headers,
            body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "page", version: "1" } } }),
          });
          const session = init.headers.get("mcp-session-id");
          await init.text();
          const call = await fetch(`${base}/mcp`, {
            method: "POST",
            headers: { ...headers, "mcp-session-id": session ?? "", "mcp-protocol-version": "2025-06-18" },
            body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "notes_get", arguments: { title: "Mine" } } }),
          });
          return { session, status: call.status, text: await call.text() };
        });
        // The browser sends the cookie with credentials: "include"; the answer allows no credentials, so it cannot be read here.
        await attempt("cookie", async () => {
          const r = await fetch(`${base}/api/v1/notes/get?title=Mine`, { credentials: "include" });
          return { status: r.status };
        });
        return out;
      },
      [h.url, token] as const,
    );

    expect(seen.public).toMatchObject({ status: 200, body: { result: { ok: true } } });
    expect((seen.public as { rid: string | null }).rid).toBeString();
    expect(seen.token).toMatchObject({ status: 200, body: { result: { title: "Mine", text: "only for alice" } } });
    expect(seen.write).toEqual({ status: 200 });
    const priced = seen.priced as { status: number; challenge: string | null; body: { x402Version: number; error: { kind: string } } };
    expect(priced.status).toBe(402);
    expect(priced.challenge).toBeString();
    expect(priced.body.x402Version).toBe(1);
    expect(priced.body.error.kind).toBe("payment_required");
    expect(seen.payment).toMatchObject({ status: 400, body: { error: { field: "PAYMENT-SIGNATURE" } } });
    const mcp = seen.mcp as { session: string | null; status: number; text: string };
    expect(mcp.session).toBeString();
    expect(mcp.status).toBe(200);
    expect(mcp.text).toContain("only for alice");
    expect(seen.cookie).toBe("threw TypeError");

    // The request reached the instance with the cookie, and the cookie identified no one.
    const reads = lines.filter((l) => l.service === "notes" && l.method === "get" && l.via === undefined);
    expect(reads.map((l) => [l.status, l.caller])).toEqual([
      [200, account.id],
      [401, null],
    ]);

    // The same cookie from the instance's own pages is the person.
    await page.goto(`${h.url}/status`);
    const own = await page.evaluate(async () => {
      const r = await fetch("/api/v1/notes/get?title=Mine");
      return { status: r.status, body: await r.json() };
    });
    expect(own).toMatchObject({ status: 200, body: { result: { text: "only for alice" } } });
    await context.close();
  },
);
