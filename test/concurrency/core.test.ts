// Write calls that run at once: on PostgreSQL they run side by side (in one
// instance and across instances), so whatever a write read, then wrote on
// the strength of it (a balance, a name still free, a code not yet used),
// must hold when many such calls arrive together. Each test fires a burst of
// calls through the HTTP API and checks the invariant the single-writer
// store gave for free. On SQLite they pass as they always did.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createInvite } from "../../core/auth/people.ts";
import { ensureAccount, findAccount } from "../../core/auth/tokens.ts";
import { post } from "../auth/people.ts";
import { startHearth, type Hearth } from "../harness.ts";

let h: Hearth;
let admin: string;

beforeAll(async () => {
  // A pool large enough that several writes of one instance run at once on PostgreSQL.
  // Calls, sign-ups and client registrations come in bursts here: no rate limits.
  h = await startHearth({ env: { HEARTH_DATABASE_POOL: "12", HEARTH_RATE_SIGNIN: "0", HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0", HEARTH_OAUTH_LOOPBACK_CLIENTS: "on" } });
  admin = await h.token("root", { admin: true });
});
afterAll(() => h.stop());

/** n copies of one call fired together. */
const burst = <T,>(n: number, f: (i: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => f(i)));

const balance = async (username: string) =>
  Number((await h.row<{ b: number }>("SELECT coalesce(sum(delta), 0) AS b FROM pay_ledger WHERE account = (SELECT id FROM accounts WHERE username = ?)", username))?.b);

test("taking credits back at once never leaves a balance below zero", async () => {
  await h.token("carol");
  await h.grant("carol", 4);
  const res = await burst(16, () => h.call("credits/grant", { user: "carol", amount: -1 }, { token: admin }));
  expect(res.filter((r) => r.status === 200).length).toBe(4);
  for (const r of res.filter((r) => r.status !== 200)) {
    expect(r.status).toBe(400);
    expect(r.body.error.field).toBe("amount");
  }
  expect(await balance("carol")).toBe(0);
});

test("forking a priced app at once charges only what the balance holds", async () => {
  const maker = await h.token("maker");
  const dave = await h.token("dave");
  const made = await h.call("apps/create", { name: "Paid", slug: "paid", price: 2, html: "<!doctype html><html><head><title>P</title></head><body>p</body></html>" }, { token: maker });
  expect(made.status).toBe(200);
  await h.grant("dave", 6);
  const res = await burst(14, (i) => h.call("apps/fork", { slug: "paid", new_slug: `paid-copy-${i}` }, { token: dave }));
  expect(res.filter((r) => r.status === 200).length).toBe(3);
  for (const r of res.filter((r) => r.status !== 200)) expect(r.status).toBe(402);
  expect(await balance("dave")).toBe(0);
  expect(await balance("maker")).toBe(6);
});

test("a name taken by another write at the same moment answers 409 conflict naming it, never 500", async () => {
  const erin = await h.token("erin");
  const page = "<!doctype html><html><head><title>S</title></head><body>s</body></html>";
  const res = await burst(12, (i) => h.call("apps/create", { name: `Same ${i}`, slug: "same-slug", html: page }, { token: erin }));
  expect(res.filter((r) => r.status === 200).length).toBe(1);
  for (const r of res.filter((r) => r.status !== 200)) {
    expect(r.status).toBe(409);
    expect(r.body.error.kind).toBe("conflict");
    expect(r.body.error.message).toContain("slug");
  }
  expect((await h.rows("SELECT id FROM apps WHERE slug = ?", "same-slug")).length).toBe(1);
});

test("a write the database ends for a deadlock answers 503 with retry, never 500", async () => {
  if (h.rt.store.kind !== "postgres") return console.log("skipped: SQLite runs one write at a time, so two never deadlock");
  const { asHearthError } = await import("../../core/errors.ts");
  const store = h.rt.store;
  // Each holds one key, then waits for the other's: PostgreSQL ends one of them.
  let both!: () => void;
  const ready = new Promise<void>((r) => (both = r));
  let n = 0;
  const crossed = (a: string, b: string) =>
    store.write(async () => {
      await store.lock(a);
      if (++n === 2) both();
      await ready;
      await store.lock(b);
    });
  const out = await Promise.allSettled([crossed("deadlock:a", "deadlock:b"), crossed("deadlock:b", "deadlock:a")]);
  const failed = out.filter((o) => o.status === "rejected") as PromiseRejectedResult[];
  expect(failed.length).toBe(1);
  const err = asHearthError(failed[0].reason);
  expect(err.status).toBe(503);
  expect(err.retry).toBe(true);
});

test("instances taking over a dead instance's firings at once run each exactly once", async () => {
  const { Scheduler } = await import("../../core/scheduler/scheduler.ts");
  // Two schedulers on one database stand for two instances; "notes" schedules nothing of its own.
  const ran = new Map<string, number>();
  const [a, b] = [new Scheduler(h.rt), new Scheduler(h.rt)];
  for (const s of [a, b])
    await s.handle("notes", (f) => {
      ran.set(f.ref, (ran.get(f.ref) ?? 0) + 1);
      return null;
    }, { grace: 3_600_000 });
  // Firings claimed by an instance that died: their leases ran out a second ago.
  const n = 40;
  const now = h.rt.clock.now().getTime();
  for (let i = 0; i < n; i++) {
    await h.exec("INSERT INTO schedule_jobs (service, ref, owner, scopes, start, \"offset\", next_due, created) VALUES ('notes', ?, NULL, '*', ?, 0, NULL, ?)", `orphan-${i}`, now, now);
    await h.exec("INSERT INTO schedule_firings (service, ref, due, status, count, claimed, owner, lease) VALUES ('notes', ?, ?, 'claimed', 1, ?, 'dead', ?)", `orphan-${i}`, now, now, Date.now() - 1000);
  }
  const reports = await burst(8, (i) => (i % 2 ? a : b).runDue());
  a.stop();
  b.stop();
  expect([...ran.values()].filter((c) => c !== 1)).toEqual([]);
  expect(ran.size).toBe(n);
  expect(reports.reduce((s, r) => s + r.fired.length, 0)).toBe(n);
});

const invite = async () => (await createInvite(h.rt, (await findAccount(h.rt.store, "root"))!)).code;
const PASSWORD = "a long passphrase";

test("one invitation used by many sign-ups at once makes one account", async () => {
  const code = await invite();
  const res = await burst(8, (i) => post(h, "/signup", { username: `invited-${i}`, password: PASSWORD, invite: code }));
  expect(res.filter((r) => r.status === 200).length).toBe(1);
  for (const r of res.filter((r) => r.status !== 200)) {
    expect(r.status).toBe(400);
    expect(r.body.error.field).toBe("invite");
  }
  expect((await h.rows("SELECT id FROM accounts WHERE username LIKE 'invited-%'")).length).toBe(1);
  // Each sign-up hashes a password (argon2id) first: seconds on a loaded machine.
});

test("one username chosen by many sign-ups at once is taken once; the others' invitations stay unused", async () => {
  const codes = await Promise.all(Array.from({ length: 8 }, invite));
  const res = await burst(8, (i) => post(h, "/signup", { username: "samename", password: PASSWORD, invite: codes[i] }));
  expect(res.filter((r) => r.status === 200).length).toBe(1);
  for (const r of res.filter((r) => r.status !== 200)) {
    expect(r.status).toBe(409);
    expect(r.body.error).toMatchObject({ field: "username", message: 'the username "samename" is taken; choose another' });
  }
  expect((await h.rows("SELECT id FROM accounts WHERE username = 'samename'")).length).toBe(1);
  const { hashToken } = await import("../../core/auth/ids.ts");
  const used = await h.rows(`SELECT hash FROM invites WHERE used IS NOT NULL AND hash IN (${codes.map(() => "?").join(", ")})`, ...codes.map(hashToken));
  expect(used.length).toBe(1);
});

test("an account made if missing by many commands at once is made once, and each is answered with it", async () => {
  const made = await burst(10, () => ensureAccount(h.rt.store, "henry", { admin: false }));
  expect(new Set(made.map((a) => a.id)).size).toBe(1);
  expect((await h.rows("SELECT id FROM accounts WHERE username = 'henry'")).length).toBe(1);
});

describe("OAuth", () => {
  const REDIRECT = "http://127.0.0.1:9/callback";
  const b64url = (b: Uint8Array) => Buffer.from(b).toString("base64url");
  let session: { cookie: string; csrf: string };
  let client: string;

  beforeAll(async () => {
    expect((await post(h, "/signup", { username: "oauthuser", password: PASSWORD, invite: await invite() })).status).toBe(200);
    const res = await post(h, "/signin", { username: "oauthuser", password: PASSWORD });
    session = { cookie: res.headers.get("set-cookie")!.split(";")[0], csrf: res.body.result.csrf };
    const reg = await post(h, "/oauth/register", { client_name: "Probe", redirect_uris: [REDIRECT] });
    expect(reg.status).toBe(201);
    client = reg.body.client_id;
  });

  /** A code from the consent form, with its PKCE verifier. */
  async function code() {
    const verifier = b64url(crypto.getRandomValues(new Uint8Array(32)));
    const challenge = b64url(new Uint8Array(new Bun.CryptoHasher("sha256").update(verifier).digest()));
    const form = new URLSearchParams({ client_id: client, redirect_uri: REDIRECT, response_type: "code", code_challenge: challenge, code_challenge_method: "S256", decision: "allow", csrf: session.csrf });
    const res = await fetch(`${h.url}/oauth/authorize`, {
      method: "POST",
      headers: { cookie: session.cookie, "content-type": "application/x-www-form-urlencoded", origin: h.url },
      body: form,
      redirect: "manual",
    });
    return { verifier, code: new URL(res.headers.get("location")!).searchParams.get("code")! };
  }
  const token = async (params: Record<string, string>) => {
    const res = await fetch(`${h.url}/oauth/token`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(params) });
    return { status: res.status, body: (await res.json()) as any };
  };

  test("a code exchanged many times at once gives tokens once", async () => {
    const c = await code();
    const res = await burst(12, () => token({ grant_type: "authorization_code", code: c.code, redirect_uri: REDIRECT, client_id: client, code_verifier: c.verifier }));
    expect(res.filter((r) => r.status === 200).length).toBe(1);
    for (const r of res.filter((r) => r.status !== 200)) expect(r.body.error).toBe("invalid_grant");
    // A code presented again withdraws what it gave.
    const given = res.find((r) => r.status === 200)!.body.access_token;
    expect((await h.call("notes/list", {}, { token: given })).status).toBe(401);
  });

  test("a refresh token used many times at once renews once", async () => {
    const c = await code();
    const first = await token({ grant_type: "authorization_code", code: c.code, redirect_uri: REDIRECT, client_id: client, code_verifier: c.verifier });
    expect(first.status).toBe(200);
    const res = await burst(12, () => token({ grant_type: "refresh_token", refresh_token: first.body.refresh_token, client_id: client }));
    expect(res.filter((r) => r.status === 200).length).toBe(1);
    for (const r of res.filter((r) => r.status !== 200)) expect(r.body.error).toBe("invalid_grant");
  });

  test("a grant revoked while it is renewed leaves no token of it working", async () => {
    const { hashToken } = await import("../../core/auth/ids.ts");
    for (let round = 0; round < 10; round++) {
      const c = await code();
      const pair = await token({ grant_type: "authorization_code", code: c.code, redirect_uri: REDIRECT, client_id: client, code_verifier: c.verifier });
      expect(pair.status).toBe(200);
      const grant = (await h.row<{ g: string }>('SELECT "grant" AS g FROM oauth_access WHERE token = (SELECT id FROM tokens WHERE hash = ?)', hashToken(pair.body.access_token)))!.g;
      const [revoked, renewed] = await Promise.all([
        post(h, "/token/revoke", { id: grant }, { cookie: session.cookie, "x-csrf-token": session.csrf }),
        token({ grant_type: "refresh_token", refresh_token: pair.body.refresh_token, client_id: client }),
      ]);
      expect(revoked.status).toBe(200);
      for (const t of [pair.body.access_token, renewed.status === 200 ? renewed.body.access_token : null].filter(Boolean))
        expect((await h.call("notes/list", {}, { token: t })).status).toBe(401);
    }
  });
});

test("a file stored while another with the same content is deleted keeps its content", async () => {
  const frank = await h.token("frank");
  // Rounds of: one file deleted while several with its very bytes are stored.
  for (let round = 0; round < 40; round++) {
    const content = `shared bytes, round ${round}`;
    const first = await h.call("files/put", { name: "a.txt", content }, { token: frank });
    expect(first.status).toBe(200);
    const [gone, ...kept] = await Promise.all([
      h.call("files/delete", { id: first.body.result.id }, { token: frank }),
      ...Array.from({ length: 6 }, (_, i) => h.call("files/put", { name: `b${i}.txt`, content }, { token: frank })),
    ]);
    expect(gone.status).toBe(200);
    for (const k of kept) {
      expect(k.status).toBe(200);
      const read = await h.call("files/get", { id: k.body.result.id }, { token: frank });
      expect(read.status).toBe(200);
      expect(read.body.result.content).toBe(content);
    }
  }
});

describe("CalDAV", () => {
  const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString("base64")}`;
  let auth: string;
  beforeAll(async () => {
    auth = basic("gina", await h.token("gina"));
  });

  test("a new object put many times at once with If-None-Match: * is made once", async () => {
    const { vevent } = await import("../dav/fixtures.ts");
    const url = `${h.url}/dav/calendars/gina/events/made-once.ics`;
    const res = await burst(10, (i) =>
      fetch(url, { method: "PUT", body: vevent("made-once", `Version ${i}`, "20260302T090000Z"), headers: { authorization: auth, "content-type": "text/calendar", "if-none-match": "*" } }),
    );
    expect(res.map((r) => r.status).filter((s) => s === 201).length).toBe(1);
    for (const r of res.filter((r) => r.status !== 201)) expect(r.status).toBe(412);
    expect((await h.rows("SELECT title FROM events_events WHERE title LIKE 'Version %'")).length).toBe(1);
  });

  test("an object changed many times at once with the same If-Match changes once", async () => {
    const { vevent } = await import("../dav/fixtures.ts");
    const url = `${h.url}/dav/calendars/gina/events/changed-once.ics`;
    const made = await fetch(url, { method: "PUT", body: vevent("changed-once", "First", "20260303T090000Z"), headers: { authorization: auth, "content-type": "text/calendar" } });
    expect(made.status).toBe(201);
    const etag = made.headers.get("etag")!;
    const res = await burst(10, (i) =>
      fetch(url, { method: "PUT", body: vevent("changed-once", `Edit ${i}`, "20260303T090000Z"), headers: { authorization: auth, "content-type": "text/calendar", "if-match": etag } }),
    );
    expect(res.map((r) => r.status).filter((s) => s === 204).length).toBe(1);
    for (const r of res.filter((r) => r.status !== 204)) expect(r.status).toBe(412);
  });
});

test("one record indexed for search by many writes at once is indexed once, refusing none of them", async () => {
  const { indexFor } = await import("../../core/db/fts.ts");
  const store = h.rt.store;
  const index = indexFor(store, "notes", false);
  await burst(12, (i) => store.write(() => index.put({ kind: "note", ref: "indexed-at-once", owner: null, title: "Indexed at once", body: `version ${i}` })));
  const rows = await h.rows("SELECT ref FROM search_index WHERE service = 'notes' AND ref = 'indexed-at-once'");
  expect(rows.length).toBe(1);
  const hits = await index.search({ query: "indexed at once" });
  expect(hits.map((x) => x.ref)).toEqual(["indexed-at-once"]);
});
