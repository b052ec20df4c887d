// An instance whose mail leaves over loopback SMTP and whose owner, alice,
// holds some of a token's calls for approval: what the approval tests (in
// either MCP era, by elicitation, in the answer, or as a task) start from,
// and the owner's side of them (what waits on /approvals, her answer).
import { expect } from "bun:test";
import type { Browser, BrowserContext } from "playwright-core";
import type { Clock } from "../../core/plugin.ts";
import { signUp, type Signed } from "../auth/people.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { startSink } from "../mail/sink.ts";

export interface Held {
  h: Hearth;
  relay: Awaited<ReturnType<typeof startSink>>;
  /** The settings it was started with (mail relay, approvals' time), for a `hearth` process on the same instance. */
  env: Record<string, string>;
  /** alice, signed in: the owner. */
  s: Signed;
  /** A POST with alice's session and its CSRF token, as her pages send it. */
  post(path: string, body: unknown): Promise<{ status: number; body: any }>;
  /** A token of alice's named `name`, whose calls sending outside the instance ask her first. */
  asking(name: string): Promise<string>;
  /** What the ledger charged, in order: [method, credits]. */
  charged(): Promise<[string, number][]>;
  /** The request waiting on /approvals whose arguments name `to`, once the call has made it. */
  waitingFor(to: string): Promise<any>;
  /** alice's answer through the API, as the approvals page posts it. */
  decide(id: string, decision: "approve" | "decline"): Promise<void>;
  /** A new instance on the same data folder (a restart); the sink stays. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts it: alice signed up with 100 credits. `approvalSeconds` is how long
 * a request waits; `clock` and `dataDir` as startHearth takes them.
 */
export async function startHeld(o: { approvalSeconds: number; clock?: Clock; dataDir?: string }): Promise<Held> {
  const relay = await startSink();
  const env: Record<string, string> = {
    HEARTH_SIGNUP: "open",
    HEARTH_METER_ACCOUNTS: "all",
    MAIL_DOMAIN: "example.test",
    SMTP_PORT: "off",
    SMTP_RELAY_URL: `smtp://127.0.0.1:${relay.port}`,
    HEARTH_APPROVAL_SECONDS: String(o.approvalSeconds),
  };
  const start = () => startHearth({ env, clock: o.clock, dataDir: o.dataDir });
  const held = { relay, env } as Held;
  held.h = await start();
  held.s = await signUp(held.h, "alice");
  await held.h.grant("alice", 100);
  held.post = async (path, body) => {
    const res = await fetch(held.h.url + path, { method: "POST", headers: { "content-type": "application/json", cookie: held.s.cookie, "x-csrf-token": held.s.csrf }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as any };
  };
  held.asking = async (name) => (await held.post("/token", { name, policy: { classes: { outbound: "ask" } } })).body.result.token;
  held.charged = async () =>
    (await held.h.rows<{ method: string; delta: number }>("SELECT method, delta FROM pay_ledger WHERE reason = 'charge' ORDER BY id")).map((r) => [r.method, Number(r.delta)]);
  held.waitingFor = async (to) => {
    for (;;) {
      const waiting = ((await (await fetch(`${held.h.url}/approvals`, { headers: { cookie: held.s.cookie } })).json()) as any).result.waiting as any[];
      const found = waiting.find((w) => w.args.includes(to));
      if (found) return found;
      await Bun.sleep(20);
    }
  };
  held.decide = async (id, decision) => {
    const r = await held.post("/approvals/decide", { id, decision });
    expect(r.status).toBe(200);
  };
  held.restart = async () => {
    await held.h.stop();
    held.h = await start();
  };
  held.stop = async () => {
    await held.h.stop();
    await relay.stop();
  };
  return held;
}

/**
 * One 2026-07-28 request by hand, as the spec's examples write it: its
 * version, method and name in headers, the envelope in `_meta`. The answer's
 * JSON-RPC body, its HTTP status checked to be `status`.
 */
export async function modernWire(base: string, bearer: string, method: string, params: Record<string, unknown>, capabilities: Record<string, unknown>, status = 200) {
  const res = await fetch(`${base}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${bearer}`,
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": method,
      "mcp-name": String(params.name ?? params.taskId),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: crypto.randomUUID(),
      method,
      params: {
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientInfo": { name: "wire-test", version: "1.0.0" },
          "io.modelcontextprotocol/clientCapabilities": capabilities,
        },
      },
    }),
  });
  const body = (await res.json()) as any;
  expect({ status: res.status, body }).toMatchObject({ status });
  return body;
}

/** A browser context signed in with the session's cookie: what the owner's pages are opened in. */
export async function signedIn(browser: Browser, base: string, cookie: string, o: { colorScheme?: "light" | "dark"; size?: { width: number; height: number }; bypassCSP?: boolean } = {}): Promise<BrowserContext> {
  const ctx = await browser.newContext({ colorScheme: o.colorScheme ?? "light", viewport: o.size ?? { width: 1280, height: 900 }, bypassCSP: o.bypassCSP });
  const [name, value] = cookie.split("=");
  await ctx.addCookies([{ name, value, url: base }]);
  return ctx;
}
