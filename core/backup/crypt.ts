// Backups leave the machine encrypted with age (age-encryption.org, the
// format's author's own library): to a passphrase, or to recipients whose
// secret keys the owner keeps off the machine. Files are streamed through,
// so a large archive never sits in memory whole.
import { chmod, rm } from "node:fs/promises";
import { passwordCost } from "../auth/cost.ts";
import { invalid, notConfigured } from "../errors.ts";
import { FILE_MODE } from "../private.ts";

const MAGIC = "age-encryption.org/v1\n";

/** Loaded when a backup is sealed or opened, not with every instance and command. */
const age = () => import("age-encryption");

/** What a backup is encrypted to: a passphrase, or one or more age recipients (age1…). */
export interface Sealing {
  passphrase?: string;
  recipients?: string[];
  /** log2 of scrypt's cost for a passphrase; the file records it, so opening one needs no setting. */
  workFactor?: number;
}

/**
 * scrypt's cost for a backup's passphrase: age's own (2^18, about a second of
 * CPU each time a backup is sealed, checked or opened), or at
 * HEARTH_PASSWORD_COST=test next to nothing, as passwords' hashes are, so a
 * suite that seals and opens backups by the dozen does not spend its CPU
 * stretching passphrases.
 */
export const SCRYPT_WORK_FACTOR = { standard: 18, test: 10 } as const;

/** The sealing the settings give; a scheduled backup is never written in the clear. */
export function sealingOf(config: Readonly<Record<string, string>>): Sealing {
  const passphrase = config.HEARTH_BACKUP_PASSPHRASE || "";
  const recipients = (config.HEARTH_BACKUP_RECIPIENTS || "")
    .split(/[\s,]+/)
    .map((r) => r.trim())
    .filter(Boolean);
  if (passphrase && recipients.length) throw invalid("HEARTH_BACKUP_RECIPIENTS", "set HEARTH_BACKUP_PASSPHRASE or HEARTH_BACKUP_RECIPIENTS, not both: age encrypts a file to one or the other");
  if (!passphrase && !recipients.length) throw notConfigured("backups are encrypted: set HEARTH_BACKUP_PASSPHRASE, or HEARTH_BACKUP_RECIPIENTS to an age public key (age1…) whose secret key you keep elsewhere");
  for (const r of recipients) if (!/^age1[0-9a-z]+$/.test(r)) throw invalid("HEARTH_BACKUP_RECIPIENTS", `${JSON.stringify(r)} is not an age recipient (one starts age1…; make one with age-keygen)`);
  return passphrase ? { passphrase, workFactor: SCRYPT_WORK_FACTOR[passwordCost(config)] } : { recipients };
}

/** Whether a file starts as an age file does. */
export async function isSealed(path: string): Promise<boolean> {
  return (await Bun.file(path).slice(0, MAGIC.length).text()) === MAGIC;
}

/** A key made for one backup and forgotten after it: the instance can check what it wrote without keeping a way to read it. */
export async function oneTimeKey(): Promise<{ identity: string; recipient: string }> {
  const { generateX25519Identity, identityToRecipient } = await age();
  const identity = await generateX25519Identity();
  return { identity, recipient: await identityToRecipient(identity) };
}

async function pipe(stream: ReadableStream<Uint8Array>, dest: string) {
  try {
    await Bun.write(dest, new Response(stream));
  } catch (e) {
    await rm(dest, { force: true });
    throw e;
  }
}

/** Encrypts `src` into `dest` to the sealing, and to `extra` recipients (a check key). */
export async function seal(src: string, dest: string, sealing: Sealing, extra: string[] = []): Promise<void> {
  const e = new (await age()).Encrypter();
  // age gives a passphrase file no other recipient, so a passphrase backup is checked with the passphrase itself.
  if (sealing.passphrase) {
    e.setPassphrase(sealing.passphrase);
    e.setScryptWorkFactor(sealing.workFactor ?? SCRYPT_WORK_FACTOR.standard);
  } else for (const r of [...(sealing.recipients ?? []), ...extra]) e.addRecipient(r);
  await pipe(await e.encrypt(Bun.file(src).stream()), dest);
  await chmod(dest, FILE_MODE).catch(() => {});
}

/**
 * Decrypts `src` into `dest` with a passphrase or age identities
 * (AGE-SECRET-KEY-1…). A wrong key, or a file changed after it was written,
 * is refused as a damaged or unreadable backup; nothing is left at `dest`.
 */
export async function unseal(src: string, dest: string, keys: { passphrase?: string; identities?: string[] }): Promise<void> {
  const d = new (await age()).Decrypter();
  if (keys.passphrase) d.addPassphrase(keys.passphrase);
  for (const i of keys.identities ?? []) d.addIdentity(i);
  if (!keys.passphrase && !keys.identities?.length)
    throw notConfigured("this backup is encrypted: set HEARTH_BACKUP_PASSPHRASE to its passphrase, or pass --identity FILE naming the age secret key (AGE-SECRET-KEY-1…) it was encrypted to");
  try {
    await pipe(await d.decrypt(Bun.file(src).stream()), dest);
  } catch (e) {
    await rm(dest, { force: true });
    throw invalid("file", `${src} cannot be decrypted with the key given, or was changed after it was written: ${(e as Error).message}`);
  }
}
