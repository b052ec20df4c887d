// Web Push for approvals waiting: the owner subscribes a device, a call its
// policy asks about is made, and a push message reaches a loopback push
// service. The service does what a real one and the device do between them:
// it checks the VAPID JWT (RFC 8292) against the key the instance gave the
// page, and decrypts the body (RFC 8291, aes128gcm) with the device's own
// keys, written here from the RFCs rather than with the sender's library.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createDecipheriv, createECDH, createPublicKey, hkdfSync, randomBytes, verify, type ECDH } from "node:crypto";
import { signUp, type Signed } from "../auth/people.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { startSink } from "../mail/sink.ts";

let h: Hearth;
let relay: Awaited<ReturnType<typeof startSink>>;
let s: Signed;
let service: ReturnType<typeof Bun.serve>;
let status = 201;
const received: { path: string; headers: Headers; body: Uint8Array }[] = [];

const b64url = (b: Uint8Array) => Buffer.from(b).toString("base64url");
const unb64 = (t: string) => Buffer.from(t, "base64url");

beforeAll(async () => {
  relay = await startSink();
  service = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      received.push({ path: new URL(req.url).pathname, headers: req.headers, body: new Uint8Array(await req.arrayBuffer()) });
      return new Response(null, { status });
    },
  });
  h = await startHearth({
    env: { HEARTH_SIGNUP: "open", HEARTH_METER_ACCOUNTS: "all", MAIL_DOMAIN: "example.test", SMTP_PORT: "off", SMTP_RELAY_URL: `smtp://127.0.0.1:${relay.port}`, HEARTH_APPROVAL_SECONDS: "120" },
  });
  s = await signUp(h, "alice");
  await h.grant("alice", 100);
});
afterAll(async () => {
  await h.stop();
  await relay.stop();
  service.stop(true);
});

