// Policies per credential and the approvals they ask for. Dispatch consults
// the policy of every call made with a token (core/policy/gate.ts); the owner
// edits policies on /token (and an OAuth client's at consent), and answers
// what waits on /approvals. Like /token, these pages are the account's own
// session's: no credential can edit its own policy or approve its own call.
import { listGrants } from "../auth/oauth/grants.ts";
import { CSRF_HEADER, findSession, requireCsrf, type Session } from "../auth/sessions.ts";
import { listTokens } from "../auth/tokens.ts";
import { asHearthError, invalid, notFound, unauthenticated } from "../errors.ts";
import { route } from "../http/app.ts";
import { readPosted, type Posted } from "../http/pages/form.ts";
import { html, message, page, seeOther, wantsHtml } from "../http/pages/layout.ts";
import { errorResponse, jsonResponse } from "../http/respond.ts";
import { defineModule } from "../module.ts";
import type { Runtime } from "../runtime.ts";
import { allowanceOf } from "./allowance.ts";
import { Approvals } from "./approvals.ts";
import { policyFields, postedPolicy, POLICY_STYLE } from "./form.ts";
import { policyMigrations } from "./migrations.ts";
import { approvalsPage, PUSH_SCRIPT } from "./page.ts";
import { OPEN, policySummary, type Policy } from "./rules.ts";
import { Policies } from "./store.ts";
import { Pushes } from "./push.ts";

/** Each instance's Web Push sender (core/policy/push.ts). */
const pushesOf = new WeakMap<Runtime, Pushes>();

const rid = () => crypto.randomUUID();
const noParse = { parse: "none" as const };
const SIGN_IN = "sign in first: POST /signin (or open /signin in a browser)";

export const methodPaths = (rt: Runtime) => new Set(rt.registry.list().map((e) => e.path));

async function session(rt: Runtime, req: Request): Promise<Session> {
  const s = await findSession(rt, req);
  if (!s) throw unauthenticated(SIGN_IN);
  return s;
}

function checkCsrf(req: Request, s: Session, posted: Posted) {
  requireCsrf(s, req.headers.get(CSRF_HEADER) ?? (posted.json ? undefined : posted.get("csrf")));
}

/** A credential of the account whose policy may be set: a token it made (or an app password), or a connected app's grant. */
async function credentialOf(rt: Runtime, account: string, id: string | undefined): Promise<{ id: string; name: string; kind: "token" | "app" }> {
  if (!id) throw invalid("id", "give the id of the token or connected app (GET /token and GET /token/grants list them)");
  const grant = (await listGrants(rt, account)).find((g) => g.id === id);
  if (grant) return { id, name: grant.client_name, kind: "app" };
  const token = (await listTokens(rt.store, account, rt.clock.now().getTime())).find((t) => t.id === id);
  if (!token || token.name.endsWith("(OAuth)")) throw notFound(`you have no token or connected app with id "${id}"`);
  return { id, name: token.name, kind: "token" };
}

function editPage(rt: Runtime, s: Session, c: { id: string; name: string; kind: string }, p: Policy, o: { error?: string; notice?: string; status?: number } = {}): Response {
  const body = html`${message("alert", o.error)}${message("notice", o.notice)}
<p>What <strong>${c.name}</strong> may do with your account, within its scope. Now it ${policySummary(p)}.</p>
<form method="post" action="/token/policy">
<input type="hidden" name="csrf" value="${s.csrf}"><input type="hidden" name="id" value="${c.id}">
${policyFields(p)}
<p><button type="submit">Save</button> <a href="/token">Back to your tokens</a></p>
</form>`;
  return page({ title: `Policy of ${c.name}`, body, account: s.account, csrf: s.csrf, status: o.status, head: POLICY_STYLE });
}

async function policyGet(rt: Runtime, req: Request): Promise<Response> {
  const url = new URL(req.url);
  const s = await findSession(rt, req);
  if (!s) {
    if (wantsHtml(req)) return seeOther(`/signin?next=${encodeURIComponent(url.pathname + url.search)}`);
    return errorResponse(unauthenticated(SIGN_IN), rid());
  }
  try {
    const c = await credentialOf(rt, s.account.id, url.searchParams.get("id") ?? undefined);
    const p = (await rt.policies!.one(s.account.id, c.id)) ?? OPEN;
    if (wantsHtml(req)) return editPage(rt, s, c, p, { notice: url.searchParams.get("done") === "saved" ? "Saved: calls with it follow this policy from now on." : undefined });
    return jsonResponse(200, { result: { id: c.id, name: c.name, policy: p } }, rid(), { "cache-control": "no-store" });
  } catch (e) {
    const err = asHearthError(e);
    if (!wantsHtml(req)) return errorResponse(err, rid());
    return page({ title: "Not found", body: html`${message("alert", err.message)}<p><a href="/token">Back to your tokens</a></p>`, status: err.status, account: s.account, csrf: s.csrf });
  }
}

