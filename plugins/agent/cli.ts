// `hearth ask "..." [--agent NAME] [--conversation ID] [--json]`: asks the
// running instance's agent over HTTP (HEARTH_URL, HEARTH_TOKEN), so the turn is
// recorded on the instance like any other and recall finds it under cli.
import { parseFlags } from "../../core/cli/args.ts";
import { cliCommands } from "../../core/cli/commands.ts";
import { coreSettings, resolveConfig } from "../../core/config.ts";

const USAGE = 'usage: hearth ask "what to ask or have done" [--agent NAME] [--conversation ID] [--json]';

export async function askCommand(argv: string[], env: Record<string, string | undefined> = process.env): Promise<number> {
  const { flags, rest } = parseFlags(argv);
  const prompt = rest.join(" ").trim();
  if (!prompt) {
    process.stderr.write(USAGE + "\n");
    return 2;
  }
  const settings = resolveConfig(coreSettings, env);
  if (!settings.HEARTH_TOKEN) {
    process.stderr.write("hearth ask needs a token: set HEARTH_TOKEN (make one with `hearth token create --user NAME`)\n");
    return 2;
  }
  const args: Record<string, string> = { prompt };
  for (const k of ["agent", "conversation"]) {
    const v = flags.get(k)?.at(-1);
    if (v) args[k] = v;
  }
  const url = `${settings.HEARTH_URL.replace(/\/$/, "")}/api/v1/agent/ask`;
  let res: Response;
  try {
    res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${settings.HEARTH_TOKEN}` }, body: JSON.stringify(args) });
  } catch (e) {
    process.stderr.write(`cannot reach ${settings.HEARTH_URL} (${(e as Error).message}); is hearth serving there? Set HEARTH_URL.\n`);
    return 1;
  }
  const body = (await res.json().catch(() => null)) as { result?: { answer: string; conversation: string; stopped: string | null }; error?: { kind: string; message: string } } | null;
  if (!res.ok || !body?.result) {
    process.stderr.write(body?.error ? `${body.error.kind} (${res.status}): ${body.error.message}\n` : `HTTP ${res.status}\n`);
    return 1;
  }
  if (flags.has("json")) process.stdout.write(JSON.stringify(body.result) + "\n");
  else {
    process.stdout.write(body.result.answer.replace(/\n?$/, "\n"));
    process.stderr.write(`(conversation ${body.result.conversation}; continue it with --conversation ${body.result.conversation})\n`);
  }
  return 0;
}

cliCommands.set("ask", { summary: "ask your agent on the running instance", usage: USAGE, run: (argv) => askCommand(argv) });
