// HEARTH_PASSWORD_COST, read once here for everything it sets the cost of:
// password hashes (core/auth/people.ts) and backup passphrases
// (core/backup/crypt.ts). A module of its own, with nothing but the errors
// beside it, so the backup commands do not load the accounts' code to read it.
import { notConfigured } from "../errors.ts";

/**
 * standard, or (test) the least each allows, so a suite signing in hundreds
 * of times and sealing backups by the dozen does not spend its CPU hashing.
 * What a hash or a file was made with is read from it, never from this.
 */
export function passwordCost(config: Readonly<Record<string, string>>): "standard" | "test" {
  const c = (config.HEARTH_PASSWORD_COST || "standard").trim().toLowerCase();
  if (c === "standard" || c === "test") return c;
  throw notConfigured(`HEARTH_PASSWORD_COST must be standard or test (it is "${config.HEARTH_PASSWORD_COST}")`);
}
