// Real SMTP on loopback both ways. Outside mail leaves through the outbox into
// a sink (as a relay, and as a recipient's MX found through DNS), signed with
// DKIM that mailauth verifies; mail from outside arrives through our SMTP
// server from nodemailer, refused at RCPT when nobody here takes it, checked
// for SPF/DKIM/DMARC against a loopback DNS server.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { generateKeyPairSync } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { authenticate } from "mailauth";
import nodemailer from "nodemailer";
import { findAccount } from "../../core/auth/tokens.ts";
import { dnsRecords } from "../../core/mail/cli.ts";
import { mailOf, type ArrivedMail } from "../../core/mail/index.ts";
import { balanceOf } from "../../core/pay/ledger.ts";
import { startHearth, TestClock, type Hearth } from "../harness.ts";
import { startDns } from "./dns.ts";
import { startSink } from "./sink.ts";

const clock = new TestClock(new Date("2026-11-21T09:00:00Z").getTime());
const senderKey = generateKeyPairSync("rsa", { modulusLength: 2048 });
const senderPub = senderKey.publicKey.export({ type: "spki", format: "der" }).toString("base64");

let dns: Awaited<ReturnType<typeof startDns>>;
let relay: Awaited<ReturnType<typeof startSink>>;
let h: Hearth;
let alice: string;

const failing = new Map<string, (attempt: number) => { code: number; message: string } | null>([
  ["flaky@outside.test", (n) => (n === 1 ? { code: 451, message: "4.3.0 try again later" } : null)],
  ["down@outside.test", () => ({ code: 451, message: "4.4.1 mailbox busy" })],
  ["gone@outside.test", () => ({ code: 550, message: "5.1.1 no such mailbox" })],
]);

beforeAll(async () => {
  dns = await startDns();
  dns.zone.set("sender.test", { TXT: ["v=spf1 ip4:127.0.0.1 -all"] });
  dns.zone.set("s1._domainkey.sender.test", { TXT: [`v=DKIM1; k=rsa; p=${senderPub}`] });
  dns.zone.set("_dmarc.sender.test", { TXT: ["v=DMARC1; p=reject"] });
  relay = await startSink({ refuse: (rcpt, n) => failing.get(rcpt)?.(n) ?? null });
  h = await startHearth({
    clock,
    env: {
      HEARTH_METER_ACCOUNTS: "all", 
      MAIL_DOMAIN: "example.test",
      SMTP_PORT: "0",
      SMTP_HOST: "127.0.0.1",
      SMTP_RELAY_URL: `smtp://127.0.0.1:${relay.port}`,
      MAIL_DNS: dns.server,
      MAIL_RETRY_MINUTES: "1,2",
      MAIL_MAX_BYTES: "60000",
    },
  });
  alice = await h.token("alice");
  await h.token("dana");
  // The records `hearth mail dns` prints are the ones published.
  const { records } = dnsRecords(h.rt.config, h.rt.dataDir);
  for (const r of records) {
    const name = r.name.replace(/\.$/, "");
    const node = dns.zone.get(name) ?? {};
    if (r.type === "TXT") node.TXT = [...(node.TXT ?? []), r.value];
    dns.zone.set(name, node);
  }
});

afterAll(async () => {
  await h.stop();
  await relay.stop();
  dns.stop();
});

const mail = () => mailOf(h.rt);
/** A client on the outside, talking to our SMTP server as another domain's server would. */
const outsider = () =>
  nodemailer.createTransport({
    host: "127.0.0.1",
    port: mail().inbound.port!,
    secure: false,
    name: "mx.sender.test",
    tls: { rejectUnauthorized: false },
    dkim: { domainName: "sender.test", keySelector: "s1", privateKey: senderKey.privateKey.export({ type: "pkcs8", format: "pem" }).toString() },
  });
const resolver = async (name: string, type: string) => {
  const node = dns.zone.get(name.toLowerCase().replace(/\.$/, ""));
  const v = type === "TXT" ? node?.TXT?.map((t) => [t]) : undefined;
  if (!v?.length) throw Object.assign(new Error(`no ${type} for ${name}`), { code: "ENOTFOUND" });
  return v;
};

