// Twilio's Messages API (2010-04-01): create a message with To, From and Body
// as a form, HTTP Basic with the account SID and auth token. Sending is not
// idempotent, so a failed request is never retried here: the caller decides.
import { HearthError, invalid, notConfigured, upstream } from "hearth";

export interface TwilioConfig {
  sid: string;
  token: string;
  from: string;
  base: string;
}

const NEEDED = ["TWILIO_ACCOUNT_SID", "TWILIO_AUTH_TOKEN", "TWILIO_FROM"] as const;

/** The Twilio account, or 501 naming what is missing. */
export function twilioConfig(config: Readonly<Record<string, string>>): TwilioConfig {
  const missing = NEEDED.filter((k) => !config[k]);
  if (missing.length)
    throw notConfigured(`texts need a Twilio account: set ${missing.join(", ")}${missing.length < NEEDED.length ? "" : " (the account's SID and auth token, and the number texts are sent from)"}`);
  return { sid: config.TWILIO_ACCOUNT_SID, token: config.TWILIO_AUTH_TOKEN, from: config.TWILIO_FROM, base: (config.TWILIO_URL || "https://api.twilio.com").replace(/\/+$/, "") };
}

/** Twilio's error body: { code, message, more_info, status }. */
interface TwilioError {
  code?: number;
  message?: string;
  more_info?: string;
  status?: number;
}

export interface Created {
  sid: string;
  status: string;
}

/** Error codes that mean the recipient will not take texts from this number. */
export const UNSUBSCRIBED = 21610;

export async function createMessage(tw: TwilioConfig, to: string, body: string, timeoutMs = 15_000): Promise<Created> {
  const url = `${tw.base}/2010-04-01/Accounts/${encodeURIComponent(tw.sid)}/Messages.json`;
  let res: Response;
  try {
    res = await fetch(url, {
      method: "POST",
      headers: {
        authorization: `Basic ${Buffer.from(`${tw.sid}:${tw.token}`).toString("base64")}`,
        "content-type": "application/x-www-form-urlencoded",
        accept: "application/json",
      },
      body: new URLSearchParams({ To: to, From: tw.from, Body: body }),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (e) {
    const name = (e as Error).name;
    if (name === "TimeoutError") throw upstream("upstream_timeout", `Twilio did not answer within ${timeoutMs / 1000} s; the text may or may not have been sent`);
    throw upstream("upstream_unavailable", "Twilio could not be reached");
  }
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw upstream(res.status >= 500 ? "upstream_unavailable" : "upstream_failed", `Twilio answered ${res.status} with a body that is not JSON`);
  }
  if (res.ok) {
    const m = json as { sid?: unknown; status?: unknown };
    if (typeof m.sid !== "string") throw upstream("upstream_failed", "Twilio's answer names no message sid");
    return { sid: m.sid, status: typeof m.status === "string" ? m.status : "queued" };
  }
  const err = json as TwilioError;
  const said = `Twilio refused the text: ${err.message ?? `status ${res.status}`}${err.code ? ` (error ${err.code}${err.more_info ? `, ${err.more_info}` : ""})` : ""}`;
  if (err.code === UNSUBSCRIBED) throw new HearthError("forbidden", `${to} has replied STOP to this number, so it cannot be texted until it replies START (${said})`, { extra: { unsubscribed: true } });
  if (err.code === 21211 || err.code === 21614 || err.code === 21612 || err.code === 21408) throw invalid("to", said);
  if (res.status === 401 || err.code === 20003) throw upstream("upstream_failed", `${said}: check TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN`);
  if (res.status === 429 || res.status >= 500) throw upstream("upstream_unavailable", said);
  throw upstream("upstream_failed", said);
}
