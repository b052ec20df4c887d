// Blobs are content-addressed, so the same bytes stored by two accounts (as a
// file, or as a message that arrived by mail) are one blob. Deleting one
// holder's copy must leave the bytes for every other holder, and remove them
// once nothing holds them any more.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import nodemailer from "nodemailer";
import { findAccount } from "../../core/auth/tokens.ts";
import { mailOf } from "../../core/mail/index.ts";
import { mailMessages } from "../../core/mail/schema.ts";
import { startHearth, type Hearth } from "../harness.ts";
import { startDns } from "../mail/dns.ts";

let dns: Awaited<ReturnType<typeof startDns>>;
let h: Hearth;
let alice: string;
let bob: string;

beforeAll(async () => {
  // SPF/DKIM/DMARC lookups of arriving mail go to this loopback server, which knows no names.
  dns = await startDns();
  h = await startHearth({ env: { MAIL_DOMAIN: "example.test", SMTP_PORT: "0", SMTP_HOST: "127.0.0.1", MAIL_DNS: dns.server, HEARTH_METERING: "off" } });
  alice = await h.token("alice");
  bob = await h.token("bob");
});
afterAll(async () => {
  await h.stop();
  dns.stop();
});

const b64 = (b: Uint8Array) => Buffer.from(b).toString("base64");

test("alice deleting her file keeps the same bytes bob holds as mail or as a file; the last holder's delete removes them", async () => {
  const outside = nodemailer.createTransport({ host: "127.0.0.1", port: mailOf(h.rt).inbound.port!, secure: false, ignoreTLS: true, name: "mx.outside.test" });
  await outside.sendMail({ from: "carol@outside.test", to: "bob@example.test", subject: "Seeds", text: "The seed list is attached in spirit." });
  const bobId = (await findAccount(h.rt.store, "bob"))!.id;
  const [arrived] = await h.rt.store.rdb.select({ raw: mailMessages.raw }).from(mailMessages).where(eq(mailMessages.account, bobId)).all();
  const raw = arrived.raw!;
  const bytes = await h.rt.blobs.read(raw);

  // Alice stores the very bytes of bob's message as a file, then deletes it.
  const mine = (await h.call("files/put", { name: "copy.eml", content: b64(bytes), encoding: "base64" }, { token: alice })).body.result;
  expect((await h.call("files/delete", { id: mine.id }, { token: alice })).status).toBe(200);
  expect(await h.rt.blobs.exists(raw)).toBe(true);
  expect(await h.rt.blobs.read(raw)).toEqual(bytes);

  // The same between files of two accounts, until the last one goes.
  const photo = new Uint8Array(2048).map((_, i) => (i * 7) % 251);
  const hers = (await h.call("files/put", { name: "photo.bin", content: b64(photo), encoding: "base64" }, { token: alice })).body.result;
  const his = (await h.call("files/put", { name: "same.bin", content: b64(photo), encoding: "base64" }, { token: bob })).body.result;
  expect((await h.call("files/delete", { id: hers.id }, { token: alice })).status).toBe(200);
  expect((await h.call("files/get", { id: his.id }, { token: bob })).body.result.content).toBe(b64(photo));
  const hash = new Bun.CryptoHasher("sha256").update(photo).digest("hex");
  expect(await h.rt.blobs.exists(hash)).toBe(true);
  expect((await h.call("files/delete", { id: his.id }, { token: bob })).status).toBe(200);
  expect(await h.rt.blobs.exists(hash)).toBe(false);
  // Bob's mail still holds its own bytes.
  expect(await h.rt.blobs.exists(raw)).toBe(true);
});
