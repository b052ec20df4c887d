// one store: the approvals and policy pages; policies and approvals run on both stores in test/policy (policy, elicit, limits)
// The approvals page in a real browser: a call its token's policy asks about
// shows there in plain words (which client, the method, its arguments, the
// price, why), and the owner's click completes it or refuses it. The policy
// editor on /token, the tokens' table and the consent page's policy fields
// pass axe's checks in light and dark at a phone's and a desktop's width,
// with screenshots left in test/artifacts/.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { signUp, type Signed } from "../auth/people.ts";
import { accountMenu, chromiumPresent, everyLook, launchChromium } from "../browser.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { startSink } from "../mail/sink.ts";
import { signedIn } from "./held.ts";

const ARTIFACTS = join(import.meta.dir, "..", "artifacts", "agents");
const WIDTHS = { phone: { width: 390, height: 844 }, desktop: { width: 1280, height: 900 } };
const REDIRECT = "http://127.0.0.1:9/callback";

let h: Hearth;
let browser: Browser;
let s: Signed;
let relay: Awaited<ReturnType<typeof startSink>>;
let mailer: { token: string; id: string };
let client: string;

async function post(path: string, body: unknown) {
  const res = await fetch(h.url + path, { method: "POST", headers: { "content-type": "application/json", cookie: s.cookie, "x-csrf-token": s.csrf }, body: JSON.stringify(body) });
  return (await res.json()) as any;
}

beforeAll(async () => {
  if (!chromiumPresent) return;
  relay = await startSink();
  h = await startHearth({
    env: {
      HEARTH_SIGNUP: "open",
      HEARTH_METER_ACCOUNTS: "all",
      MAIL_DOMAIN: "example.test",
      SMTP_PORT: "off",
      SMTP_RELAY_URL: `smtp://127.0.0.1:${relay.port}`,
      HEARTH_APPROVAL_SECONDS: "600",
      HEARTH_RATE_SIGNIN: "0",
    },
  });
  s = await signUp(h, "alice");
  await h.grant("alice", 100);
  mailer = (await post("/token", { name: "Newsletter script", policy: { classes: { outbound: "ask" }, methods: { "notes/delete": "deny" } } })).result;
  const reg = await fetch(`${h.url}/oauth/register`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ client_name: "Desk assistant", redirect_uris: [REDIRECT] }) });
  client = ((await reg.json()) as any).client_id;
  browser = await launchChromium();
  mkdirSync(ARTIFACTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await h?.stop();
  await relay?.stop();
});

const context = (colorScheme: "light" | "dark", size: { width: number; height: number }, bypassCSP = false) => signedIn(browser, h.url, s.cookie, { colorScheme, size, bypassCSP });

/** Opens /approvals until a request shows (it is made by a call running meanwhile). */
async function openWhenAsked(page: Page) {
  for (;;) {
    await page.goto(`${h.url}/approvals`);
    if (await page.locator("section.ask").count()) return;
    await Bun.sleep(20);
  }
}

test.skipIf(!chromiumPresent)(
  "a call waiting for the owner shows in plain words; Approve completes it, Decline refuses it",
  async () => {
    const ctx = await context("light", WIDTHS.desktop);
    const page = await ctx.newPage();
    await page.goto(`${h.url}/token`);
    await (await accountMenu(page)).getByRole("link", { name: "Approvals" }).click();
    expect(await page.locator("main").textContent()).toContain("Nothing is waiting for you.");

    const call = h.call("mail/send", { to: "carol@example.com", subject: "Minutes", body: "The minutes of Tuesday's meeting." }, { token: mailer.token, method: "POST" });
    await openWhenAsked(page);
    const card = page.locator("section.ask");
    const text = (await card.textContent())!;
    expect(text).toContain("mail/send for Newsletter script");
    expect(text).toContain("carol@example.com");
    expect(text).toContain("Minutes");
    expect(text).toContain("4 credits ($0.04)");
    expect(text).toContain("methods that send outside this instance");
    await page.getByRole("button", { name: "Approve mail/send for Newsletter script" }).click();
    await page.waitForURL((u) => u.searchParams.get("done") === "approved");
    expect(await page.getByRole("status").or(page.locator(".notice")).first().textContent()).toContain("Approved");
    const r = await call;
    expect(r.status).toBe(200);
    expect((await relay.next()).to).toEqual(["carol@example.com"]);

    const second = h.call("mail/send", { to: "dave@example.com", subject: "Offer", body: "Not this one." }, { token: mailer.token, method: "POST" });
    await openWhenAsked(page);
    await page.getByRole("button", { name: "Decline mail/send for Newsletter script" }).click();
    await page.waitForURL((u) => u.searchParams.get("done") === "declined");
    const refused = await second;
    expect(refused.status).toBe(403);
    expect(refused.body.error.approval).toBe("declined");
    const rows = await page.locator("tbody tr").allTextContents();
    expect(rows[0]).toContain("Declined by alice");
    expect(rows[1]).toContain("Approved by alice");
    await ctx.close();
  },
);

