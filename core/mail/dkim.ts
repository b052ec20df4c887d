// The instance's DKIM key: read from MAIL_DKIM_KEY (a PEM file), or made on
// first need under the data folder, so signing never waits on an operator.
import { createPublicKey, generateKeyPairSync } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { DIR_MODE, FILE_MODE } from "../private.ts";

export interface DkimKey {
  selector: string;
  privateKey: string;
  /** The public key as DNS publishes it: base64 SubjectPublicKeyInfo. */
  publicKey: string;
  file: string;
  created: boolean;
}

export function dkimKeyFile(config: Readonly<Record<string, string>>, dataDir: string): string {
  const f = config.MAIL_DKIM_KEY;
  if (f) return isAbsolute(f) ? f : resolve(f);
  return join(dataDir, "mail", "dkim.pem");
}

const cache = new Map<string, DkimKey>();

/** Loads the key, generating a 2048-bit RSA key (the size every verifier accepts) when the file is missing. */
export function dkimKey(config: Readonly<Record<string, string>>, dataDir: string): DkimKey {
  const file = dkimKeyFile(config, dataDir);
  const selector = config.MAIL_DKIM_SELECTOR || "hearth";
  const known = cache.get(file);
  if (known && known.selector === selector) return known;
  let created = false;
  if (!existsSync(file)) {
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    mkdirSync(dirname(file), { recursive: true, mode: DIR_MODE });
    writeFileSync(file, privateKey.export({ type: "pkcs8", format: "pem" }), { mode: FILE_MODE });
    created = true;
  }
  const pem = readFileSync(file, "utf8");
  const spki = createPublicKey(pem).export({ type: "spki", format: "der" });
  const key = { selector, privateKey: pem, publicKey: Buffer.from(spki).toString("base64"), file, created };
  cache.set(file, { ...key, created: false });
  return key;
}

/** The TXT record value for <selector>._domainkey.<domain>. */
export const dkimRecord = (k: DkimKey) => `v=DKIM1; k=rsa; p=${k.publicKey}`;
