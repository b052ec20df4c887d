// `hearth ai status`: which model server and models this instance would use.
// `hearth ai usage [--days N]`: requests and tokens per service and model.
import { parseFlags } from "../cli/args.ts";
import type { CliCommand } from "../cli/commands.ts";
import { findProvider } from "./provider.ts";
import { usageSince } from "./usage.ts";

const USAGE = "usage: hearth ai status\n       hearth ai usage [--days N]";

export const aiCommand: CliCommand = {
  summary: "show the model provider in use, or the tokens spent per service and model",
  usage: USAGE,
  async run(argv, hearth) {
    const [sub, ...rest] = argv;
    const { flags } = parseFlags(rest);
    if (sub !== "status" && sub !== "usage") {
      process.stderr.write(USAGE + "\n");
      return 2;
    }
    const rt = await hearth.open();
    try {
      if (sub === "status") {
        const { provider, why } = await findProvider(rt);
        const image = rt.config.AI_IMAGE_MODEL || null;
        process.stdout.write(
          JSON.stringify(provider ? { configured: true, source: provider.source, server: provider.label, model: provider.model, extract_model: provider.extractModel, image_model: image } : { configured: false, why, image_model: image }) + "\n",
        );
        return provider ? 0 : 1;
      }
      const raw = flags.get("days")?.[0] ?? "30";
      const days = Number(raw);
      if (!Number.isFinite(days) || days <= 0) {
        process.stderr.write(`--days must be a positive number (got "${raw}")\n${USAGE}\n`);
        return 2;
      }
      rt.migrate();
      const since = rt.clock.now().getTime() - days * 86_400_000;
      process.stdout.write(JSON.stringify({ since: new Date(since).toISOString(), usage: await usageSince(rt, since) }) + "\n");
      return 0;
    } finally {
      await rt.stop();
    }
  },
};