describe("mail with a domain: info", () => {
  test("the address, the tagged address, and that outside mail can arrive", async () => {
    const r = await h.call("mail/info", { tag: "shop" }, { token: alice });
    expect(r.body.result).toEqual({ handle: "alice", address: "alice@example.test", outside_mail: true, tag: "shop", tagged_handle: "alice+shop", tagged_address: "alice+shop@example.test" });
  });
});

describe("inbound SMTP", () => {
  test("nodemailer's DKIM-signed mail arrives, with SPF, DKIM and DMARC passing", async () => {
    const info = await outsider().sendMail({
      from: "Bob <bob@sender.test>",
      to: "alice@example.test, dana@example.test",
      subject: "Allotment news",
      text: "The water is back on at the allotments.",
      messageId: "<allot-1@sender.test>",
    });
    expect(info.accepted).toEqual(["alice@example.test", "dana@example.test"]);
    const [m] = (await h.call("mail/inbox", {}, { token: alice })).body.result;
    expect(m).toMatchObject({ from: "Bob <bob@sender.test>", to: "alice@example.test", subject: "Allotment news", message_id: "allot-1@sender.test", tag: null });
    expect(m.body.trim()).toBe("The water is back on at the allotments.");
    expect(m.auth).toMatchObject({ spf: "pass", dkim: "pass", dkim_domains: ["sender.test"], dmarc: "pass" });
    const dana = await h.token("dana");
    expect((await h.call("mail/inbox", {}, { token: dana })).body.result[0].subject).toBe("Allotment news");
  });

  test("the same message delivered again is stored once", async () => {
    await outsider().sendMail({ from: "bob@sender.test", to: "alice@example.test", subject: "Allotment news", text: "again", messageId: "<allot-1@sender.test>" });
    const inbox = (await h.call("mail/inbox", {}, { token: alice })).body.result;
    expect(inbox.filter((m: any) => m.message_id === "allot-1@sender.test")).toHaveLength(1);
  });

  test("mail unsigned from an address SPF does not allow is kept with the failing verdict", async () => {
    dns.zone.set("strict.test", { TXT: ["v=spf1 ip4:192.0.2.1 -all"] });
    dns.zone.set("_dmarc.strict.test", { TXT: ["v=DMARC1; p=reject"] });
    const plain = nodemailer.createTransport({ host: "127.0.0.1", port: mail().inbound.port!, secure: false, ignoreTLS: true, name: "mx.strict.test" });
    await plain.sendMail({ from: "eve@strict.test", to: "alice@example.test", subject: "Invoice", text: "Pay now." });
    const [m] = (await h.call("mail/inbox", {}, { token: alice })).body.result;
    expect(m.subject).toBe("Invoice");
    expect(m.auth).toMatchObject({ spf: "fail", dkim: "none", dmarc: "fail" });
  });

  test("unknown recipients and other domains are refused at RCPT, and nothing is stored", async () => {
    const before = (await h.call("mail/search", { query: "ghost" }, { token: alice })).body.result.length;
    const err = (await outsider()
      .sendMail({ from: "bob@sender.test", to: "nobody@example.test", subject: "ghost", text: "boo" })
      .catch((e) => e)) as { responseCode?: number; rejected?: string[]; message: string };
    expect(err.responseCode).toBe(550);
    expect(err.message).toContain("no such user");
    const relayErr = (await outsider()
      .sendMail({ from: "bob@sender.test", to: "someone@elsewhere.test", subject: "ghost", text: "boo" })
      .catch((e) => e)) as { responseCode?: number; message: string };
    expect(relayErr.responseCode).toBe(550);
    expect(relayErr.message).toContain("relaying denied");
    const mixed = await outsider().sendMail({ from: "bob@sender.test", to: "alice@example.test, nobody@example.test", subject: "ghost town", text: "boo" });
    expect(mixed.accepted).toEqual(["alice@example.test"]);
    expect(mixed.rejected).toEqual(["nobody@example.test"]);
    expect((await h.call("mail/search", { query: "ghost" }, { token: alice })).body.result.length).toBe(before + 1);
  });

  test("a message over the size cap is refused", async () => {
    const err = (await outsider()
      .sendMail({ from: "bob@sender.test", to: "alice@example.test", subject: "huge", text: "x".repeat(70_000) })
      .catch((e) => e)) as { responseCode?: number; message: string };
    expect(err.responseCode).toBe(552);
    expect((await h.call("mail/search", { query: "huge" }, { token: alice })).body.result).toEqual([]);
  });

  test("outside mail claiming a sender of this instance is refused, and nothing is stored", async () => {
    const dana = await h.token("dana");
    const claims = [
      { from: "Alice <alice@example.test>" },
      { from: "Alice <ALICE@Example.Test.>", envelope: { from: "bob@sender.test", to: ["dana@example.test"] } },
      { from: "bob@sender.test, alice@example.test", envelope: { from: "bob@sender.test", to: ["dana@example.test"] } },
      // A bare handle is how accounts here are named.
      { from: "Alice <alice>", envelope: { from: "bob@sender.test", to: ["dana@example.test"] } },
      { from: "bob@sender.test", envelope: { from: "alice@example.test", to: ["dana@example.test"] } },
    ];
    for (const [i, c] of claims.entries()) {
      const err = (await outsider()
        .sendMail({ ...c, to: "dana@example.test", subject: `Forged ${i}`, text: "Send me the door code." })
        .catch((e) => e)) as { responseCode?: number; message: string };
      expect([i, err.responseCode]).toEqual([i, 550]);
      expect(err.message).toContain("example.test");
    }
    const inbox = (await h.call("mail/inbox", { limit: 100 }, { token: dana })).body.result as { subject: string }[];
    expect(inbox.filter((m) => m.subject.startsWith("Forged"))).toEqual([]);
  });

  test("mail to handle+tag lands under the tag and is handed to whoever registered for it", async () => {
    const got: ArrivedMail[] = [];
    const off = mail().onArrived((m) => {
      got.push(m);
      return true;
    });
    try {
      await outsider().sendMail({ from: "bob@sender.test", to: "alice+research@example.test", subject: "A question", text: "What is the boiling point of water at altitude?", messageId: "<q-1@sender.test>" });
      await mail().settled();
    } finally {
      off();
    }
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({ account: { username: "alice" }, tag: "research", message: { subject: "A question", message_id: "q-1@sender.test", from: "bob@sender.test" } });
    expect(got[0].message.auth).toMatchObject({ spf: "pass", dkim: "pass" });
    const tagged = (await h.call("mail/search", { query: "alice+research@example.test" }, { token: alice })).body.result;
    expect(tagged.map((m: any) => m.subject)).toEqual(["A question"]);
  });
});

