// Account commands for the owner at the server's shell: set a password for an
// account the CLI made (so its owner can sign in on the web) or change one
// (signing the account out of every browser), and make an invitation link
// when sign-up is invite-only.
import { asc, eq } from "drizzle-orm";
import { parseFlags } from "../cli/args.ts";
import type { CliCommand, CliHost } from "../cli/commands.ts";
import { accounts } from "../db/schema.ts";
import { HearthError } from "../errors.ts";
import type { Runtime } from "../runtime.ts";
import { checkPassword, createInvite, setPassword } from "./people.ts";
import { ensureAccount } from "./tokens.ts";

const out = (s: string) => process.stdout.write(s + "\n");
const err = (s: string) => process.stderr.write(s + "\n");

/** The first line of stdin: a password never travels in argv, where ps and shell history see it. */
async function readLine(): Promise<string> {
  const text = await new Response(Bun.stdin.stream()).text();
  return text.split(/\r?\n/)[0] ?? "";
}

async function withRuntime<T>(hearth: CliHost, fn: (rt: Runtime) => Promise<T>): Promise<T> {
  const rt = await hearth.open();
  rt.migrate();
  try {
    return await fn(rt);
  } finally {
    await rt.stop();
  }
}

export const passwordCommand: CliCommand = {
  summary: "set an account's password from stdin (creating the account if missing), ending its browser sessions",
  usage: "echo 'new password' | hearth password --user NAME [--admin]",
  async run(argv, hearth) {
    const { flags } = parseFlags(argv);
    const user = flags.get("user")?.[0];
    if (!user || user === "true") {
      err(`usage: ${this.usage}`);
      return 2;
    }
    const password = await readLine();
    return withRuntime(hearth, async (rt) => {
      try {
        checkPassword(password, user.toLowerCase());
        const account = await ensureAccount(rt.store, user.toLowerCase(), { admin: flags.has("admin") });
        const ended = await setPassword(rt.store, account.id, account.username, password);
        out(`password set for ${account.username}${account.admin ? " (admin)" : ""}`);
        if (ended) out(`signed out of ${ended} browser session${ended === 1 ? "" : "s"}: sign in again with the new password`);
        return 0;
      } catch (e) {
        if (!(e instanceof HearthError)) throw e;
        err(`${e.field ? e.field + ": " : ""}${e.message}`);
        return 1;
      }
    });
  },
};

export const inviteCommand: CliCommand = {
  summary: "print a one-use sign-up link, made in the name of the first admin",
  usage: "hearth invite",
  async run(_argv, hearth) {
    return withRuntime(hearth, async (rt) => {
      const admin = await rt.store.rdb.select().from(accounts).where(eq(accounts.admin, true)).orderBy(asc(accounts.created)).limit(1).get();
      if (!admin) {
        err("there is no admin yet: the first person to sign up at /signup becomes the admin");
        return 1;
      }
      const inv = await createInvite(rt, { id: admin.id, username: admin.username, admin: true });
      const base = (rt.config.HEARTH_PUBLIC_URL || rt.config.HEARTH_URL).replace(/\/$/, "");
      out(`${base}/signup?invite=${inv.code}`);
      err(`works once, until ${inv.expires}`);
      return 0;
    });
  },
};
