// `hearth backup <file>` and `hearth restore <file> [--force]`, on the data
// folder HEARTH_DATA names. A backup runs beside a serving instance; a
// restore is for an instance that is stopped.
import type { CliCommand } from "../cli/commands.ts";
import { coreSettings, dataFolder, resolveConfig } from "../config.ts";
import { blobBackend } from "../blobs.ts";
import { defineModule } from "../module.ts";
import { backup, restore } from "./snapshot.ts";

const settings = () => resolveConfig(coreSettings, process.env);
const dataDir = () => dataFolder(settings());
/** The blob store HEARTH_BLOBS names: a bucket's blobs go into the archive and come back into it. */
const blobs = () => blobBackend(settings(), dataDir());
/** The PostgreSQL database HEARTH_DATABASE_URL names, if the instance keeps its data there. */
const database = () => settings().HEARTH_DATABASE_URL || undefined;

export const backupCommand: CliCommand = {
  summary: "write a consistent snapshot of the data folder (database, a pg_dump with HEARTH_DATABASE_URL, and blobs, from the bucket too with HEARTH_BLOBS=s3) to one archive, while serving",
  usage: "usage: hearth backup <file.tar>",
  async run(argv) {
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

export const restoreCommand: CliCommand = {
  summary: "bring a backup back into the data folder and, with HEARTH_DATABASE_URL, its database (--force replaces existing data, keeping it aside)",
  usage: "usage: hearth restore <file.tar> [--force]",
  async run(argv) {
    // --force takes no value, so it is read apart from the file name wherever it stands.
    const positional = argv.filter((a) => a !== "--force");
    if (positional.length !== 1 || positional[0].startsWith("--")) {
      process.stderr.write(`${this.usage}\n`);
      return 2;
    }
    const r = await restore(positional[0], dataDir(), { force: argv.includes("--force"), blobs: blobs(), database: database() });
    process.stdout.write(`${JSON.stringify(r)}\n`);
    return 0;
  },
};

export const backupModule = defineModule({ name: "backup", provides: { cli: { backup: backupCommand, restore: restoreCommand } } });
