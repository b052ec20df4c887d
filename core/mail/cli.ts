// `hearth mail dns`: the DNS records a mail domain needs so the world sends
// its mail here and believes the mail sent from here (MX, SPF, DKIM, DMARC),
// making the DKIM key on first use.
import type { CliCommand } from "../cli/commands.ts";
import { dkimKey, dkimRecord } from "./dkim.ts";

/** A TXT value as zone files write it: quoted strings of at most 255 characters each. */
export function txt(value: string): string {
  const parts: string[] = [];
  for (let i = 0; i < value.length; i += 255) parts.push(`"${value.slice(i, i + 255)}"`);
  return parts.join(" ");
}

export function dnsRecords(config: Readonly<Record<string, string>>, dataDir: string) {
  const domain = config.MAIL_DOMAIN.toLowerCase();
  const host = (config.MAIL_HOST || domain).toLowerCase();
  const key = dkimKey(config, dataDir);
  const spf = config.SMTP_RELAY_URL ? "v=spf1 mx ~all" : "v=spf1 mx -all";
  return {
    key,
    records: [
      { name: `${domain}.`, type: "MX", value: `10 ${host}.` },
      { name: `${domain}.`, type: "TXT", value: spf },
      { name: `${key.selector}._domainkey.${domain}.`, type: "TXT", value: dkimRecord(key) },
      { name: `_dmarc.${domain}.`, type: "TXT", value: `v=DMARC1; p=quarantine; rua=mailto:postmaster@${domain}` },
    ],
  };
}

export const mailCommand: CliCommand = {
  summary: "print the DNS records the mail domain needs (MX, SPF, DKIM, DMARC)",
  usage: "usage: hearth mail dns",
  async run(argv, hearth) {
    if (argv[0] !== "dns") {
      process.stderr.write("usage: hearth mail dns\n");
      return 2;
    }
    const rt = await hearth.open();
    try {
      if (!rt.config.MAIL_DOMAIN) {
        process.stderr.write("MAIL_DOMAIN is not set: set it to the domain mail should arrive at (example.org), then run this again\n");
        return 1;
      }
      const { key, records } = dnsRecords(rt.config, rt.dataDir);
      const lines = [`; DNS records for mail at ${rt.config.MAIL_DOMAIN.toLowerCase()}`];
      if (key.created) lines.push(`; made a new DKIM key: ${key.file}`);
      else lines.push(`; DKIM key: ${key.file}`);
      if (rt.config.MAIL_HOST) lines.push(`; ${rt.config.MAIL_HOST} needs an A (and AAAA) record for this server, and its PTR should name it`);
      if (rt.config.SMTP_RELAY_URL) lines.push(`; mail leaves through ${new URL(rt.config.SMTP_RELAY_URL).hostname}: add the relay's SPF include (its documentation names it) before ~all`);
      for (const r of records) lines.push(`${r.name}\t3600\tIN\t${r.type}\t${r.type === "TXT" ? txt(r.value) : r.value}`);
      process.stdout.write(lines.join("\n") + "\n");
      return 0;
    } finally {
      await rt.stop();
    }
  },
};
