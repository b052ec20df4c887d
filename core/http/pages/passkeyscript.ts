// The one script of /signin and /account, served by the instance itself
// (script-src 'self'): the WebAuthn calls a form cannot make. It turns the
// server's JSON options into what navigator.credentials takes, and the
// credential the browser returns into JSON for the server, which
// @simplewebauthn/server verifies. Without it (or without passkey support)
// the pages' forms still work and the passkey buttons stay hidden.
const SCRIPT = `
(() => {
  if (!window.PublicKeyCredential) return;
  const bytes = (s) => Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((s.length + 3) % 4)), (c) => c.charCodeAt(0));
  const text = (b) => btoa(String.fromCharCode(...new Uint8Array(b))).replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, "");
  const csrf = document.querySelector('meta[name="csrf-token"]')?.content;
  async function post(path, body) {
    const headers = { "content-type": "application/json", accept: "application/json" };
    if (csrf) headers["x-csrf-token"] = csrf;
    const res = await fetch(path, { method: "POST", headers, body: JSON.stringify(body), credentials: "same-origin" });
    const json = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error(json.error?.message ?? "the server refused (" + res.status + ")");
    return json.result;
  }
  function say(el, msg) {
    el.textContent = msg;
    el.hidden = !msg;
  }
  const failed = (e) => (e && e.name === "NotAllowedError" ? "The passkey request was cancelled or timed out." : "It did not work: " + (e?.message ?? e));

  const signin = document.getElementById("passkey-signin");
  if (signin) {
    signin.hidden = false;
    const status = document.getElementById("passkey-status");
    signin.querySelector("button").addEventListener("click", async () => {
      say(status, "");
      try {
        const { options, handle } = await post("/signin/passkey/options", {});
        const cred = await navigator.credentials.get({
          publicKey: { ...options, challenge: bytes(options.challenge), allowCredentials: (options.allowCredentials ?? []).map((c) => ({ ...c, id: bytes(c.id) })) },
        });
        const r = cred.response;
        const response = {
          id: cred.id, rawId: text(cred.rawId), type: cred.type, clientExtensionResults: cred.getClientExtensionResults(), authenticatorAttachment: cred.authenticatorAttachment ?? undefined,
          response: { clientDataJSON: text(r.clientDataJSON), authenticatorData: text(r.authenticatorData), signature: text(r.signature), userHandle: r.userHandle ? text(r.userHandle) : undefined },
        };
        const next = signin.dataset.next || "/";
        const done = await post("/signin/passkey", { handle, response, next });
        location.assign(done.next ?? next);
      } catch (e) {
        say(status, failed(e));
      }
    });
  }

  const add = document.getElementById("passkey-add");
  if (add) {
    add.hidden = false;
    const status = document.getElementById("passkey-add-status");
    add.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      say(status, "");
      const name = add.querySelector("input[name=name]").value;
      try {
        const { options, handle } = await post("/account/passkeys/options", {});
        const cred = await navigator.credentials.create({
          publicKey: {
            ...options,
            challenge: bytes(options.challenge),
            user: { ...options.user, id: bytes(options.user.id) },
            excludeCredentials: (options.excludeCredentials ?? []).map((c) => ({ ...c, id: bytes(c.id) })),
          },
        });
        const r = cred.response;
        const response = {
          id: cred.id, rawId: text(cred.rawId), type: cred.type, clientExtensionResults: cred.getClientExtensionResults(), authenticatorAttachment: cred.authenticatorAttachment ?? undefined,
          response: { clientDataJSON: text(r.clientDataJSON), attestationObject: text(r.attestationObject), transports: r.getTransports ? r.getTransports() : [] },
        };
        await post("/account/passkeys", { handle, name, response });
        location.assign("/account?done=passkey-added#passkeys");
      } catch (e) {
        say(status, e && e.name === "InvalidStateError" ? "This authenticator holds a passkey for this account already." : failed(e));
      }
    });
  }
})();
`;

export function passkeyScript(): Response {
  return new Response(SCRIPT, { headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "no-cache", "x-content-type-options": "nosniff" } });
}