async function post(path: string, body: unknown) {
  const res = await fetch(h.url + path, { method: "POST", headers: { "content-type": "application/json", cookie: s.cookie, "x-csrf-token": s.csrf }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
}

/** A device: its P-256 key pair and auth secret, and the subscription its browser would hand the page. */
function device(name: string) {
  const ecdh = createECDH("prime256v1");
  ecdh.generateKeys();
  const auth = randomBytes(16);
  return { ecdh, auth, subscription: { endpoint: `http://127.0.0.1:${service.port}/push/${name}`, keys: { p256dh: b64url(ecdh.getPublicKey()), auth: b64url(auth) } } };
}

/** RFC 8291 (with RFC 8188's aes128gcm framing), as the device decrypts a message. */
function decrypt(body: Uint8Array, ua: ECDH, authSecret: Buffer): string {
  const buf = Buffer.from(body);
  const salt = buf.subarray(0, 16);
  const rs = buf.readUInt32BE(16);
  const idlen = buf[20];
  const asPublic = buf.subarray(21, 21 + idlen);
  const ct = buf.subarray(21 + idlen);
  expect(idlen).toBe(65);
  expect(ct.length).toBeLessThanOrEqual(rs);
  const secret = ua.computeSecret(asPublic);
  const hkdf = (salt: Buffer, ikm: Buffer, info: Buffer, n: number) => Buffer.from(hkdfSync("sha256", ikm, salt, info, n));
  const ikm = hkdf(authSecret, secret, Buffer.concat([Buffer.from("WebPush: info\0"), ua.getPublicKey(), asPublic]), 32);
  const cek = hkdf(salt, ikm, Buffer.from("Content-Encoding: aes128gcm\0"), 16);
  const nonce = hkdf(salt, ikm, Buffer.from("Content-Encoding: nonce\0"), 12);
  const d = createDecipheriv("aes-128-gcm", cek, nonce);
  d.setAuthTag(ct.subarray(ct.length - 16));
  const plain = Buffer.concat([d.update(ct.subarray(0, ct.length - 16)), d.final()]);
  let end = plain.length - 1;
  while (plain[end] === 0) end--;
  // The last record's padding delimiter.
  expect(plain[end]).toBe(2);
  return plain.subarray(0, end).toString("utf8");
}

/** RFC 8292: the JWT is ES256 under the key in k, for the push service's origin, not expired and not for more than a day. */
function checkVapid(header: string | null, publicKey: string, origin: string) {
  const m = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(header ?? "");
  expect(m).not.toBeNull();
  const [, jwt, k] = m!;
  expect(k).toBe(publicKey);
  const [head, claims, sig] = jwt.split(".");
  expect(JSON.parse(unb64(head).toString())).toMatchObject({ alg: "ES256" });
  const c = JSON.parse(unb64(claims).toString());
  expect(c.aud).toBe(origin);
  const now = Date.now() / 1000;
  expect(c.exp).toBeGreaterThan(now);
  expect(c.exp).toBeLessThanOrEqual(now + 24 * 3600 + 60);
  expect(c.sub).toMatch(/^(mailto:|https:)/);
  const raw = unb64(k);
  const key = createPublicKey({ key: { kty: "EC", crv: "P-256", x: b64url(raw.subarray(1, 33)), y: b64url(raw.subarray(33, 65)) }, format: "jwk" });
  expect(verify("sha256", Buffer.from(`${head}.${claims}`), { key, dsaEncoding: "ieee-p1363" }, unb64(sig))).toBe(true);
}

async function waitingFor(to: string): Promise<any> {
  for (;;) {
    const waiting = ((await (await fetch(`${h.url}/approvals`, { headers: { cookie: s.cookie } })).json()) as any).result.waiting as any[];
    const found = waiting.find((w) => w.args.includes(to));
    if (found) return found;
    await Bun.sleep(20);
  }
}

test("an approval waiting reaches the owner's device: VAPID-signed, and it decrypts with the device's keys", async () => {
  const phone = device("phone");
  const key = await fetch(`${h.url}/approvals/push`, { headers: { cookie: s.cookie } });
  const { publicKey, devices } = ((await key.json()) as any).result;
  expect(devices).toBe(0);
  expect(unb64(publicKey).length).toBe(65);
  const sub = await post("/approvals/push", { subscription: phone.subscription });
  expect(sub.status).toBe(200);
  expect(sub.body.result.devices).toBe(1);
  const t = (await post("/token", { name: "Desk assistant", policy: { classes: { outbound: "ask" } } })).body.result;
  const call = h.call("mail/send", { to: "carol@example.com", subject: "Minutes", body: "Tuesday's." }, { token: t.token, method: "POST" });
  const asked = await waitingFor("carol@example.com");
  while (!received.some((r) => r.path === "/push/phone")) await Bun.sleep(10);
  const msg = received.find((r) => r.path === "/push/phone")!;
  expect(msg.headers.get("content-encoding")).toBe("aes128gcm");
  expect(Number(msg.headers.get("ttl"))).toBe(120);
  checkVapid(msg.headers.get("authorization"), publicKey, `http://127.0.0.1:${service.port}`);
  const told = JSON.parse(decrypt(msg.body, phone.ecdh, phone.auth));
  expect(told.url).toBe(`/approvals#ask-${asked.id}`);
  expect(told.body).toContain("Allow Desk assistant to call mail/send?");
  expect(told.body).toContain("to: carol@example.com");
  // The owner answers; the call ends declined, nothing sent.
  expect((await post("/approvals/decide", { id: asked.id, decision: "decline" })).status).toBe(200);
  expect((await call).status).toBe(403);
});

test("a device the push service has forgotten (410) is dropped; a subscription that is not one is refused by field", async () => {
  const old = device("old");
  expect((await post("/approvals/push", { subscription: old.subscription })).status).toBe(200);
  status = 410;
  const t = (await post("/token", { name: "Gone", policy: { classes: { outbound: "ask" } } })).body.result;
  const call = h.call("mail/send", { to: "dan@example.com", subject: "x", body: "y" }, { token: t.token, method: "POST" });
  const asked = await waitingFor("dan@example.com");
  for (;;) {
    const rows = await h.rows("SELECT endpoint FROM push_subscriptions WHERE endpoint LIKE '%/push/old'");
    if (!rows.length) break;
    await Bun.sleep(10);
  }
  status = 201;
  await post("/approvals/decide", { id: asked.id, decision: "decline" });
  expect((await call).status).toBe(403);
  const bad = await post("/approvals/push", { subscription: { endpoint: "http://example.com/push", keys: old.subscription.keys } });
  expect(bad.status).toBe(400);
  expect(bad.body.error.field).toBe("subscription.endpoint");
  const short = await post("/approvals/push", { subscription: { ...old.subscription, keys: { p256dh: "AAAA", auth: old.subscription.keys.auth } } });
  expect(short.body.error.field).toBe("subscription.keys.p256dh");
  // Without the session's CSRF token, nothing is subscribed.
  const forged = await fetch(`${h.url}/approvals/push`, { method: "POST", headers: { "content-type": "application/json", cookie: s.cookie }, body: JSON.stringify({ subscription: old.subscription }) });
  expect(forged.status).toBe(403);
});