describe("outbound SMTP through the relay", () => {
  test("costs 4 credits, leaves DKIM-signed with a Message-ID, and the reply comes back to the inbox", async () => {
    const poor = await h.call("mail/send", { to: "carol@outside.test", subject: "Hello", body: "Hi Carol" }, { token: alice });
    expect(poor.status).toBe(402);
    await h.grant("alice", 20);
    const acct = (await findAccount(h.rt.store, "alice"))!;
    const r = await h.call("mail/send", { to: "Carol@Outside.test", subject: "Hello", body: "Hi Carol, the jam is ready." }, { token: alice });
    expect(r.status).toBe(200);
    expect(r.body.result).toMatchObject({ to: "Carol@outside.test", delivery: "queued" });
    const got = await relay.next();
    await mail().outbox.runDue();
    expect(await balanceOf(h.rt.store.rdb, acct.id)).toBe(16);
    expect(got.from).toBe("alice@example.test");
    expect(got.to).toEqual(["Carol@outside.test"]);
    expect(got.raw).toContain(`Message-ID: <${r.body.result.message_id}>`);
    expect(got.raw).toMatch(/^DKIM-Signature: .*d=example\.test/);
    const verdict = await authenticate(got.raw, { ip: "127.0.0.1", helo: "example.test", sender: "alice@example.test", mta: "mx.outside.test", resolver: resolver as never });
    expect(verdict.dkim.results[0]).toMatchObject({ signingDomain: "example.test", selector: "hearth", status: { result: "pass" } });
    const [sent] = (await h.call("mail/search", { query: "jam" }, { token: alice })).body.result;
    expect(sent).toMatchObject({ folder: "sent", delivery: "sent", to: "Carol@outside.test" });

    // Carol answers; the reply threads onto the message and lands in alice's inbox.
    await outsider().sendMail({
      from: "carol@sender.test",
      to: "alice@example.test",
      subject: "Re: Hello",
      text: "Lovely, two jars please.",
      inReplyTo: `<${r.body.result.message_id}>`,
      references: [`<${r.body.result.message_id}>`],
    });
    const [reply] = (await h.call("mail/inbox", { limit: 1 }, { token: alice })).body.result;
    expect(reply).toMatchObject({ subject: "Re: Hello", in_reply_to: r.body.result.message_id });

    // Answering it sets In-Reply-To and References on the wire.
    const answer = await h.call("mail/send", { to: "carol@sender.test", subject: "Re: Hello", body: "Two jars it is." }, { token: alice });
    expect(answer.status).toBe(200);
    const wire = await relay.next();
    await mail().outbox.runDue();
    expect(wire.raw).toContain(`In-Reply-To: <${reply.message_id}>`);
    expect(wire.raw.replace(/\r\n /g, " ")).toContain(`References: <${r.body.result.message_id}> <${reply.message_id}>`);
  });

  test("a refused try is retried after the pause on the instance clock, then delivered", async () => {
    await h.grant("alice", 20);
    const r = await h.call("mail/send", { to: "flaky@outside.test", subject: "Retry me", body: "Second time lucky." }, { token: alice });
    expect(r.status).toBe(200);
    // The first try starts on its own once the send commits; runDue waits for it.
    await mail().outbox.runDue();
    expect(relay.attempts.get("flaky@outside.test")).toBe(1);
    clock.advance(59_000);
    expect(await mail().outbox.runDue()).toEqual({ sent: 0, retrying: 0, bounced: 0 });
    expect(relay.attempts.get("flaky@outside.test")).toBe(1);
    clock.advance(1_000);
    const next = relay.next();
    expect(await mail().outbox.runDue()).toEqual({ sent: 1, retrying: 0, bounced: 0 });
    expect((await next).to).toEqual(["flaky@outside.test"]);
    expect(relay.attempts.get("flaky@outside.test")).toBe(2);
  });

  test("after the last try the sender gets a bounce; a permanent refusal bounces at once", async () => {
    await h.grant("alice", 20);
    const r = await h.call("mail/send", { to: "down@outside.test", subject: "Busy line", body: "Are you there?" }, { token: alice });
    await mail().outbox.runDue();
    clock.advance(60_000);
    expect(await mail().outbox.runDue()).toEqual({ sent: 0, retrying: 1, bounced: 0 });
    clock.advance(120_000);
    expect(await mail().outbox.runDue()).toEqual({ sent: 0, retrying: 0, bounced: 1 });
    expect(relay.attempts.get("down@outside.test")).toBe(3);
    const [bounce] = (await h.call("mail/inbox", { limit: 1 }, { token: alice })).body.result;
    expect(bounce).toMatchObject({ subject: "Undelivered: Busy line", in_reply_to: r.body.result.message_id });
    expect(bounce.from).toContain("mailer-daemon@example.test");
    expect(bounce.body).toContain("after 3 tries");
    expect(bounce.body).toContain("mailbox busy");
    expect((await h.call("mail/search", { query: "busy line" }, { token: alice })).body.result.find((m: any) => m.folder === "sent")).toMatchObject({ delivery: "bounced" });

    const g = await h.call("mail/send", { to: "gone@outside.test", subject: "Anyone?", body: "Hello?" }, { token: alice });
    await mail().outbox.runDue();
    const [b2] = (await h.call("mail/inbox", { limit: 1 }, { token: alice })).body.result;
    expect(b2).toMatchObject({ subject: "Undelivered: Anyone?", in_reply_to: g.body.result.message_id });
    expect(b2.body).toContain("refused");
    expect(relay.attempts.get("gone@outside.test")).toBe(1);
  });

  test("local recipients cost nothing even at the mail domain", async () => {
    const dana = await h.token("dana");
    const r = await h.call("mail/send", { to: "alice@example.test", subject: "Free", body: "This stays here." }, { token: dana });
    expect(r.status).toBe(200);
    expect(r.body.result.delivery).toBe("local");
    expect((await h.call("mail/send", { to: "ghost@example.test", subject: "x", body: "y" }, { token: dana })).status).toBe(404);
  });
});

