// `hearth health`: asks the server on this machine whether it answers, for
// container health checks in images that carry no curl or shell.
import type { CliCommand } from "../../cli/commands.ts";
import { coreSettings, resolveConfig } from "../../config.ts";

export const healthCommand: CliCommand = {
  summary: "exit 0 when the server on this machine answers /health, 1 when it does not",
  usage: "hearth health [--url http://127.0.0.1:8080]",
  async run(argv) {
    const i = argv.indexOf("--url");
    const config = resolveConfig(coreSettings, process.env);
    const base = (i >= 0 && argv[i + 1]) || `http://127.0.0.1:${config.PORT}`;
    try {
      const res = await fetch(`${base.replace(/\/+$/, "")}/health`, { signal: AbortSignal.timeout(3000) });
      if (res.status === 200) return 0;
      process.stderr.write(`${base}/health answered ${res.status}\n`);
    } catch (e) {
      process.stderr.write(`${base}/health did not answer: ${(e as Error).message}\n`);
    }
    return 1;
  },
};
