// CLI commands beyond `serve`, `help` and `<service> <method>`. Modules add
// theirs here (e.g. `mcp`, `credits`), so the CLI's dispatcher stays generic.
export interface CliCommand {
  summary: string;
  usage: string;
  /** Returns the exit code: 0 ok, 1 refused, 2 usage. */
  run(argv: string[]): Promise<number>;
}

export const cliCommands = new Map<string, CliCommand>();