async function policyPost(rt: Runtime, req: Request): Promise<Response> {
  let posted: Posted | null = null;
  let s: Session | null = null;
  let c: { id: string; name: string; kind: string } | null = null;
  let base: Policy = OPEN;
  try {
    posted = await readPosted(rt, req);
    s = await session(rt, req);
    checkCsrf(req, s, posted);
    c = await credentialOf(rt, s.account.id, posted.get("id"));
    base = (await rt.policies!.one(s.account.id, c.id)) ?? OPEN;
    const p = postedPolicy(posted, methodPaths(rt), base);
    const account = s.account.id;
    await rt.store.write(() => rt.policies!.put(account, c!.id, p));
    rt.log.info("policy set", { account, credential: c.id });
    if (posted.json) return jsonResponse(200, { result: { id: c.id, policy: p } }, rid());
    return seeOther(`/token/policy?id=${encodeURIComponent(c.id)}&done=saved`);
  } catch (e) {
    const err = asHearthError(e);
    if (posted && !posted.json && s && c && err.status === 400) return editPage(rt, s, c, base, { error: err.message, status: 400 });
    return errorResponse(err, rid());
  }
}

async function approvalsGet(rt: Runtime, req: Request): Promise<Response> {
  const s = await findSession(rt, req);
  const url = new URL(req.url);
  if (!s) {
    if (wantsHtml(req)) return seeOther(`/signin?next=${encodeURIComponent(url.pathname)}`);
    return errorResponse(unauthenticated(SIGN_IN), rid());
  }
  const list = await rt.approvals!.list(s.account.id);
  if (wantsHtml(req)) {
    const done = url.searchParams.get("done");
    const notice = done === "approved" ? "Approved: the call goes ahead." : done === "declined" ? "Declined: the call is refused, and nothing was done." : undefined;
    return approvalsPage(rt, s, { ...list, notice });
  }
  return jsonResponse(200, { result: list }, rid(), { "cache-control": "no-store" });
}

async function approvalsDecide(rt: Runtime, req: Request): Promise<Response> {
  let posted: Posted | null = null;
  let s: Session | null = null;
  try {
    posted = await readPosted(rt, req);
    s = await session(rt, req);
    checkCsrf(req, s, posted);
    const id = posted.get("id");
    if (!id) throw invalid("id", "give the id of the request to answer (GET /approvals lists them)");
    const d = posted.get("decision");
    if (d !== "approve" && d !== "decline") throw invalid("decision", 'decision is "approve" or "decline"');
    const row = await rt.approvals!.decide(s.account, id, d === "approve" ? "approved" : "declined");
    if (posted.json) return jsonResponse(200, { result: row }, rid());
    return seeOther(`/approvals?done=${row.decision}`);
  } catch (e) {
    const err = asHearthError(e);
    if (posted && !posted.json && s && err.status !== 401 && err.status !== 403) return approvalsPage(rt, s, { ...(await rt.approvals!.list(s.account.id)), error: err.message, status: err.status });
    return errorResponse(err, rid());
  }
}

/** GET /approvals/push: this instance's VAPID public key, for PushManager.subscribe, and how many of the account's devices are subscribed. */
async function pushGet(rt: Runtime, req: Request): Promise<Response> {
  try {
    const s = await session(rt, req);
    const pushes = pushesOf.get(rt)!;
    return jsonResponse(200, { result: { publicKey: (await pushes.keys()).publicKey, devices: await pushes.count(s.account.id) } }, rid(), { "cache-control": "no-store" });
  } catch (e) {
    return errorResponse(asHearthError(e), rid());
  }
}

/** POST /approvals/push: { subscription } (PushSubscription.toJSON()) subscribes this device; { endpoint, remove: true } forgets it. */
async function pushPost(rt: Runtime, req: Request): Promise<Response> {
  try {
    const posted = await readPosted(rt, req);
    const s = await session(rt, req);
    checkCsrf(req, s, posted);
    const pushes = pushesOf.get(rt)!;
    if (posted.value("remove") === true) {
      const endpoint = posted.get("endpoint");
      if (!endpoint) throw invalid("endpoint", "give the endpoint of the subscription to forget");
      return jsonResponse(200, { result: { removed: await pushes.unsubscribe(s.account.id, endpoint) } }, rid());
    }
    const sub = await pushes.subscribe(s.account.id, posted.value("subscription"));
    return jsonResponse(200, { result: { endpoint: sub.endpoint, devices: await pushes.count(s.account.id) } }, rid());
  } catch (e) {
    return errorResponse(asHearthError(e), rid());
  }
}

export const policyModule = defineModule({
  name: "policy",
  requires: ["auth", "oauth"],
  setup(rt) {
    rt.policies = new Policies(rt);
    rt.approvals = new Approvals(rt);
    const pushes = new Pushes(rt);
    pushesOf.set(rt, pushes);
    // Each request made tells the owner's subscribed devices; a push that fails is logged, and the request waits on /approvals all the same.
    rt.approvals.onAsk((row) => void pushes.notify(row).catch((e) => rt.log.warn("push failed", { error: e instanceof Error ? e.message : String(e) })));
  },
  provides: {
    migrations: { policy: policyMigrations },
    capabilities: { allowance: allowanceOf },
    mounts: [
      (app, rt) => {
        app.get("/token/policy", route((c) => policyGet(rt, c.request)));
        app.post("/token/policy", route((c) => policyPost(rt, c.request)), noParse);
        app.get("/approvals", route((c) => approvalsGet(rt, c.request)));
        app.post("/approvals/decide", route((c) => approvalsDecide(rt, c.request)), noParse);
        app.get("/approvals/push", route((c) => pushGet(rt, c.request)));
        app.get("/approvals/push.js", () => new Response(PUSH_SCRIPT, { headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "no-cache" } }));
        app.post("/approvals/push", route((c) => pushPost(rt, c.request)), noParse);
      },
    ],
  },
});
