// `hearth backup <file>` and `hearth restore <file> [--force]`, on the data
// folder HEARTH_DATA names. A backup runs beside a serving instance; a
// restore is for an instance that is stopped. `hearth backup --now` runs one
// scheduled backup at once (encrypted, to HEARTH_BACKUP_TO, checked, pruned),
// and restore decrypts an encrypted backup first.
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import type { CliCommand } from "../cli/commands.ts";
import { coreSettings, dataFolder, resolveConfig } from "../config.ts";
import { blobBackend } from "../blobs.ts";
import { invalid } from "../errors.ts";
import { defineModule } from "../module.ts";
import { isSealed, unseal } from "./crypt.ts";
import { backupsOf } from "./schedule.ts";
import { backup, restore, workArea } from "./snapshot.ts";
import { restoreKeep } from "./swap.ts";
import { DIR_MODE } from "../private.ts";

const settings = () => resolveConfig(coreSettings, process.env);
const dataDir = () => dataFolder(settings());
/** The blob store HEARTH_BLOBS names: a bucket's blobs go into the archive and come back into it. */
const blobs = () => blobBackend(settings(), dataDir());
/** The PostgreSQL database HEARTH_DATABASE_URL names, if the instance keeps its data there. */
const database = () => settings().HEARTH_DATABASE_URL || undefined;

export const backupCommand: CliCommand = {
  summary:
    "write a consistent snapshot of the data folder (database, a pg_dump with HEARTH_DATABASE_URL, and blobs, from the bucket too with HEARTH_BLOBS=s3) to one archive, while serving; --now runs one scheduled backup at once (encrypted, to HEARTH_BACKUP_TO, read back and checked)",
  usage: "usage: hearth backup <file.tar> | hearth backup --now",
  async run(argv, host) {
    if (argv.length === 1 && argv[0] === "--now") {
      const rt = await host.open();
      try {
        // Migrated, not started: plugins' start hooks (their schedules) belong to the serving instance.
        rt.migrate();
        const r = await backupsOf(rt).runNow();
        process.stdout.write(`${JSON.stringify(r)}\n`);
        return "reason" in r ? 1 : 0;
      } finally {
        await rt.stop();
      }
    }
    const positional = argv.filter((a) => !a.startsWith("--"));
    if (positional.length !== 1 || positional.length !== argv.length) {
      process.stderr.write(`${this.usage}\n`);
      return 2;
    }
    const r = await backup(dataDir(), positional[0], { blobs: blobs(), database: database() });
    process.stdout.write(`${JSON.stringify(r)}\n`);
    return 0;
  },
};

/** The age secret keys in a key file (age-keygen's output: comments and AGE-SECRET-KEY-1… lines). */
function identitiesIn(file: string): string[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    throw invalid("identity", `cannot read the key file ${file}: ${(e as Error).message}`);
  }
  const keys = text.split("\n").map((l) => l.trim()).filter((l) => l.startsWith("AGE-SECRET-KEY-"));
  if (!keys.length) throw invalid("identity", `${file} holds no age secret key (a line AGE-SECRET-KEY-1…)`);
  return keys;
}

export const restoreCommand: CliCommand = {
  summary:
    "bring a backup back into the data folder and, with HEARTH_DATABASE_URL, its database (--force replaces existing data, keeping it aside); an encrypted one is decrypted with HEARTH_BACKUP_PASSPHRASE or --identity KEYFILE",
  usage: "usage: hearth restore <file.tar | file.tar.age> [--identity KEYFILE] [--force]",
  async run(argv, host) {
    // --force takes no value, so it is read apart from the file name wherever it stands.
    const rest: string[] = [];
    let identity: string | null = null;
    for (let i = 0; i < argv.length; i++) {
      if (argv[i] === "--force") continue;
      if (argv[i] === "--identity" && i + 1 < argv.length) identity = argv[++i];
      else rest.push(argv[i]);
    }
    if (rest.length !== 1 || rest[0].startsWith("--")) {
      process.stderr.write(`${this.usage}\n`);
      return 2;
    }
    let file = rest[0];
    let work: string | null = null;
    try {
      if (await isSealed(file)) {
        // Decrypted in the data folder's work area, which has room for what it will hold anyway.
        const area = workArea(dataDir());
        await mkdir(area, { recursive: true, mode: DIR_MODE });
        work = await mkdtemp(join(area, "decrypt-"));
        const plain = join(work, "backup.tar");
        await unseal(file, plain, { passphrase: settings().HEARTH_BACKUP_PASSPHRASE || undefined, identities: identity ? identitiesIn(identity) : [] });
        file = plain;
      }
      // Opened once restored, as the instance will open it: data this build cannot open is undone, the data before back.
      const opens = async () => {
        const rt = await host.open();
        try {
          rt.migrate();
        } finally {
          await rt.stop();
        }
      };
      const r = await restore(file, dataDir(), { force: argv.includes("--force"), blobs: blobs(), database: database(), opens, keep: restoreKeep(settings()) });
      process.stdout.write(`${JSON.stringify(r)}\n`);
      return 0;
    } finally {
      if (work) await rm(work, { recursive: true, force: true });
    }
  },
};

export const backupModule = defineModule({
  name: "backup",
  provides: { cli: { backup: backupCommand, restore: restoreCommand } },
  serving: (rt) => backupsOf(rt).start(),
});
