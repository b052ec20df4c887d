// CLI commands beyond `serve`, `help` and `<service> <method>`. Modules
// declare theirs (e.g. `mcp`, `credits`), so the CLI's dispatcher stays generic.
import type { Runtime } from "../runtime.ts";

/** What a command is handed to reach the instance: the wiring opens it, so commands import no wiring. */
export interface CliHost {
  /** Opens the instance on the data folder the settings name (not yet migrated or started). */
  open(): Promise<Runtime>;
  /** The services this instance would serve, without opening its data: built-in, drop-in (HEARTH_PLUGINS), and the names the core keeps for itself. */
  services(): Promise<{ plugins: Map<string, { file: string; builtin: boolean }>; reserved: Set<string> }>;
}

export interface CliCommand {
  summary: string;
  usage: string;
  /** Returns the exit code: 0 ok, 1 refused, 2 usage. */
  run(argv: string[], hearth: CliHost): Promise<number>;
}
