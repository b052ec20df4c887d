// one store: HTTP and MCP answering alike, over the registry; each method runs on both stores in its own service's tests, and charges in test/pay and test/hardening/accounting.test.ts
// Parity over the whole registry: every method, called over HTTP and over MCP
// with the same arguments as the same caller, gives the same answer, the same
// refusal and the same charge. It reads the registry, so it keeps holding as
// plugins land.
//
// Writes change state, so each route gets its own instance, started alike and
// called in lockstep: A over HTTP, B over MCP. A third instance C, also over
// HTTP, tells which methods are deterministic: where A and C agree, B must
// agree to the letter; where they differ (fresh ids, the wall clock), B must
// still succeed or refuse as A did.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildRegistry, type MethodEntry } from "../../core/registry.ts";
import { allProviders } from "../../core/upstream/providers.ts";
import { unauthenticated } from "../../core/errors.ts";
import type { Runtime } from "../../core/runtime.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { minimalArgs } from "./args.ts";
import { mcpClient } from "./client.ts";

type Client = Awaited<ReturnType<typeof mcpClient>>;
interface Instance {
  h: Hearth;
  charged: Map<string, number>;
  tokens: Record<string, string | undefined>;
}

let A: Instance, B: Instance, C: Instance;
const clients: Record<string, Client> = {};
let entries: MethodEntry[];
let scopedTo: string;
let proxy: ReturnType<typeof Bun.serve> | undefined;
const PROXY_VARS = ["HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"] as const;
const saved: Record<string, string | undefined> = {};

/** Records what dispatch charges, passing every step through to whatever metering the instance has. */
function recordCharges(rt: Runtime): Map<string, number> {
  const charged = new Map<string, number>();
  const inner = rt.metering;
  rt.metering = {
    price: inner?.price ? (e, a, c) => inner.price!(e, a, c) : undefined,
    async before(s) {
      if (!inner && !s.caller.account) throw unauthenticated(`${s.entry.path} costs ${s.price} credit(s) per call: send a token`);
      return { inner: inner ? await inner.before(s) : null, path: s.entry.path, price: s.price };
    },
    async commit(call) {
      const p = call.plan as { inner: unknown; path: string; price: number };
      if (inner?.commit) await inner.commit({ ...call, plan: p.inner });
      charged.set(p.path, (charged.get(p.path) ?? 0) + p.price);
    },
    release(call) {
      inner?.release?.({ ...call, plan: (call.plan as { inner: unknown }).inner });
    },
  };
  return charged;
}

/** Credits for the account, where the instance keeps a ledger, so priced calls are charged rather than refused. */
async function fund(h: Hearth, username: string) {
  const ledger = "../../core/pay/grant.ts";
  const mod = (await import(ledger).catch(() => null)) as { grantCredits?: (db: unknown, i: Record<string, unknown>) => unknown } | null;
  if (!mod?.grantCredits) return;
  await h.rt.store.write(() => mod.grantCredits!(h.rt.store.wdb, { username, amount: 10_000, by: "test", at: h.rt.clock.now().getTime() }));
}

async function instance(env: Record<string, string>): Promise<Instance> {
  const h = await startHearth({ env, clock: new TestClock() });
  const charged = recordCharges(h.rt);
  const tokens = { alice: await h.token("alice"), stranger: undefined, scoped: await h.token("alice", { scopes: [scopedTo] }) };
  await fund(h, "alice");
  return { h, charged, tokens };
}

beforeAll(async () => {
  const dropins = join(import.meta.dir, "plugins");
  const reg = await buildRegistry({ pluginsDir: join(import.meta.dir, "..", "..", "plugins"), extra: dropins });
  entries = reg.list();
  scopedTo = reg.services().includes("notes") ? "notes" : reg.services()[0];
  // Every provider points at a closed loopback port: no test reaches the internet, and each fails fast and alike.
  const env: Record<string, string> = {
    HEARTH_PLUGINS: dropins,
    HEARTH_PUBLIC_URL: "http://hearth.test",
    HEARTH_RATE_READS: "0",
    HEARTH_RATE_WRITES: "0",
    HEARTH_RATE_PRICED: "0",
    UPSTREAM_RETRY_MS: "0",
  };
  for (const p of allProviders()) {
    env[`${p.name}_URL`] = "http://127.0.0.1:9";
    env[`${p.name}_TIMEOUT_MS`] = "2000";
  }
  for (const p of reg.plugins.values())
    for (const [k, s] of Object.entries(p.def.config ?? {})) if (/^https?:\/\//.test(s.default)) env[k] = "http://127.0.0.1:9";
  // Feeds are a list in a file rather than a provider: one feed, at the same closed port.
  const feeds = join(mkdtempSync(join(tmpdir(), "hearth-parity-")), "feeds.json");
  writeFileSync(feeds, JSON.stringify({ feeds: [{ topic: "world", name: "Closed", url: "http://127.0.0.1:9/feed.xml" }] }));
  env.NEWS_FEEDS_FILE = feeds;
  // Accounts are charged, so the same charge over both surfaces is something to compare.
  env.HEARTH_METER_ACCOUNTS = "all";
  // Whatever a method might still reach outside goes to a proxy here that answers nothing, so it fails at once.
  proxy = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("no network in tests", { status: 502 }) });
  for (const k of PROXY_VARS) saved[k] = process.env[k];
  process.env.HTTP_PROXY = process.env.HTTPS_PROXY = `http://127.0.0.1:${proxy.port}`;
  process.env.NO_PROXY = "127.0.0.1,localhost";
  [A, B, C] = await Promise.all([instance(env), instance(env), instance(env)]);
  for (const who of ["alice", "stranger", "scoped"]) clients[who] = await mcpClient(B.h.url, { token: B.tokens[who] });
});

