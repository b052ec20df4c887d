// Every setting the instance has, as the settings page shows them: the
// core's (config/defaults.ts) and each plugin's manifest `config`, grouped by
// what they are for, with what kind of value each takes, whether it is a
// secret (shown only as set or unset) and whether the running instance can
// take a new value at once or only at its next start.
import { coreSettings, type Setting } from "../../config/defaults.ts";
import { invalid } from "../errors.ts";
import type { Registry } from "../registry.ts";

export interface SettingInfo extends Setting {
  name: string;
  group: string;
  /** The plugin declaring it; null for the core's. */
  plugin: string | null;
  secret: boolean;
  /** The running instance reads it on every use, so a saved value applies at once. */
  live: boolean;
  /** Values it may take, when it is one of a few. */
  choices?: string[];
  /** Set only in the environment (where the settings file is): not written from the browser. */
  fixed?: boolean;
}

/** The groups, in the order the page shows them. */
export const GROUPS = ["Instance", "Sign-up and sign-in", "AI models", "Payments and x402", "Mail and text messages", "Storage", "Limits", "Command line", "Outside providers"] as const;

const CORE_GROUP: [RegExp, (typeof GROUPS)[number]][] = [
  [/^(HEARTH_SIGNUP|HEARTH_SESSION_DAYS|HEARTH_PASSWORD_COST|HEARTH_OAUTH_.*|HEARTH_RATE_SIGNIN)$/, "Sign-up and sign-in"],
  [/^AI_/, "AI models"],
  [/^(X402_.*|HEARTH_METERING|HEARTH_METER_ACCOUNTS|HEARTH_PRICES)$/, "Payments and x402"],
  [/^(HEARTH_DATA|HEARTH_DATABASE_.*|HEARTH_BLOBS|HEARTH_S3_.*|HEARTH_REDIS_URL|HEARTH_SHARED|HEARTH_SCHEDULE_LEASE_SECONDS|HEARTH_AUDIT_DAYS)$/, "Storage"],
  [/^(HEARTH_BODY_.*|HEARTH_RATE_.*)$/, "Limits"],
  [/^(HEARTH_URL|HEARTH_TOKEN)$/, "Command line"],
  [/^UPSTREAM_/, "Outside providers"],
];

/** Plugins whose settings belong with a purpose of the core's rather than among the providers. */
const PLUGIN_GROUP: Record<string, (typeof GROUPS)[number]> = {
  agent: "AI models",
  wallet: "Payments and x402",
  mail: "Mail and text messages",
  sms: "Mail and text messages",
  blog: "Instance",
  apps: "Instance",
  chat: "Limits",
  files: "Limits",
  events: "Instance",
};

/** Settings whose value is one of a few words. */
const CHOICES: Record<string, string[]> = {
  HEARTH_SIGNUP: ["open", "invite", "closed"],
  HEARTH_PASSWORD_COST: ["standard", "test"],
  HEARTH_BLOBS: ["disk", "s3"],
  HEARTH_LOG: ["info", "warn", "error", "off"],
  HEARTH_SHARED: ["database", "memory"],
  HEARTH_METER_ACCOUNTS: ["off", "on", "all"],
};

/** Settings that name a credential or hold one inside a URL: never sent back to a browser. */
const SECRET = /(_API_KEY|_APP_KEY|_SECRET|_SECRET_ACCESS_KEY|_AUTH_TOKEN|_TOKEN|_KEY)$|^(HEARTH_SECRET|HEARTH_DATABASE_URL|HEARTH_REDIS_URL|SMTP_RELAY_URL)$/;
/** ... except those that name a file holding one, not the secret itself. */
const NOT_SECRET = new Set(["MAIL_DKIM_KEY", "MAIL_TLS_KEY"]);

/** Core settings read on every use (checked where each is read), so a new value applies without a restart. */
const LIVE_CORE = /^(AI_.*|HEARTH_SIGNUP|HEARTH_NAME|HEARTH_PUBLIC_URL|HEARTH_CONTACT|HEARTH_SESSION_DAYS|HEARTH_AUDIT_DAYS|HEARTH_OAUTH_ACCESS_MINUTES|HEARTH_TZ|UPSTREAM_RETRY_MS|UPSTREAM_TIMEOUT_MS|HEARTH_URL|HEARTH_TOKEN)$/;

