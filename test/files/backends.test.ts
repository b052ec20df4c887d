// The flows that keep bytes as blobs — files put, served whole and by range,
// shared between accounts and deleted; mail arriving with an attachment;
// backup and restore — run the same on both blob stores: the data folder and
// an S3-compatible bucket (a loopback S3 server), through the real HTTP and
// SMTP stacks. With the bucket, nothing lands under the data folder's blobs/.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import nodemailer from "nodemailer";
import { findAccount } from "../../core/auth/tokens.ts";
import { mailOf } from "../../core/mail/index.ts";
import { mailMessages } from "../../core/mail/schema.ts";
import { dbEnv, startHearth, type Hearth } from "../harness.ts";
import { startDns } from "../mail/dns.ts";
import { startS3 } from "../s3.ts";

const MAIN = join(import.meta.dir, "..", "..", "core", "cli", "main.ts");
const b64 = (b: Uint8Array) => Buffer.from(b).toString("base64");
const sha = (b: Uint8Array) => new Bun.CryptoHasher("sha256").update(b).digest("hex");
const key = (hash: string) => `${hash.slice(0, 2)}/${hash.slice(2)}`;

let s3: Awaited<ReturnType<typeof startS3>>;
let dns: Awaited<ReturnType<typeof startDns>>;
let work: string;
beforeAll(async () => {
  s3 = await startS3(["hearth", "restored"]);
  dns = await startDns();
  work = mkdtempSync(join(tmpdir(), "hearth-backends-"));
});
afterAll(async () => {
  await s3.stop();
  dns.stop();
  rmSync(work, { recursive: true, force: true });
});

