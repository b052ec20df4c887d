// The settings page's "Test" buttons: one small real request to the
// provider a group of settings names, with the values as typed (not yet
// saved), so the admin learns before saving whether they work. Each answers
// ok with what it found, or what failed, in the provider's own words where
// it gave some; no secret is ever put in the answer.
import { connect } from "node:net";
import { complete } from "../ai/chat.ts";
import { hostOf } from "../ai/provider.ts";
import { errorWords } from "../ai/wire.ts";

export interface ProbeResult {
  ok: boolean;
  said: string;
}

export interface Probe {
  label: string;
  /** The settings whose values it uses. */
  uses: string[];
  run(v: Readonly<Record<string, string>>): Promise<ProbeResult>;
}

const TIMEOUT_MS = 15_000;
const bare = (u: string) => u.trim().replace(/\/+$/, "");

async function timed(url: string, init: RequestInit): Promise<Response> {
  return fetch(url, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS), redirect: "manual" });
}

const failed = (where: string, e: unknown): ProbeResult => ({
  ok: false,
  said: `nothing usable answered at ${where}: ${(e as Error)?.name === "TimeoutError" ? `no answer in ${TIMEOUT_MS / 1000} s` : ((e as Error)?.message ?? String(e))}`,
});

export const PROBES: Record<string, Probe> = {
  ai: {
    label: "Test the AI provider",
    uses: ["AI_BASE_URL", "AI_API_KEY", "AI_MODEL"],
    async run(v) {
      const base = bare(v.AI_BASE_URL ?? "");
      if (!base) return { ok: false, said: "set AI_BASE_URL first (an OpenAI-compatible API with its /v1)" };
      if (!v.AI_MODEL?.trim()) return { ok: false, said: "set AI_MODEL first: the test asks that model for a one-word answer" };
      const ep = { base, key: v.AI_API_KEY ?? "", label: hostOf(base) };
      try {
        const a = await complete(ep, { messages: [{ role: "user", content: "Answer with the one word: ready" }], max_tokens: 8 }, v.AI_MODEL.trim(), { timeoutMs: TIMEOUT_MS, retryDelayMs: 0 });
        return { ok: true, said: `${ep.label} answered with model ${a.model}: "${a.text.slice(0, 60)}"` };
      } catch (e) {
        return { ok: false, said: errorWords(ep, e) };
      }
    },
  },
  chain: {
    label: "Test the chain RPC",
    uses: ["CHAIN_RPC_URL"],
    async run(v) {
      const url = (v.CHAIN_RPC_URL ?? "").trim();
      if (!url) return { ok: false, said: "set CHAIN_RPC_URL first" };
      try {
        const res = await timed(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }) });
        const body = (await res.json().catch(() => null)) as { result?: string; error?: { message?: string } } | null;
        if (!res.ok || !body?.result) return { ok: false, said: `${hostOf(url)} answered HTTP ${res.status}${body?.error?.message ? `: ${body.error.message}` : " without a chain id"}` };
        return { ok: true, said: `${hostOf(url)} is chain ${parseInt(body.result, 16)} (eip155:${parseInt(body.result, 16)})` };
      } catch (e) {
        return failed(hostOf(url), e);
      }
    },
  },
  twilio: {
    label: "Test the Twilio account",
    uses: ["TWILIO_ACCOUNT_SID", "TWILIO_AUTH_TOKEN", "TWILIO_URL"],
    async run(v) {
      if (!v.TWILIO_ACCOUNT_SID || !v.TWILIO_AUTH_TOKEN) return { ok: false, said: "set TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN first" };
      const base = bare(v.TWILIO_URL || "https://api.twilio.com");
      try {
        const res = await timed(`${base}/2010-04-01/Accounts/${encodeURIComponent(v.TWILIO_ACCOUNT_SID)}.json`, {
          headers: { authorization: `Basic ${btoa(`${v.TWILIO_ACCOUNT_SID}:${v.TWILIO_AUTH_TOKEN}`)}` },
        });
        const body = (await res.json().catch(() => null)) as { status?: string; friendly_name?: string; message?: string } | null;
        if (!res.ok) return { ok: false, said: `Twilio refused the credentials (HTTP ${res.status}${body?.message ? `: ${body.message}` : ""})` };
        return { ok: true, said: `Twilio knows the account${body?.friendly_name ? ` "${body.friendly_name}"` : ""}${body?.status ? ` (${body.status})` : ""}` };
      } catch (e) {
        return failed(hostOf(base), e);
      }
    },
  },
  s3: {
    label: "Test the S3 bucket",
    uses: ["HEARTH_S3_ENDPOINT", "HEARTH_S3_BUCKET", "HEARTH_S3_REGION", "HEARTH_S3_ACCESS_KEY_ID", "HEARTH_S3_SECRET_ACCESS_KEY", "HEARTH_S3_PREFIX"],
    async run(v) {
      const missing = ["HEARTH_S3_ENDPOINT", "HEARTH_S3_BUCKET", "HEARTH_S3_ACCESS_KEY_ID", "HEARTH_S3_SECRET_ACCESS_KEY"].filter((k) => !v[k]);
      if (missing.length) return { ok: false, said: `set ${missing.join(", ")} first` };
      const client = new Bun.S3Client({ endpoint: v.HEARTH_S3_ENDPOINT, bucket: v.HEARTH_S3_BUCKET, region: v.HEARTH_S3_REGION || undefined, accessKeyId: v.HEARTH_S3_ACCESS_KEY_ID, secretAccessKey: v.HEARTH_S3_SECRET_ACCESS_KEY });
      try {
        // A listing of at most one key: it needs the bucket to exist and the key to be allowed to read it.
        await Promise.race([client.list({ maxKeys: 1, prefix: v.HEARTH_S3_PREFIX || undefined }), Bun.sleep(TIMEOUT_MS).then(() => Promise.reject(new Error(`no answer in ${TIMEOUT_MS / 1000} s`)))]);
        return { ok: true, said: `the bucket ${v.HEARTH_S3_BUCKET} at ${hostOf(v.HEARTH_S3_ENDPOINT)} answers and lets this key list it` };
      } catch (e) {
        return { ok: false, said: `the bucket ${v.HEARTH_S3_BUCKET} at ${hostOf(v.HEARTH_S3_ENDPOINT)}: ${(e as Error)?.message ?? e}` };
      }
    },
  },
  smtp: {
    label: "Test the SMTP relay",
    uses: ["SMTP_RELAY_URL"],
    async run(v) {
      let u: URL;
      try {
        u = new URL(v.SMTP_RELAY_URL ?? "");
      } catch {
        return { ok: false, said: "set SMTP_RELAY_URL first (smtp://user:pass@host:587)" };
      }
      const port = Number(u.port || (u.protocol === "smtps:" ? 465 : 587));
      if (u.protocol === "smtps:") {
        // A TLS relay greets only after the handshake; Bun's TLS socket does both.
        try {
          const greeting = await new Promise<string>((resolve, reject) => {
            let got = "";
            Bun.connect({ hostname: u.hostname, port, tls: true, socket: { data: (s, d) => { got += d.toString(); if (got.includes("\n")) { s.end(); resolve(got); } }, error: (_s, e) => reject(e), close: () => reject(new Error("closed before greeting")) } }).catch(reject);
            setTimeout(() => reject(new Error(`no greeting in ${TIMEOUT_MS / 1000} s`)), TIMEOUT_MS);
          });
          return greeting.startsWith("220") ? { ok: true, said: `${u.hostname}:${port} greets: ${greeting.trim().slice(0, 80)}` } : { ok: false, said: `${u.hostname}:${port} greeted with "${greeting.trim().slice(0, 80)}"` };
        } catch (e) {
          return failed(`${u.hostname}:${port}`, e);
        }
      }
      try {
        const greeting = await new Promise<string>((resolve, reject) => {
          const sock = connect({ host: u.hostname, port });
          let got = "";
          sock.setTimeout(TIMEOUT_MS, () => (sock.destroy(), reject(new Error(`no greeting in ${TIMEOUT_MS / 1000} s`))));
          sock.on("data", (d) => {
            got += d.toString();
            if (got.includes("\n")) {
              sock.end("QUIT\r\n");
              resolve(got);
            }
          });
          sock.on("error", reject);
        });
        return greeting.startsWith("220") ? { ok: true, said: `${u.hostname}:${port} greets: ${greeting.trim().slice(0, 80)}` } : { ok: false, said: `${u.hostname}:${port} greeted with "${greeting.trim().slice(0, 80)}"` };
      } catch (e) {
        return failed(`${u.hostname}:${port}`, e);
      }
    },
  },
};

/** The probe a group of settings offers, by the first setting of it that a probe uses. */
export function probesFor(names: string[]): string[] {
  return Object.entries(PROBES)
    .filter(([, p]) => names.includes(p.uses[0]))
    .map(([k]) => k);
}