/** URL settings whose scheme is not http(s). */
const SCHEMES: Record<string, string[]> = {
  HEARTH_DATABASE_URL: ["postgres:", "postgresql:"],
  HEARTH_REDIS_URL: ["redis:", "rediss:"],
  SMTP_RELAY_URL: ["smtp:", "smtps:"],
};

export function catalog(reg: Registry): SettingInfo[] {
  const out: SettingInfo[] = [];
  const seen = new Set<string>();
  for (const [name, s] of Object.entries(coreSettings)) {
    seen.add(name);
    out.push({
      name,
      ...s,
      group: CORE_GROUP.find(([re]) => re.test(name))?.[1] ?? "Instance",
      plugin: null,
      secret: SECRET.test(name) && !NOT_SECRET.has(name),
      live: LIVE_CORE.test(name),
      choices: CHOICES[name] ?? (s.default === "on" || s.default === "off" ? ["on", "off"] : undefined),
      fixed: name === "HEARTH_CONFIG",
    });
  }
  for (const name of reg.services()) {
    const p = reg.plugins.get(name)!;
    for (const [k, s] of Object.entries(p.def.config ?? {})) {
      // A setting two plugins share (OPEN_METEO_URL) is shown once, under the first.
      if (seen.has(k)) continue;
      seen.add(k);
      out.push({
        name: k,
        ...s,
        group: PLUGIN_GROUP[name] ?? "Outside providers",
        plugin: name,
        secret: SECRET.test(k) && !NOT_SECRET.has(k),
        // A plugin that starts something (a poll, a server) read its settings then; the others read ctx.config per call.
        live: !p.def.start,
        choices: s.default === "on" || s.default === "off" ? ["on", "off"] : undefined,
      });
    }
  }
  return out;
}

/** Checks one new value against what the setting takes; throws 400 naming it. "" always means the default. */
export function checkValue(s: SettingInfo, value: string): string {
  const v = value.trim();
  if (s.fixed) throw invalid(s.name, `${s.name} is read before the settings file (it names the file): set it in the environment`);
  if (/[\r\n\0]/.test(value)) throw invalid(s.name, "a setting is one line: remove the line break");
  if (v === "") return "";
  if (s.choices && !s.choices.includes(v.toLowerCase())) throw invalid(s.name, `must be one of ${s.choices.join(", ")} (got "${v}")`);
  if (s.choices) return v.toLowerCase();
  if (/^\d+$/.test(s.default) && !/^\d+$/.test(v)) throw invalid(s.name, `must be a whole number (the default is ${s.default}; got "${v}")`);
  if (s.name.endsWith("_URL")) {
    let u: URL;
    try {
      u = new URL(v);
    } catch {
      throw invalid(s.name, `must be a URL such as ${SCHEMES[s.name] ? `${SCHEMES[s.name][0]}//host` : "https://example.org"} (got "${v}")`);
    }
    const schemes = SCHEMES[s.name] ?? ["http:", "https:"];
    if (!schemes.includes(u.protocol)) throw invalid(s.name, `must start with ${schemes.map((p) => `${p}//`).join(" or ")} (got "${v}")`);
  }
  if (s.name === "HEARTH_TZ") {
    try {
      new Intl.DateTimeFormat("en", { timeZone: v });
    } catch {
      throw invalid(s.name, `must be an IANA time zone such as Europe/London (got "${v}")`);
    }
  }
  // What a payer's wallet signs for: a wrong address or chain would take payments nobody can spend.
  if (s.name === "X402_PAY_TO" && !/^0x[0-9a-fA-F]{40}$/.test(v)) throw invalid(s.name, `must be an EVM address: 0x and 40 hexadecimal digits (got "${v}")`);
  if (s.name === "X402_NETWORK" && !/^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$/.test(v)) throw invalid(s.name, `must be a CAIP-2 chain id such as eip155:8453 for Base (got "${v}")`);
  if (s.name === "PORT" && (Number(v) < 1 || Number(v) > 65535)) throw invalid(s.name, `must be a port from 1 to 65535 (got ${v})`);
  return v;
}
