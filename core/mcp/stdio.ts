// `hearth mcp`: MCP on stdin/stdout for desktop clients that launch a command.
// It talks to dispatch in-process against the local data folder, acting as
// the account of HEARTH_TOKEN (with that token's scopes) or of `--user NAME`.
// Background work (plugin start hooks) stays with `hearth serve`, so running
// both on one data folder does nothing twice.
import { serveStdio, StdioServerTransport } from "@modelcontextprotocol/server/stdio";
import { findAccount } from "../auth/tokens.ts";
import { parseFlags } from "../cli/args.ts";
import type { CliCommand } from "../cli/commands.ts";
import { asHearthError } from "../errors.ts";
import type { Caller } from "../plugin.ts";
import { parseMode, type ToolsMode } from "./discover.ts";
import { createEraServer } from "./modern.ts";
import { parseFilter } from "./tools.ts";

const USAGE = "usage: hearth mcp [--user NAME] [--tools notes,tasks] [--mode discover]   (acts as HEARTH_TOKEN's account unless --user is given)";
const err = (s: string) => process.stderr.write(s + "\n");

export const mcpCommand: CliCommand = {
  summary: "serve MCP on stdin/stdout against the local data folder, for desktop clients",
  usage: USAGE,
  async run(argv, hearth) {
    const { flags, rest } = parseFlags(argv);
    if (rest.length || flags.has("help")) {
      err(USAGE);
      return 2;
    }
    const user = flags.get("user")?.[0];
    if (user === "true") {
      err(USAGE);
      return 2;
    }
    let mode: ToolsMode;
    try {
      mode = parseMode(flags.get("mode")?.[0], "--mode");
    } catch (e) {
      err(`${asHearthError(e).message}\n${USAGE}`);
      return 2;
    }
    const token = process.env.HEARTH_TOKEN ?? "";
    if (!user && !token) {
      err(`hearth mcp needs to know whom it acts for: set HEARTH_TOKEN to a token of this instance, or pass --user NAME\n${USAGE}`);
      return 2;
    }
    const rt = await hearth.open();
    rt.migrate();
    let callerNow: () => Caller | Promise<Caller>;
    try {
      if (user) {
        const account = await findAccount(rt.store, user.toLowerCase());
        if (!account) {
          err(`no account "${user}" in ${rt.dataDir}; create one with: hearth token create --user ${user}`);
          await rt.stop();
          return 1;
        }
        const caller: Caller = { account, scopes: "*", via: "local" };
        callerNow = () => caller;
      } else {
        // Checked now so a bad token fails at launch, and again on each call so revocation and expiry hold.
        await rt.tokens.identify(token, rt.clock.now().getTime());
        callerNow = () => rt.tokens.identify(token, rt.clock.now().getTime());
      }
    } catch (e) {
      err(`HEARTH_TOKEN: ${asHearthError(e).message} (in ${rt.dataDir})`);
      await rt.stop();
      return 1;
    }
    const filter = parseFilter(flags.get("tools")?.[0]);
    // SDK 2.x serves both eras here: a connection opening with initialize stays a 2025-11-25 one,
    // one opening with server/discover or an enveloped request speaks 2026-07-28.
    const transport = new StdioServerTransport();
    // Start-up is over: what runs from now on is what calls need, compiled as usual (core/build.ts starts the binary with a reluctant JIT).
    Bun.unsafe.setJITPolicy(1);
    const handle = serveStdio((era) => createEraServer(rt, async () => ({ caller: await callerNow(), filter, baseUrl: "", mode }), era), {
      transport,
      legacy: "serve",
      onerror: (e) => err(`hearth mcp: ${e.message}`),
    });
    await new Promise<void>((resolve) => {
      const sdkClosed = transport.onclose;
      transport.onclose = () => {
        sdkClosed?.();
        resolve();
      };
      const stop = () => void handle.close().then(resolve, resolve);
      process.stdin.once("end", stop);
      process.once("SIGTERM", stop);
      process.once("SIGINT", stop);
    });
    await rt.stop();
    return 0;
  },
};
