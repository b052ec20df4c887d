// Builds an outgoing message as it travels: MIME by nodemailer's composer,
// then a DKIM signature by mailauth over exactly those bytes.
// The libraries load on first use: an instance without a mail domain never needs them, and they cost a start-up half a second.
import type { DkimKey } from "./dkim.ts";

export interface Outgoing {
  from: string;
  to: string;
  subject: string;
  body: string;
  /** Without angle brackets. */
  messageId: string;
  date: Date;
  inReplyTo?: string | null;
  /** Without angle brackets, oldest first. */
  references?: string[];
}

export async function compose(m: Outgoing, sign: { domain: string; key: DkimKey } | null): Promise<string> {
  const { default: MailComposer } = await import("nodemailer/lib/mail-composer");
  const mail = new MailComposer({
    from: m.from,
    to: m.to,
    subject: m.subject,
    text: m.body,
    messageId: `<${m.messageId}>`,
    date: m.date,
    inReplyTo: m.inReplyTo ? `<${m.inReplyTo}>` : undefined,
    references: m.references?.length ? m.references.map((r) => `<${r}>`) : undefined,
  });
  const raw = (await mail.compile().build()).toString("utf8");
  if (!sign) return raw;
  const { dkimSign } = await import("mailauth");
  // mailauth reads the keys from signatureData; top-level signingDomain/selector/privateKey are ignored.
  const signed = await dkimSign(raw, {
    canonicalization: "relaxed/relaxed",
    signTime: m.date,
    signatureData: [{ signingDomain: sign.domain, selector: sign.key.selector, privateKey: sign.key.privateKey }],
  } as never);
  if (!signed.signatures) throw new Error("DKIM signing produced no signature");
  if (signed.errors?.length) throw new Error(`DKIM signing failed: ${signed.errors.map((e) => e.err?.message ?? String(e.err)).join("; ")}`);
  return signed.signatures + raw;
}
