// Account commands for the owner at the server's shell: set a password for an
// account the CLI made (so its owner can sign in on the web) or change one
// (signing the account out of every browser), print a one-use link where the
// account's owner chooses one, and make an invitation link when sign-up is
// invite-only.
import { asc, eq } from "drizzle-orm";
import { parseFlags } from "../cli/args.ts";
import type { CliCommand, CliHost } from "../cli/commands.ts";
import { accounts } from "../db/schema.ts";
import { HearthError } from "../errors.ts";
import type { Runtime } from "../runtime.ts";
import type { Account } from "../plugin.ts";
import { checkPassword, createInvite, createPasswordLink, hasPassword, PASSWORD_LINK_HOURS, passwordLinkPath, setPassword } from "./people.ts";
import { ensureAccount, findAccount } from "./tokens.ts";
import { findPerson, resetTwoFactor } from "../settings/people.ts";

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

/** Where links the CLI prints lead: the public address when set, else the instance the CLI calls. */
export const linkBase = (config: Readonly<Record<string, string>>) => (config.HEARTH_PUBLIC_URL || config.HEARTH_URL).replace(/\/+$/, "");

/** A new one-use link to set the account's password, with what to say of it. */
export async function passwordLink(rt: Runtime, account: Account): Promise<{ url: string; expires: string }> {
  const link = await createPasswordLink(rt, account);
  return { url: linkBase(rt.config) + passwordLinkPath(link.code), expires: link.expires };
}

/**
 * What a command that made an account, or used one, tells the owner on stderr
 * (stdout carries only what scripts capture): who was made, and, while the
 * account has no password, a fresh link where its owner chooses one, so an
 * account made at the shell can always sign in on the web. Null when there
 * is nothing to say.
 */
export async function accountNote(rt: Runtime, account: Account, made: boolean): Promise<string | null> {
  const who = `${account.username}${account.admin ? ", the admin of this instance" : ""}`;
  if (await hasPassword(rt.store, account.id)) return made ? `made ${who}` : null;
  const link = await passwordLink(rt, account);
  return `${made ? `made ${who}; ${account.username}` : account.username} has no password yet: to sign in on the web, open ${link.url} to choose one (works once, for ${PASSWORD_LINK_HOURS} hours)`;
}

export const passwordCommand: CliCommand = {
  summary: "set an account's password from stdin, or print a one-use link to choose one (--link); makes the account if missing; --reset-2fa turns off its two-factor sign-in and removes its passkeys (a lost phone)",
  usage: "hearth password --user NAME [--admin] [--link | --reset-2fa]",
  async run(argv, hearth) {
    const { flags } = parseFlags(argv);
    const user = flags.get("user")?.[0];
    if (!user || user === "true") {
      err(`usage: echo 'new password' | hearth password --user NAME [--admin]\n       hearth password --user NAME [--admin] --link\n       hearth password --user NAME --reset-2fa`);
      return 2;
    }
    if (flags.has("reset-2fa"))
      return withRuntime(hearth, async (rt) => {
        try {
          const p = await findPerson(rt, user);
          const done = await resetTwoFactor(rt, p, { by: null });
          const removed = [done.totp ? "two-factor sign-in turned off" : null, done.passkeys ? `${done.passkeys} passkey${done.passkeys === 1 ? "" : "s"} removed` : null].filter(Boolean).join(", ");
          out(`${p.username}: ${removed}; signed out of ${done.sessions} browser session${done.sessions === 1 ? "" : "s"}`);
          err(
            p.hasPassword
              ? `${p.username} signs in with their password alone now, and is told what happened when they do`
              : `${p.username} has no password: make a link for them to choose one with  hearth password --user ${p.username} --link`,
          );
          return 0;
        } catch (e) {
          if (!(e instanceof HearthError)) throw e;
          err(`${e.field ? e.field + ": " : ""}${e.message}`);
          return 1;
        }
      });
    if (flags.has("link"))
      return withRuntime(hearth, async (rt) => {
        try {
          const made = !(await findAccount(rt.store, user.toLowerCase()));
          const account = await ensureAccount(rt.store, user.toLowerCase(), { admin: flags.has("admin") });
          const link = await passwordLink(rt, account);
          // The link alone on stdout, so LINK=$(hearth password --user NAME --link) captures it.
          out(link.url);
          err(`${made ? `made ${account.username}${account.admin ? ", the admin of this instance" : ""}; ` : ""}works once, until ${link.expires}: ${account.username} chooses a password there, and earlier links stop working`);
          return 0;
        } catch (e) {
          if (!(e instanceof HearthError)) throw e;
          err(`${e.field ? e.field + ": " : ""}${e.message}`);
          return 1;
        }
      });
    const password = await readLine();
    return withRuntime(hearth, async (rt) => {
      try {
        checkPassword(password, user.toLowerCase());
        const account = await ensureAccount(rt.store, user.toLowerCase(), { admin: flags.has("admin") });
        const ended = await setPassword(rt.store, rt.config, account.id, account.username, password);
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
      out(`${linkBase(rt.config)}/signup?invite=${inv.code}`);
      err(`works once, until ${inv.expires}`);
      // An admin who cannot sign in could not see who joined: say how to get in.
      const note = await accountNote(rt, { id: admin.id, username: admin.username, admin: true }, false);
      if (note) err(note);
      return 0;
    });
  },
};
