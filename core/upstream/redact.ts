// What a client or the log may be told about an outside service. Configured
// addresses often carry a key in their path (RPC nodes, facilitators, model
// servers), and a service's own error text may echo them back; answers name
// the service and never its address, and logs keep the text with the
// secrets cut out.

/** Query values that carry credentials (api_key=, token=, ...) never reach the cache table or the log. */
export function redactUrl(url: string): string {
  return url.replace(/([?&])([^=&#]*(?:key|token|secret|password|signature|sig)[^=&#]*)=([^&#]*)/gi, "$1$2=REDACTED");
}

/**
 * The text with every given secret cut out: a configured URL is cut down to
 * its scheme and host (its path, query and any user:password@ go, wherever
 * they appear, together or alone); any other secret (a key) is cut wherever
 * it appears.
 */
export function scrub(text: string, secrets: readonly (string | null | undefined)[]): string {
  let out = text;
  const cut = (s: string, by: string) => {
    if (s.length >= 6) out = out.split(s).join(by);
  };
  for (const secret of secrets) {
    if (!secret) continue;
    let url: URL | null = null;
    try {
      url = /^[a-z][a-z0-9+.-]*:\/\//i.test(secret) ? new URL(secret) : null;
    } catch {}
    if (!url) {
      cut(secret, "[redacted]");
      continue;
    }
    const origin = `${url.protocol}//${url.host}`;
    cut(secret.replace(/\/+$/, ""), `${origin}/[redacted]`);
    cut(url.href.replace(/\/+$/, ""), `${origin}/[redacted]`);
    const rest = (url.pathname + url.search).replace(/\/+$/, "");
    if (rest.length > 1) cut(rest, "/[redacted]");
    if (url.username) cut(url.username, "[redacted]");
    if (url.password) cut(url.password, "[redacted]");
  }
  return redactUrl(out);
}

/**
 * A reason a payment facilitator gave, as the client may see it: x402's
 * reasons are short snake_case codes (insufficient_funds,
 * invalid_exact_evm_payload_signature); anything else is free text from the
 * facilitator and is not passed on.
 */
export function reasonCode(reason: unknown, fallback: string): string {
  return typeof reason === "string" && /^[a-z0-9_]{1,80}$/i.test(reason) ? reason : fallback;
}
