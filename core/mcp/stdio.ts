// `hearth mcp`: MCP on stdin/stdout for desktop clients that launch a command.
// It talks to dispatch in-process against the local data folder, acting as
// the account of HEARTH_TOKEN (with that token's scopes) or of `--user NAME`.
// Background work (plugin start hooks) stays with `hearth serve`, so running
// both on one data folder does nothing twice, with one exception: the outbox.
// Outside mail this process queues is delivered by it at once (and retried on
// its own timer while it runs), as the serving instance's outbox would only
// see it when its timer next woke, up to an hour later. Both outboxes claim a
// row before sending it, so a message still goes once.
import { serveStdio, StdioServerTransport } from "@modelcontextprotocol/server/stdio";
import { findAccount, TokenCache } from "../auth/tokens.ts";
import { parseFlags } from "../cli/args.ts";
import type { CliCommand } from "../cli/commands.ts";
import { asHearthError } from "../errors.ts";
import { mailOf } from "../mail/index.ts";
import type { Caller } from "../plugin.ts";
import { parseMode, type ToolsMode } from "./discover.ts";
import { isRecord } from "./envelope.ts";
import { createEraServer } from "./modern.ts";
import { callParamsError, errorAnswer, INVALID_PARAMS, RESOURCE_NOT_FOUND } from "./rpc.ts";
import { parseFilter } from "./tools.ts";

const USAGE = "usage: hearth mcp [--user NAME] [--tools notes,tasks] [--mode discover]   (acts as HEARTH_TOKEN's account unless --user is given)";
const err = (s: string) => process.stderr.write(s + "\n");

type Message = Parameters<StdioServerTransport["send"]>[0];

/**
 * The stdio transport, with what /mcp does in front of the SDK done here too:
 * tools/call params the SDK would answer with its schema's dump are refused
 * saying what is wrong, and on a 2025-11-25 connection (one that opened with
 * initialize) a resource that does not exist is -32002, as that revision
 * says; the SDK gives every era 2026-07-28's -32602 (its data, the URI, is
 * the same).
 */
function checked(transport: StdioServerTransport): StdioServerTransport {
  let legacy = false;
  let inner: StdioServerTransport["onmessage"];
  const onmessage = (message: Message) => {
    const m: unknown = message;
    if (isRecord(m) && m.method === "initialize") legacy = true;
    const bad = callParamsError(m);
    if (bad && isRecord(m) && "id" in m) return void transport.send(errorAnswer(m, bad) as Message).catch(() => {});
    inner?.(message);
  };
  // The SDK sets onmessage once it connects; the class keeps it in a field of the instance.
  Object.defineProperty(transport, "onmessage", { configurable: true, get: () => (inner ? onmessage : undefined), set: (fn) => (inner = fn) });
  const send = transport.send.bind(transport);
  transport.send = (message) => {
    const m: unknown = message;
    if (legacy && isRecord(m) && isRecord(m.error) && m.error.code === INVALID_PARAMS && isRecord(m.error.data) && typeof m.error.data.uri === "string" && Object.keys(m.error.data).length === 1)
      return send({ ...m, error: { ...m.error, code: RESOURCE_NOT_FOUND } } as Message);
    return send(message);
  };
  return transport;
}

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
        // Checked now so a bad token fails at launch, and again in the database on each call so revocation and expiry
        // hold from the next call: this process hears of no revocation (the server or the CLI revoke elsewhere), so it keeps no token cached.
        const tokens = new TokenCache(rt.store, rt.shared, -1);
        await tokens.identify(token, rt.clock.now().getTime());
        callerNow = () => tokens.identify(token, rt.clock.now().getTime());
      }
    } catch (e) {
      err(`HEARTH_TOKEN: ${asHearthError(e).message} (in ${rt.dataDir})`);
      await rt.stop();
      return 1;
    }
    const filter = parseFilter(flags.get("tools")?.[0]);
    // SDK 2.x serves both eras here: a connection opening with initialize stays a 2025-11-25 one,
    // one opening with server/discover or an enveloped request speaks 2026-07-28.
    const transport = checked(new StdioServerTransport());
    // Start-up is over: what runs from now on is what calls need, compiled as usual (core/build.ts starts the binary with a reluctant JIT).
    Bun.unsafe.setJITPolicy(1);
    const outbox = mailOf(rt).outbox;
    outbox.start();
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
    outbox.stop();
    await outbox.settled();
    await rt.stop();
    return 0;
  },
};