async function cli(args: string[], env: Record<string, string>) {
  const p = Bun.spawn(["bun", MAIN, ...args], { env: { ...process.env, HEARTH_LOG: "off", ...env }, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { out, err, code };
}

const BASE = { MAIL_DOMAIN: "example.test", SMTP_PORT: "0", SMTP_HOST: "127.0.0.1", HEARTH_METERING: "off", HEARTH_RATE_READS: "0", HEARTH_RATE_WRITES: "0" };

for (const kind of ["disk", "s3"] as const) {
  describe(`blobs on ${kind}`, () => {
    let h: Hearth;
    let alice: string;
    let bob: string;
    const env = () => ({ ...BASE, MAIL_DNS: dns.server, ...(kind === "s3" ? s3.env("hearth") : { HEARTH_BLOBS: "disk" }) });
    /** Whether the store itself (not the port) holds the blob. */
    const stored = async (hash: string) => (kind === "s3" ? s3.client("hearth").exists(key(hash)) : existsSync(join(h.dir, "blobs", key(hash))));

    beforeAll(async () => {
      h = await startHearth({ env: env() });
      alice = await h.token("alice");
      bob = await h.token("bob");
    });
    afterAll(() => h.stop());

    test("a file is stored, served whole and by range, and kept while another account holds the same bytes", async () => {
      const bytes = new Uint8Array(70_000).map((_, i) => (i * 31 + kind.length) % 256);
      const hash = sha(bytes);
      const hers = (await h.call("files/put", { name: "photo.bin", content: b64(bytes), encoding: "base64" }, { token: alice })).body.result;
      expect(await stored(hash)).toBe(true);
      // With the bucket, the data folder keeps no bytes.
      expect(existsSync(join(h.dir, "blobs"))).toBe(kind === "disk");

      const auth = { authorization: `Bearer ${alice}` };
      const whole = await fetch(`${h.url}/files/${hers.id}`, { headers: auth });
      expect(whole.status).toBe(200);
      expect(whole.headers.get("etag")).toBe(`"${hash}"`);
      expect(new Uint8Array(await whole.arrayBuffer())).toEqual(bytes);
      const part = await fetch(`${h.url}/files/${hers.id}`, { headers: { ...auth, range: "bytes=1000-1999" } });
      expect(part.status).toBe(206);
      expect(part.headers.get("content-range")).toBe(`bytes 1000-1999/${bytes.length}`);
      expect(new Uint8Array(await part.arrayBuffer())).toEqual(bytes.slice(1000, 2000));
      const tail = await fetch(`${h.url}/files/${hers.id}`, { headers: { ...auth, range: "bytes=-10" } });
      expect(new Uint8Array(await tail.arrayBuffer())).toEqual(bytes.slice(-10));
      expect((await fetch(`${h.url}/files/${hers.id}`, { headers: { ...auth, range: `bytes=${bytes.length}-` } })).status).toBe(416);
      expect((await h.call("files/get", { id: hers.id }, { token: alice })).body.result.content).toBe(b64(bytes));
      // A WebDAV HEAD gives the length without the bytes, whichever store holds them.
      const head = await fetch(`${h.url}/files/dav/photo.bin`, { method: "HEAD", headers: { authorization: `Basic ${btoa(`alice:${alice}`)}` } });
      expect(head.status).toBe(200);
      expect(head.headers.get("content-length")).toBe(String(bytes.length));
      expect(await head.text()).toBe("");

      const his = (await h.call("files/put", { name: "same.bin", content: b64(bytes), encoding: "base64" }, { token: bob })).body.result;
      expect((await h.call("files/delete", { id: hers.id }, { token: alice })).status).toBe(200);
      expect(await stored(hash)).toBe(true);
      expect((await h.call("files/get", { id: his.id }, { token: bob })).body.result.content).toBe(b64(bytes));
      expect((await h.call("files/delete", { id: his.id }, { token: bob })).status).toBe(200);
      expect(await stored(hash)).toBe(false);
    });

    test("mail arriving with an attachment keeps its whole message as a blob in the store", async () => {
      const attachment = new Uint8Array(5000).map((_, i) => (i * 13 + kind.length) % 256);
      const outside = nodemailer.createTransport({ host: "127.0.0.1", port: mailOf(h.rt).inbound.port!, secure: false, ignoreTLS: true, name: "mx.outside.test" });
      await outside.sendMail({ from: "carol@outside.test", to: "bob@example.test", subject: `Plans on ${kind}`, text: "Attached.", attachments: [{ filename: "plan.bin", content: Buffer.from(attachment) }] });
      const bobId = (await findAccount(h.rt.store, "bob"))!.id;
      const rows = await h.rt.store.rdb.select({ raw: mailMessages.raw, subject: mailMessages.subject }).from(mailMessages).where(eq(mailMessages.account, bobId)).all();
      const raw = rows.find((r) => r.subject === `Plans on ${kind}`)!.raw!;
      expect(await stored(raw)).toBe(true);
      const message = new TextDecoder().decode(await h.rt.blobs.read(raw));
      expect(message.replace(/\r?\n/g, "")).toContain(b64(attachment));
      expect(sha(await h.rt.blobs.read(raw))).toBe(raw);
    });

    test("a backup taken while serving holds the blobs, and a restore brings them back into the store", async () => {
      const bytes = new TextEncoder().encode(`kept through a backup on ${kind} ${crypto.randomUUID()}`);
      const f = (await h.call("files/put", { name: "kept.txt", content: new TextDecoder().decode(bytes) }, { token: alice })).body.result;
      const archive = join(work, `${kind}.tar`);
      const made = await cli(["backup", archive], { ...h.env, ...env() });
      expect(made.err).toBe("");
      expect(made.code).toBe(0);

      // Restored into a new folder and, with S3, an empty bucket.
      const into = join(work, `restored-${kind}`);
      const target = kind === "s3" ? s3.env("restored") : { HEARTH_BLOBS: "disk" };
      expect(await s3.keys("restored")).toEqual([]);
      const back = await cli(["restore", archive], { HEARTH_DATA: into, ...(await dbEnv(into)), ...target });
      expect(back.err).toBe("");
      expect(back.code).toBe(0);
      if (kind === "s3") {
        expect(await s3.keys("restored")).toContain(key(sha(bytes)));
        expect(existsSync(join(into, "blobs"))).toBe(false);
      } else expect(existsSync(join(into, "blobs", key(sha(bytes))))).toBe(true);

      const again = await startHearth({ env: { ...BASE, MAIL_DNS: dns.server, ...target }, dataDir: into });
      try {
        const res = await fetch(`${again.url}/files/${f.id}`, { headers: { authorization: `Bearer ${await again.token("alice")}` } });
        expect(res.status).toBe(200);
        expect(new Uint8Array(await res.arrayBuffer())).toEqual(bytes);
      } finally {
        await again.stop();
        rmSync(into, { recursive: true, force: true });
      }
    });
  });
}

describe("an S3 store set up wrong", () => {
  test("HEARTH_BLOBS=s3 without its settings answers 501 naming them, and stores nothing", async () => {
    const h = await startHearth({ env: { HEARTH_BLOBS: "s3", HEARTH_S3_ENDPOINT: s3.endpoint, HEARTH_S3_BUCKET: "", HEARTH_S3_ACCESS_KEY_ID: "", HEARTH_S3_SECRET_ACCESS_KEY: "", HEARTH_METERING: "off" } });
    try {
      const token = await h.token("alice");
      const r = await h.call("files/put", { name: "a.txt", content: "hello" }, { token });
      expect(r.status).toBe(501);
      expect(r.body.error.kind).toBe("not_configured");
      expect(r.body.error.message).toContain("HEARTH_S3_BUCKET");
      expect(r.body.error.message).toContain("HEARTH_S3_SECRET_ACCESS_KEY");
      expect(r.body.error.message).not.toContain("HEARTH_S3_ENDPOINT");
      expect(JSON.stringify((await h.call("files/list", {}, { token })).body.result)).not.toContain("a.txt");
    } finally {
      await h.stop();
    }
  });

  test("an unknown HEARTH_BLOBS answers 501 naming the choices", async () => {
    const h = await startHearth({ env: { HEARTH_BLOBS: "floppy", HEARTH_METERING: "off" } });
    try {
      const r = await h.call("files/put", { name: "a.txt", content: "hello" }, { token: await h.token("alice") });
      expect(r.status).toBe(501);
      expect(r.body.error.message).toContain("disk or s3");
    } finally {
      await h.stop();
    }
  });

  test("a bucket that cannot be reached answers 503 storage_unavailable, and the file is not recorded", async () => {
    const closed = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
    const port = closed.port;
    closed.stop(true);
    const h = await startHearth({ env: { ...s3.env("hearth"), HEARTH_S3_ENDPOINT: `http://127.0.0.1:${port}`, HEARTH_METERING: "off" } });
    try {
      const token = await h.token("alice");
      const r = await h.call("files/put", { name: "a.txt", content: "hello" }, { token });
      expect(r.status).toBe(503);
      expect(r.body.error.kind).toBe("storage_unavailable");
      expect(r.body.error.retry).toBe(true);
      expect(JSON.stringify((await h.call("files/list", {}, { token })).body.result)).not.toContain("a.txt");
    } finally {
      await h.stop();
    }
  });

  test("with HEARTH_S3_REDIRECT=on a download is a redirect to a short-lived signed URL with the file's name, as a download when it could run script", async () => {
    const h = await startHearth({ env: { ...s3.env("hearth"), HEARTH_S3_REDIRECT: "on", HEARTH_METERING: "off" } });
    try {
      const token = await h.token("alice");
      const page = `<script>alert(1)</script> ${crypto.randomUUID()}`;
      const f = (await h.call("files/put", { name: "page.html", content: page }, { token })).body.result;
      const res = await fetch(`${h.url}/files/${f.id}`, { headers: { authorization: `Bearer ${token}` }, redirect: "manual" });
      expect(res.status).toBe(302);
      const location = res.headers.get("location")!;
      expect(location.startsWith(`${s3.endpoint}/hearth/`)).toBe(true);
      expect(new URL(location).searchParams.get("X-Amz-Expires")).toBe("60");
      const got = await fetch(location);
      expect(got.status).toBe(200);
      expect(await got.text()).toBe(page);
      expect(got.headers.get("content-type")).toBe("application/octet-stream");
      expect(got.headers.get("content-disposition")).toStartWith('attachment; filename="page.html"');
    } finally {
      await h.stop();
    }
  });
});
