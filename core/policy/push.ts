// Web Push for approvals waiting: the owner's devices subscribe on
// /approvals, and each request made sends every device of the account a
// message encrypted for it (RFC 8291, aes128gcm) and signed with this
// instance's VAPID key (RFC 8292). The `web-push` package builds the
// request; it is sent here with fetch, so a push service on plain HTTP (a
// loopback one in tests) is reached as any other. A service that answers 404
// or 410 has forgotten the device: its subscription goes.
import { and, eq } from "drizzle-orm";
import type WebPush from "web-push";
import { invalid } from "../errors.ts";
import type { Runtime } from "../runtime.ts";
import { approvalSeconds, questionOf, type Approval } from "./approvals.ts";
import { pushKeys, pushSubscriptions } from "./schema.ts";

const VAPID = "vapid";
/** web-push and its crypto libraries, loaded when a device first subscribes or is sent to, not at every start. */
const webpush = async (): Promise<typeof WebPush> => (await import("web-push")).default;
const b64 = (s: string) => Buffer.from(s.replace(/-/g, "+").replace(/_/g, "/"), "base64");
const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

export interface PushSubscription {
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

/** A subscription as the browser's PushSubscription.toJSON() gives it, refused by field when it is not one. */
export function parseSubscription(raw: unknown): PushSubscription {
  const r = (raw ?? {}) as { endpoint?: unknown; keys?: { p256dh?: unknown; auth?: unknown } };
  let url: URL;
  try {
    url = new URL(String(r.endpoint));
  } catch {
    throw invalid("subscription.endpoint", "endpoint is the push service's URL, as PushSubscription.toJSON() gives it");
  }
  if (String(r.endpoint).length > 2000 || !(url.protocol === "https:" || (url.protocol === "http:" && LOOPBACK.has(url.hostname))))
    throw invalid("subscription.endpoint", "endpoint is an https URL of a push service");
  const p256dh = typeof r.keys?.p256dh === "string" ? r.keys.p256dh : "";
  const auth = typeof r.keys?.auth === "string" ? r.keys.auth : "";
  const key = b64(p256dh);
  if (key.length !== 65 || key[0] !== 4) throw invalid("subscription.keys.p256dh", "keys.p256dh is the device's P-256 public key (65 bytes, base64url)");
  if (b64(auth).length !== 16) throw invalid("subscription.keys.auth", "keys.auth is the device's 16-byte auth secret, base64url");
  return { endpoint: url.href, keys: { p256dh, auth } };
}

export class Pushes {
  private kept: Promise<{ publicKey: string; privateKey: string }> | null = null;
  constructor(private readonly rt: Runtime) {}

  /** This instance's VAPID keys, made on first use; of two instances making them at once, the first kept wins for both. */
  keys(): Promise<{ publicKey: string; privateKey: string }> {
    this.kept ??= (async () => {
      const db = this.rt.store;
      const read = () => db.rdb.select().from(pushKeys).where(eq(pushKeys.id, VAPID)).get();
      let row = await read();
      if (!row) {
        const made = (await webpush()).generateVAPIDKeys();
        await db.write(() => db.wdb.insert(pushKeys).values({ id: VAPID, ...made, created: this.rt.clock.now().getTime() }).onConflictDoNothing().run());
        row = await read();
      }
      return { publicKey: row!.publicKey, privateKey: row!.privateKey };
    })().catch((e) => {
      this.kept = null;
      throw e;
    });
    return this.kept;
  }

  async subscribe(account: string, raw: unknown): Promise<PushSubscription> {
    const s = parseSubscription(raw);
    const values = { endpoint: s.endpoint, account, p256dh: s.keys.p256dh, auth: s.keys.auth, created: this.rt.clock.now().getTime() };
    await this.rt.store.write(() =>
      this.rt.store.wdb.insert(pushSubscriptions).values(values).onConflictDoUpdate({ target: pushSubscriptions.endpoint, set: { account, p256dh: values.p256dh, auth: values.auth } }).run(),
    );
    return s;
  }

  async unsubscribe(account: string, endpoint: string): Promise<boolean> {
    const gone = await this.rt.store.write(() =>
      this.rt.store.wdb
        .delete(pushSubscriptions)
        .where(and(eq(pushSubscriptions.account, account), eq(pushSubscriptions.endpoint, endpoint)))
        .returning({ endpoint: pushSubscriptions.endpoint })
        .all(),
    );
    return gone.length > 0;
  }

  async count(account: string): Promise<number> {
    return (await this.rt.store.rdb.select({ e: pushSubscriptions.endpoint }).from(pushSubscriptions).where(eq(pushSubscriptions.account, account)).all()).length;
  }

  /** Tells every device of the account that a request waits, in plain words; what fails is logged, never the caller's concern. */
  async notify(row: Approval): Promise<void> {
    const rt = this.rt;
    const subs = await rt.store.rdb.select().from(pushSubscriptions).where(eq(pushSubscriptions.account, row.account)).all();
    if (!subs.length) return;
    const { publicKey, privateKey } = await this.keys();
    const contact = rt.config.HEARTH_CONTACT ?? "";
    const base = rt.config.HEARTH_PUBLIC_URL ?? "";
    const subject = contact.includes("@") ? `mailto:${contact.replace(/^mailto:/, "")}` : base.startsWith("https:") ? base : "mailto:owner@hearth.invalid";
    const payload = JSON.stringify({ title: "Hearth: an approval waits", body: questionOf(row), url: `/approvals#ask-${row.id}`, tag: row.id });
    await Promise.all(
      subs.map(async (s) => {
        try {
          const req = (await webpush()).generateRequestDetails({ endpoint: s.endpoint, keys: { p256dh: s.p256dh, auth: s.auth } }, payload, {
            vapidDetails: { subject, publicKey, privateKey },
            TTL: approvalSeconds(rt),
            contentEncoding: "aes128gcm",
            urgency: "high",
            topic: row.id.replace(/[^A-Za-z0-9_-]/g, "").slice(0, 32),
          });
          const res = await fetch(req.endpoint, { method: req.method, headers: req.headers as Record<string, string>, body: req.body as unknown as BodyInit, signal: AbortSignal.timeout(10_000) });
          if (res.status === 404 || res.status === 410) {
            await this.unsubscribe(s.account, s.endpoint);
            rt.log.info("push subscription gone", { account: s.account, status: res.status });
          } else if (res.status >= 300) rt.log.warn("push not taken", { account: s.account, status: res.status });
        } catch (e) {
          rt.log.warn("push failed", { account: s.account, error: e instanceof Error ? e.message : String(e) });
        }
      }),
    );
  }
}