describe("outbound SMTP straight to the recipient's MX", () => {
  test("the MX found through DNS gets the message over STARTTLS", async () => {
    const mx = await startSink({ starttls: true });
    dns.zone.set("faraway.test", { MX: [{ preference: 10, exchange: "mx.faraway.test" }] });
    dns.zone.set("mx.faraway.test", { A: ["127.0.0.1"] });
    const direct = await startHearth({ clock, env: { MAIL_DOMAIN: "direct.test", SMTP_PORT: "off", MAIL_DNS: dns.server, MAIL_MX_PORT: String(mx.port), MAIL_MX_ALLOW_LOOPBACK: "true", HEARTH_METERING: "off" } });
    try {
      const t = await direct.token("erin");
      const r = await direct.call("mail/send", { to: "frank@faraway.test", subject: "Direct", body: "No relay in between." }, { token: t });
      expect(r.status).toBe(200);
      const got = await mx.next();
      await mailOf(direct.rt).outbox.runDue();
      expect(got).toMatchObject({ from: "erin@direct.test", to: ["frank@faraway.test"], secure: true });
      expect(got.raw).toContain("d=direct.test");
      expect((await direct.call("mail/info", {}, { token: t })).body.result.outside_mail).toBe(false);
    } finally {
      await direct.stop();
      await mx.stop();
    }
  });
});

