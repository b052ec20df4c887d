// Parses `--name value` pairs; a bare `--flag` means true. Repeated names collect.
export function parseFlags(argv: string[]): { flags: Map<string, string[]>; rest: string[] } {
  const flags = new Map<string, string[]>();
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a.startsWith("--") && a.length > 2) {
      let name = a.slice(2);
      let value: string;
      const eq = name.indexOf("=");
      if (eq >= 0) {
        value = name.slice(eq + 1);
        name = name.slice(0, eq);
      } else if (i + 1 < argv.length && !argv[i + 1].startsWith("--")) value = argv[++i];
      else value = "true";
      const list = flags.get(name) ?? [];
      list.push(value);
      flags.set(name, list);
    } else rest.push(a);
  }
  return { flags, rest };
}
