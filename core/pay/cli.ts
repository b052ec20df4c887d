// `hearth credits grant --user NAME --amount N [--note TEXT]`,
// `hearth credits balance --user NAME` and
// `hearth credits meter --user NAME on|off|default`: run against the local
// database, as the instance's owner, without a running server.
import { findAccount } from "../auth/tokens.ts";
import { parseFlags } from "../cli/args.ts";
import type { CliCommand } from "../cli/commands.ts";
import { HearthError } from "../errors.ts";
import { accountMetering, chooseMetering, metersAccount, parseChoice } from "./accounts.ts";
import { grantCredits } from "./grant.ts";
import { balanceOf, recent, shapeEntry } from "./ledger.ts";

const USAGE =
  "usage: hearth credits grant --user NAME --amount N [--note TEXT]\n       hearth credits balance --user NAME\n       hearth credits meter --user NAME on|off|default   (whether its priced calls cost credits; default follows HEARTH_METER_ACCOUNTS)";

export const creditsCommand: CliCommand = {
  summary: "grant credits to an account, show its balance, or choose whether its calls cost credits",
  usage: USAGE,
  async run(argv, hearth) {
    const [sub, ...rest] = argv;
    const { flags, rest: words } = parseFlags(rest);
    const user = flags.get("user")?.[0]?.toLowerCase();
    if ((sub !== "grant" && sub !== "balance" && sub !== "meter") || !user || user === "true") {
      process.stderr.write(USAGE + "\n");
      return 2;
    }
    const choice = parseChoice(words[0]);
    if (sub === "meter" && choice === undefined) {
      process.stderr.write(`say on, off or default after --user NAME (got "${words[0] ?? ""}")\n${USAGE}\n`);
      return 2;
    }
    const rt = await hearth.open();
    try {
      rt.migrate();
      if (sub === "balance") {
        const acct = await findAccount(rt.store, user);
        if (!acct) {
          process.stderr.write(`no account named "${user}"\n`);
          return 1;
        }
        const metered = await metersAccount(rt.store.rdb, accountMetering(rt.config), acct);
        process.stdout.write(JSON.stringify({ user, balance: await balanceOf(rt.store.rdb, acct.id), metered, recent: (await recent(rt.store.rdb, acct.id, 10)).map(shapeEntry) }) + "\n");
        return 0;
      }
      if (sub === "meter") {
        const out = await rt.store.write(() => chooseMetering(rt.store.wdb, { username: user, metered: choice as boolean | null, by: "cli", at: rt.clock.now().getTime() }, accountMetering(rt.config)));
        process.stdout.write(JSON.stringify(out) + "\n");
        return 0;
      }
      const raw = flags.get("amount")?.[0] ?? "";
      const amount = Number(raw);
      if (!/^-?\d+$/.test(raw)) {
        process.stderr.write(`--amount must be a whole number of credits (got "${raw}")\n${USAGE}\n`);
        return 2;
      }
      const note = flags.get("note")?.[0];
      const out = await rt.store.write(() => grantCredits(rt.store.wdb, { username: user, amount, note, by: "cli", at: rt.clock.now().getTime() }));
      process.stdout.write(JSON.stringify(out) + "\n");
      return 0;
    } catch (e) {
      if (e instanceof HearthError) {
        process.stderr.write(`${e.kind} (${e.status}): ${e.message}\n`);
        return 1;
      }
      throw e;
    } finally {
      await rt.stop();
    }
  },
};
