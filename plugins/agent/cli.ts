// `hearth ask "..." [--agent NAME] [--conversation ID] [--json]`: asks the
// running instance's agent over HTTP (HEARTH_URL, HEARTH_TOKEN), so the turn is
// recorded on the instance like any other and recall finds it under cli.
import { parseFlags, asHearthError, type CliCtx, type CliDef } from "hearth";

const USAGE = 'usage: hearth ask "what to ask or have done" [--agent NAME] [--conversation ID] [--json]';

export async function askCommand(argv: string[], ctx: CliCtx): Promise<number> {
  const { flags, rest } = parseFlags(argv);
  const prompt = rest.join(" ").trim();
  if (!prompt) {
    ctx.err(USAGE);
    return 2;
  }
  if (!ctx.config.HEARTH_TOKEN) {
    ctx.err("hearth ask needs a token: set HEARTH_TOKEN (make one with `hearth token create --user NAME`)");
    return 2;
  }
  const args: Record<string, string> = { prompt };
  for (const k of ["agent", "conversation"]) {
    const v = flags.get(k)?.at(-1);
    if (v) args[k] = v;
  }
  let result: { answer: string; conversation: string; stopped: string | null };
  try {
    result = (await ctx.call("agent", "ask", args)) as typeof result;
  } catch (e) {
    const err = asHearthError(e);
    ctx.err(`${err.kind} (${err.status}): ${err.message}`);
    return 1;
  }
  if (flags.has("json")) ctx.out(JSON.stringify(result));
  else {
    ctx.out(result.answer);
    ctx.err(`(conversation ${result.conversation}; continue it with --conversation ${result.conversation})`);
  }
  return 0;
}

export const agentCli: Record<string, CliDef> = {
  ask: { summary: "ask your agent on the running instance", usage: USAGE, run: askCommand },
};