afterAll(async () => {
  for (const k of PROXY_VARS)
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  proxy?.stop(true);
  for (const c of Object.values(clients)) await c.close();
  await Promise.all([A, B, C].filter(Boolean).map((i) => i.h.stop()));
});

/** Ids, tokens and folders differ between instances by design; everything else must not. */
function normalize(v: unknown, dirs: string[]): unknown {
  let s = JSON.stringify(v ?? null);
  for (const d of dirs) s = s.split(d).join("<dir>");
  s = s.replace(/hth_[A-Za-z0-9_-]{20,}/g, "<token>").replace(/\b[0-9a-hjkmnp-tv-z]{16}\b/g, "<id>");
  const out = JSON.parse(s);
  if (out?.error) delete out.error.request_id;
  return out;
}

const http = (i: Instance, e: MethodEntry, args: Record<string, unknown>, who: string) =>
  i.h.call(e.path, structuredClone(args), { token: i.tokens[who], method: "POST" });

test("every method answers alike over HTTP and MCP, for an account, a stranger and a scoped token", async () => {
  const dirs = [A.h.dir, B.h.dir, C.h.dir];
  const seen = { same: 0, nondeterministic: [] as string[], succeeded: 0, refused: new Set<string>() };
  for (const who of ["alice", "stranger", "scoped"]) {
    for (const e of entries) {
      const args = minimalArgs(e.def.args);
      const a = await http(A, e, args, who);
      const b = await clients[who].call(e.tool, structuredClone(args));
      const c = await http(C, e, args, who);
      const where = `${e.tool} as ${who} with ${JSON.stringify(args)}`;

      const aBody = normalize(a.body, dirs) as { result?: unknown; error?: { status: number; kind: string } };
      const bBody = normalize(b.structuredContent, dirs) as typeof aBody;
      const cBody = normalize(c.body, dirs);
      // The text block is the structured content, serialised (a payment challenge has the x402 transport's own text).
      if (bBody.error?.kind !== "payment_required") expect(JSON.parse((b.content as { text: string }[])[0].text), where).toEqual(b.structuredContent);
      expect(b.isError === true, where).toBe(a.status !== 200);
      if (a.status === 200) seen.succeeded++;
      else {
        expect(bBody.error?.status, where).toBe(a.status);
        expect(bBody.error?.kind, where).toBe(aBody.error?.kind);
        seen.refused.add(aBody.error!.kind);
      }
      if (Bun.deepEquals(aBody, cBody)) {
        // A refusal's structured content may carry more beside HTTP's "error" (an x402 challenge); the error itself is HTTP's.
        if (a.status === 200) expect(bBody, where).toEqual(aBody);
        else expect(bBody.error, where).toEqual(aBody.error);
        seen.same++;
      } else seen.nondeterministic.push(where);
    }
  }
  for (const e of entries) expect(B.charged.get(e.path) ?? 0, `credits charged for ${e.path}`).toBe(A.charged.get(e.path) ?? 0);
  // The drop-in's priced methods were charged at all, so the line above compared something.
  expect(A.charged.get("tally/echo")).toBeGreaterThan(0);
  expect(A.charged.get("tally/spend")).toBeGreaterThan(0);

  // The comparison must have had something to compare: successes, refusals, and exact answers.
  expect(seen.succeeded).toBeGreaterThan(0);
  expect(seen.refused).toContain("unauthenticated");
  expect(seen.refused).toContain("forbidden");
  expect(seen.same).toBeGreaterThan(entries.length);
  if (seen.nondeterministic.length)
    console.log(`compared by outcome only (answers differ between two HTTP instances):\n  ${seen.nondeterministic.join("\n  ")}`);
});