test.skipIf(!chromiumPresent)(
  "'Notify me on this device' registers the service worker, subscribes with the instance's VAPID key, and the server keeps the subscription",
  async () => {
    const ctx = await context("light", WIDTHS.desktop);
    // A real push service is out of reach here: PushManager.subscribe is stood in for, after the page has called it with its key.
    await ctx.addInitScript(() => {
      const w = window as unknown as { __asked: unknown[] };
      w.__asked = [];
      PushManager.prototype.subscribe = async function (o?: PushSubscriptionOptionsInit) {
        const key = new Uint8Array(o!.applicationServerKey as ArrayBuffer);
        w.__asked.push({ userVisibleOnly: o!.userVisibleOnly, key: btoa(String.fromCharCode(...key)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "") });
        const p256dh = "BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM";
        return { toJSON: () => ({ endpoint: "https://push.example.test/device-1", keys: { p256dh, auth: "tBHItJI5svbpez7KI4CCXg" } }) } as unknown as PushSubscription;
      };
    });
    const page = await ctx.newPage();
    await page.goto(`${h.url}/approvals`);
    const button = page.getByRole("button", { name: "Notify me on this device" });
    await button.click();
    await page.locator("#push-state", { hasText: "This device will be notified" }).waitFor();
    const asked = (await page.evaluate(() => (window as unknown as { __asked: unknown[] }).__asked)) as { userVisibleOnly: boolean; key: string }[];
    const info = (await (await fetch(`${h.url}/approvals/push`, { headers: { cookie: s.cookie } })).json()).result;
    expect(asked).toEqual([{ userVisibleOnly: true, key: info.publicKey }]);
    expect(info.devices).toBe(1);
    expect(await page.evaluate(async () => (await navigator.serviceWorker.getRegistration("/my/"))?.scope)).toBe(`${h.url}/my/`);
    expect(await h.rows("SELECT endpoint FROM push_subscriptions")).toEqual([{ endpoint: "https://push.example.test/device-1" }]);
    await ctx.close();
  },
);

test.skipIf(!chromiumPresent)(
  "the owner changes a token's policy from /token",
  async () => {
    const ctx = await context("light", WIDTHS.desktop);
    const page = await ctx.newPage();
    await page.goto(`${h.url}/token`);
    const row = page.locator("tbody tr", { hasText: "Newsletter script" });
    expect(await row.locator("td[data-label='Policy']").textContent()).toContain("asks before sending out; 1 method rule");
    await row.getByRole("link", { name: "Change what Newsletter script may do" }).click();
    await page.getByLabel("Sending outside this instance (mail, texts, payments, posts)").selectOption("deny");
    await page.getByLabel("Rules for single methods").fill("notes/delete deny\nnotes/add ask");
    await page.getByRole("button", { name: "Save" }).click();
    await page.waitForURL((u) => u.searchParams.get("done") === "saved");
    expect(await page.locator("main").textContent()).toContain("refuses sending out; 2 method rules");
    const r = await h.call("mail/send", { to: "erin@example.com", subject: "x", body: "y" }, { token: mailer.token, method: "POST" });
    expect(r.status).toBe(403);
    expect(r.body.error.policy).toBe("deny");
    // A line that is not a rule is refused by field, and nothing changes.
    await page.getByLabel("Rules for single methods").fill("delete everything");
    await page.getByRole("button", { name: "Save" }).click();
    expect(await page.locator(".alert").textContent()).toContain('no method "delete" on this instance');
    expect(await page.locator("main").textContent()).toContain("refuses sending out; 2 method rules");
    await ctx.close();
  },
);

test.skipIf(!chromiumPresent)(
  "passes axe's WCAG 2.1 AA and best-practice checks in light and dark at both widths; screenshots for a look",
  async () => {
    // One request waiting, so the page shows its card.
    await post("/token/policy", { id: mailer.id, policy: { classes: { outbound: "ask" } } });
    const waiting = h.call("mail/send", { to: "frank@example.com", subject: "Quarterly report", body: "Attached are the figures for the quarter." }, { token: mailer.token, method: "POST" });
    const challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
    const consent = `/oauth/authorize?${new URLSearchParams({ client_id: client, redirect_uri: REDIRECT, response_type: "code", code_challenge: challenge, code_challenge_method: "S256", state: "x" })}`;
    const ctx = await context("light", WIDTHS.desktop, true);
    const found = await everyLook(
      await ctx.newPage(),
      h.url,
      [
        { name: "policy-approvals", path: "/approvals", ready: openWhenAsked, fullPage: true },
        { name: "policy-policy", path: `/token/policy?id=${mailer.id}`, fullPage: true },
        { name: "policy-tokens", path: "/token", part: (page) => page.locator("tbody tr", { hasText: "Newsletter script" }) },
        { name: "policy-consent", path: consent, part: (page) => page.locator("fieldset.policy") },
      ],
      { shots: ARTIFACTS },
    );
    await ctx.close();
    expect(found).toEqual({});
    const list = (await (await fetch(`${h.url}/approvals`, { headers: { cookie: s.cookie } })).json()).result.waiting;
    await post("/approvals/decide", { id: list[0].id, decision: "decline" });
    expect((await waiting).status).toBe(403);
  },
);
