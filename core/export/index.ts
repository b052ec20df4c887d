// A person's export of all their data, as one zip (./archive.ts): a download
// at /export for the signed-in person, and `hearth export --user NAME` for
// the owner of the machine. Only the session's own account is exported: like
// /activity, it is not an API method a token could be scoped to.
import { findAccount } from "../auth/tokens.ts";
import { findSession } from "../auth/sessions.ts";
import type { CliCommand } from "../cli/commands.ts";
import { parseFlags } from "../cli/args.ts";
import { unauthenticated } from "../errors.ts";
import { route } from "../http/app.ts";
import { seeOther, wantsHtml } from "../http/pages/layout.ts";
import { errorResponse } from "../http/respond.ts";
import { defineModule } from "../module.ts";
import type { Runtime } from "../runtime.ts";
import { privateFile } from "../private.ts";
import { exportArchive } from "./archive.ts";

const fileFor = (rt: Runtime, username: string) => `hearth-${username}-${rt.clock.now().toISOString().slice(0, 10)}.zip`;

async function download(rt: Runtime, req: Request): Promise<Response> {
  const s = await findSession(rt, req);
  if (!s) {
    if (wantsHtml(req)) return seeOther(`/signin?next=${encodeURIComponent("/export")}`);
    return errorResponse(unauthenticated("sign in first: POST /signin (or open /signin in a browser)"), crypto.randomUUID());
  }
  return new Response(exportArchive(rt, s.account), {
    headers: {
      "content-type": "application/zip",
      "content-disposition": `attachment; filename="${fileFor(rt, s.account.username)}"`,
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
    },
  });
}

export const exportCommand: CliCommand = {
  summary: "write all of one person's data (Markdown, iCalendar, vCard, their files as they are, JSON for the rest) to one zip",
  usage: "usage: hearth export --user NAME [--out FILE.zip]",
  async run(argv, hearth) {
    const { flags, rest } = parseFlags(argv);
    const user = flags.get("user")?.[0];
    if (!user || user === "true" || rest.length || flags.get("out")?.[0] === "true") {
      process.stderr.write(`${this.usage}\n`);
      return 2;
    }
    const rt = await hearth.open();
    rt.migrate();
    try {
      const account = await findAccount(rt.store, user.toLowerCase());
      if (!account) {
        process.stderr.write(`no account ${JSON.stringify(user)} here\n`);
        return 1;
      }
      const out = flags.get("out")?.[0] ?? fileFor(rt, account.username);
      // Made private before anything is written to it: it holds everything of theirs.
      privateFile(out);
      const bytes = await Bun.write(out, new Response(exportArchive(rt, account)));
      process.stdout.write(`${JSON.stringify({ file: out, bytes })}\n`);
      return 0;
    } finally {
      await rt.stop();
    }
  },
};

export const exportModule = defineModule({
  name: "export",
  provides: {
    cli: { export: exportCommand },
    mounts: [(app, rt) => void app.get("/export", route((c) => download(rt, c.request)))],
  },
});