describe("outbound SMTP straight to an MX reaches only public addresses", () => {
  test("an address, a domain or an MX leading to this machine, its network or a metadata service opens no session; the sender is told why", async () => {
    const mx = await startSink();
    dns.zone.set("inside.test", { MX: [{ preference: 10, exchange: "mx.inside.test" }] });
    dns.zone.set("mx.inside.test", { A: ["127.0.0.1"] });
    // No MX: the domain itself is the mail server.
    dns.zone.set("self.test", { A: ["127.0.0.1"] });
    dns.zone.set("lan.test", { MX: [{ preference: 10, exchange: "mx.lan.test" }] });
    dns.zone.set("mx.lan.test", { A: ["192.168.1.20"] });
    dns.zone.set("cloud.test", { MX: [{ preference: 10, exchange: "metadata.cloud.test" }] });
    dns.zone.set("metadata.cloud.test", { A: ["169.254.169.254"] });
    dns.zone.set("named.test", { MX: [{ preference: 10, exchange: "localhost" }] });
    const guarded = await startHearth({ clock, env: { MAIL_DOMAIN: "guarded.test", SMTP_PORT: "off", MAIL_DNS: dns.server, MAIL_MX_PORT: String(mx.port), HEARTH_METER_ACCOUNTS: "all" } });
    try {
      const t = await guarded.token("gina");
      await guarded.grant("gina", 40);
      const acct = (await findAccount(guarded.rt.store, "gina"))!;
      const outbox = mailOf(guarded.rt).outbox;

      // An address for a domain is refused at once: nothing queued, nothing charged.
      for (const to of ["root@127.0.0.1", "root@127.1", "root@mail.localhost"]) {
        const r = await guarded.call("mail/send", { to, subject: "Hi", body: "AUTH LOGIN" }, { token: t });
        expect(r.status).toBe(400);
        expect(r.body.error.field).toBe("to");
        expect(r.body.error.message).toContain("public internet addresses");
      }
      expect(await balanceOf(guarded.rt.store.rdb, acct.id)).toBe(40);

      // Known only after DNS: queued and paid for like any outside mail, then bounced without a session.
      const cases = [
        ["someone@inside.test", "mx.inside.test (127.0.0.1), is a loopback address"],
        ["someone@self.test", "self.test (127.0.0.1), is a loopback address"],
        ["someone@lan.test", "mx.lan.test (192.168.1.20), is a private network address"],
        ["someone@cloud.test", "metadata.cloud.test (169.254.169.254), is a cloud metadata service"],
        ["someone@named.test", "localhost, is a loopback address"],
      ];
      for (const [to, why] of cases) {
        const r = await guarded.call("mail/send", { to, subject: `To ${to}`, body: "QUIT" }, { token: t });
        expect(r.status).toBe(200);
        expect(r.body.result.delivery).toBe("queued");
        await outbox.runDue();
        const [bounce] = (await guarded.call("mail/inbox", { limit: 1 }, { token: t })).body.result;
        expect(bounce).toMatchObject({ subject: `Undelivered: To ${to}`, in_reply_to: r.body.result.message_id });
        expect(bounce.body).toContain("It was refused");
        expect(bounce.body).toContain(why);
      }
      expect(await balanceOf(guarded.rt.store.rdb, acct.id)).toBe(40 - 4 * cases.length);
      expect(mx.connections).toBe(0);
      expect(mx.received).toEqual([]);
    } finally {
      await guarded.stop();
      await mx.stop();
    }
  });

  test("the relay the owner set is reached wherever it is", async () => {
    // The suite's instance sends through a relay on 127.0.0.1 (see beforeAll); a recipient whose MX leads inside still goes there.
    dns.zone.set("inner.test", { MX: [{ preference: 10, exchange: "mx.inner.test" }] });
    dns.zone.set("mx.inner.test", { A: ["10.0.0.7"] });
    await h.grant("alice", 4);
    const r = await h.call("mail/send", { to: "pat@inner.test", subject: "Via the relay", body: "The owner chose this server." }, { token: alice });
    expect(r.status).toBe(200);
    const got = relay.next();
    await mail().outbox.runDue();
    expect((await got).to).toEqual(["pat@inner.test"]);
  });
});

