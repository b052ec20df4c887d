// Keys at rest: each account's private key is sealed with AES-256-GCM under a
// key derived (HKDF-SHA256) from HEARTH_SECRET, so the database alone spends nothing.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { notConfigured, type Ctx, type Db } from "hearth";
import { walletKeys } from "./schema.ts";

const MIN_SECRET = 16;

function sealingKey(config: Readonly<Record<string, string>>): Buffer {
  const secret = config.HEARTH_SECRET ?? "";
  if (secret.length < MIN_SECRET)
    throw notConfigured(`the wallet keeps keys encrypted with HEARTH_SECRET: set it to a random string of at least ${MIN_SECRET} characters (openssl rand -hex 32)`);
  return Buffer.from(hkdfSync("sha256", secret, "hearth-wallet", "wallet key sealing v1", 32));
}

export function seal(config: Readonly<Record<string, string>>, privateKey: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv("aes-256-gcm", sealingKey(config), iv);
  const body = Buffer.concat([c.update(privateKey, "utf8"), c.final()]);
  return Buffer.concat([iv, body, c.getAuthTag()]).toString("base64");
}

export function unseal(config: Readonly<Record<string, string>>, sealed: string): `0x${string}` {
  const raw = Buffer.from(sealed, "base64");
  const d = createDecipheriv("aes-256-gcm", sealingKey(config), raw.subarray(0, 12));
  d.setAuthTag(raw.subarray(raw.length - 16));
  try {
    return Buffer.concat([d.update(raw.subarray(12, raw.length - 16)), d.final()]).toString("utf8") as `0x${string}`;
  } catch {
    throw notConfigured("the wallet key cannot be opened with this HEARTH_SECRET: set the secret the wallet was made with");
  }
}

export function findWallet(db: Db, account: string): Promise<{ address: string; sealed: string } | undefined> {
  return db.select({ address: walletKeys.address, sealed: walletKeys.sealed }).from(walletKeys).where(eq(walletKeys.account, account)).get();
}

/** The caller's wallet address, made (and its key sealed) on first use. */
export async function walletAddress(ctx: Ctx): Promise<string> {
  return (await findWallet(ctx.db, ctx.account.id))?.address ?? (await ctx.writes((db) => ensureWallet(db, ctx)));
}

/**
 * Makes the caller's wallet if it has none; db is the writer, in a transaction.
 * Concurrent first requests may each make a key: the account's key (its
 * primary key) keeps the first one stored, and every request answers with it.
 */
export async function ensureWallet(db: Db, ctx: Ctx): Promise<string> {
  const found = await findWallet(db, ctx.account.id);
  if (found) return found.address;
  sealingKey(ctx.config);
  const key = generatePrivateKey();
  const address = privateKeyToAccount(key).address;
  const [made] = await db
    .insert(walletKeys)
    .values({ account: ctx.account.id, address, sealed: seal(ctx.config, key), created: ctx.clock.now().getTime() })
    .onConflictDoNothing()
    .returning({ address: walletKeys.address })
    .all();
  return made?.address ?? (await findWallet(db, ctx.account.id))!.address;
}

export async function signerOf(db: Db, ctx: Ctx): Promise<PrivateKeyAccount | null> {
  const found = await findWallet(db, ctx.account.id);
  return found ? privateKeyToAccount(unseal(ctx.config, found.sealed)) : null;
}