test("hearth mail dns prints the MX, SPF, DKIM and DMARC records, with the key it signs with", async () => {
  const proc = Bun.spawn(["bun", join(import.meta.dir, "../../core/cli/main.ts"), "mail", "dns"], {
    env: { ...process.env, ...h.env, MAIL_DOMAIN: "example.test", HEARTH_LOG: "off" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const out = await new Response(proc.stdout).text();
  expect(await proc.exited).toBe(0);
  const key = dnsRecords(h.rt.config, h.rt.dataDir).key;
  expect(out).toContain("example.test.\t3600\tIN\tMX\t10 example.test.");
  expect(out).toContain('IN\tTXT\t"v=spf1 mx -all"');
  expect(out).toContain("hearth._domainkey.example.test.\t3600\tIN\tTXT\t\"v=DKIM1; k=rsa; p=");
  expect(out.replace(/" "/g, "")).toContain(key.publicKey);
  expect(out).toContain("_dmarc.example.test.\t3600\tIN\tTXT\t\"v=DMARC1; p=quarantine");
  // On a data folder without a key, one is made and its file named.
  const fresh = mkdtempSync(join(tmpdir(), "hearth-dkim-"));
  try {
    const made = Bun.spawn(["bun", join(import.meta.dir, "../../core/cli/main.ts"), "mail", "dns"], { env: { ...process.env, HEARTH_DATA: fresh, MAIL_DOMAIN: "new.test", HEARTH_LOG: "off" }, stdout: "pipe", stderr: "pipe" });
    const text = await new Response(made.stdout).text();
    expect(await made.exited).toBe(0);
    expect(text).toContain(`; made a new DKIM key: ${join(fresh, "mail", "dkim.pem")}`);
    expect(existsSync(join(fresh, "mail", "dkim.pem"))).toBe(true);
    expect(text).toContain("hearth._domainkey.new.test.");
  } finally {
    rmSync(fresh, { recursive: true, force: true });
  }
  const bare = Bun.spawn(["bun", join(import.meta.dir, "../../core/cli/main.ts"), "mail", "dns"], { env: { ...process.env, ...h.env, MAIL_DOMAIN: "" }, stdout: "pipe", stderr: "pipe" });
  expect(await bare.exited).toBe(1);
  expect(await new Response(bare.stderr).text()).toContain("MAIL_DOMAIN");
});
