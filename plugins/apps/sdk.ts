// The two halves of the bridge between an app and the instance. The app runs
// in an iframe with an opaque origin and no network; the host page around it
// hands it one end of a MessageChannel and answers what comes through, each
// kind only once the person allows it for this app: its own store, who they
// are, and calls of a method made as them.

/**
 * Put first in the app's page. Gives the app `hearth`:
 *   await hearth.store.get(key)          // the stored value, or null
 *   await hearth.store.set(key, value)   // any JSON value
 *   await hearth.store.remove(key)
 *   await hearth.store.keys(prefix?)     // the keys, sorted
 *   await hearth.call("notes/add", { title, text })
 *   await hearth.user()                  // { signed_in, username }
 * The person is asked the first time an app uses its store, their name, or
 * each method; what they allow is remembered. (Signed out, user() answers
 * without asking: there is no one to name.) A refusal rejects with an
 * Error carrying status, kind and field.
 */
export const FRAME_SDK = `(() => {
  let port = null, seq = 0;
  const queue = [], waiting = new Map();
  addEventListener("message", (e) => {
    if (port || e.source !== parent || !e.data || e.data.hearth !== "port" || !e.ports || !e.ports[0]) return;
    port = e.ports[0];
    port.onmessage = (m) => {
      const r = m.data || {};
      const w = waiting.get(r.id);
      if (!w) return;
      waiting.delete(r.id);
      if (r.ok) return w.resolve(r.result);
      const x = r.error || {};
      const err = new Error(x.message || "refused");
      err.status = x.status; err.kind = x.kind; err.field = x.field;
      w.reject(err);
    };
    for (const q of queue.splice(0)) port.postMessage(q);
  });
  const ask = (op, body) => new Promise((resolve, reject) => {
    if (parent === self) {
      const err = new Error("this page is an app: open it from its page under /apps, which keeps its store");
      err.status = 400; err.kind = "invalid_argument";
      return reject(err);
    }
    const msg = Object.assign({ id: ++seq, op }, body);
    waiting.set(msg.id, { resolve, reject });
    if (port) port.postMessage(msg); else queue.push(msg);
  });
  const json = (v) => (v === undefined ? null : JSON.parse(JSON.stringify(v)));
  const store = Object.freeze({
    get: (key) => ask("store.get", { key: String(key) }),
    set: (key, value) => ask("store.set", { key: String(key), value: json(value) }),
    remove: (key) => ask("store.remove", { key: String(key) }),
    keys: (prefix) => ask("store.keys", { prefix: prefix == null ? "" : String(prefix) }),
  });
  Object.defineProperty(window, "hearth", {
    value: Object.freeze({ store, call: (method, args) => ask("call", { method: String(method), args: json(args || {}) }), user: () => ask("user", {}) }),
    enumerable: true,
  });
})();`;

/**
 * The host page's side. Reads its settings from #app-data, loads the frame
 * (after paying, for a priced app), and answers the frame's port. Signed out,
 * the store lives in this browser's localStorage under the app's own prefix,
 * which only this page reads.
 */
export const HOST_BRIDGE = `(() => {
  const cfg = JSON.parse(document.getElementById("app-data").textContent);
  const frame = document.getElementById("app-frame");
  const status = document.getElementById("app-status");
  const granted = new Set(cfg.granted);
  // What an app may ask for besides methods, in the person's words.
  const OWN = Object.assign(Object.create(null), { "hearth.store": cfg.signed_in ? "keep its data in your account" : "keep its data in this browser", "hearth.user": "see your username" });
  // Signed out, what was allowed is remembered in this browser, beside the store it concerns.
  const guestGrants = "hearth.allowed." + cfg.slug;
  if (!cfg.signed_in) {
    try { for (const g of JSON.parse(localStorage.getItem(guestGrants) || "[]")) if (OWN[g]) granted.add(g); } catch {}
  }
  let csrf = null;
  const fail = (status, kind, message, field) => ({ status, kind, message, field });
  async function token() {
    if (csrf) return csrf;
    const r = await fetch("/session", { credentials: "same-origin" });
    if (!r.ok) throw fail(401, "unauthenticated", "the session has ended: sign in again");
    csrf = (await r.json()).result.csrf;
    return csrf;
  }
  async function post(path, body) {
    const res = await fetch(path, { method: "POST", credentials: "same-origin", headers: { "content-type": "application/json", "x-csrf-token": await token() }, body: JSON.stringify(body) });
    const j = await res.json().catch(() => null);
    if (!res.ok) throw (j && j.error) || fail(res.status, "internal", "the instance answered " + res.status);
    return j.result;
  }
  const prefix = "hearth.apps." + cfg.slug + ".";
  function guest(op, m) {
    const ls = window.localStorage;
    if (op === "get") { const v = ls.getItem(prefix + m.key); return v === null ? null : JSON.parse(v); }
    if (op === "set") { ls.setItem(prefix + m.key, JSON.stringify(m.value)); return { key: m.key }; }
    if (op === "remove") { ls.removeItem(prefix + m.key); return { key: m.key }; }
    const out = [];
    for (let i = 0; i < ls.length; i++) { const k = ls.key(i); if (k.startsWith(prefix + (m.prefix || ""))) out.push(k.slice(prefix.length)); }
    return out.sort();
  }
  const dialog = document.getElementById("app-allow");
  function askPerson(method) {
    if (!dialog || typeof dialog.showModal !== "function") return Promise.resolve(false);
    const what = dialog.querySelector("[data-ask]");
    if (OWN[method]) what.textContent = OWN[method];
    else {
      const code = document.createElement("code");
      code.textContent = method;
      what.replaceChildren("call ", code, " as you");
    }
    const about = cfg.methods[method];
    dialog.querySelector("[data-about]").textContent = about ? about.description + (about.price ? " Each call costs " + about.price + " credit(s)." : "") : "";
    return new Promise((resolve) => {
      dialog.addEventListener("close", () => resolve(dialog.returnValue === "allow"), { once: true });
      dialog.showModal();
    });
  }
  async function setGrant(method, allow) {
    if (cfg.signed_in) await post("/apps/" + cfg.slug + "/allow", { method, allow });
    if (allow) granted.add(method); else granted.delete(method);
    if (!cfg.signed_in) localStorage.setItem(guestGrants, JSON.stringify([...granted].filter((g) => OWN[g])));
    showGrants();
  }
  // One question at a time, and one for all the requests waiting on the same answer.
  let asking = Promise.resolve();
  const pending = new Map();
  function allowed(method) {
    if (granted.has(method)) return Promise.resolve();
    if (!pending.has(method)) {
      const p = asking.then(async () => {
        if (granted.has(method)) return;
        if (!(await askPerson(method))) throw fail(403, "forbidden", "you did not allow this app to " + (OWN[method] || "call " + method));
        await setGrant(method, true);
      });
      asking = p.catch(() => {});
      pending.set(method, p);
      p.then(() => pending.delete(method), () => pending.delete(method));
    }
    return pending.get(method);
  }
  const grantList = document.getElementById("app-grants");
  function showGrants() {
    if (!grantList) return;
    grantList.replaceChildren(...[...granted].sort().map((method) => {
      const li = document.createElement("li");
      const code = document.createElement("code");
      code.textContent = method;
      const stop = document.createElement("button");
      stop.type = "button"; stop.className = "quiet"; stop.textContent = "Stop allowing";
      stop.setAttribute("aria-label", "Stop allowing " + method);
      stop.addEventListener("click", () => setGrant(method, false));
      li.append(...(OWN[method] ? [OWN[method][0].toUpperCase() + OWN[method].slice(1) + " (", code, ")"] : ["Call ", code]), " ", stop);
      return li;
    }));
    grantList.parentElement.hidden = granted.size === 0;
  }
  showGrants();
  async function call(m) {
    if (!cfg.signed_in) throw fail(401, "unauthenticated", "sign in to let this app use your account");
    if (!/^[a-z][a-z0-9]*\\/[a-z][a-z0-9_]*$/.test(m.method) || !cfg.methods[m.method]) throw fail(404, "not_found", "no method " + JSON.stringify(m.method), "method");
    await allowed(m.method);
    return post("/api/v1/" + m.method, m.args || {});
  }
  async function answer(m) {
    if (m.op === "user") {
      // Signed out there is no one to name.
      if (cfg.signed_in) await allowed("hearth.user");
      return { signed_in: cfg.signed_in, username: cfg.username };
    }
    if (m.op === "call") return call(m);
    if (typeof m.op === "string" && m.op.startsWith("store.")) {
      const op = m.op.slice(6);
      await allowed("hearth.store");
      if (!cfg.signed_in) return guest(op, m);
      return post("/apps/" + cfg.slug + "/store", { op, key: m.key, value: m.value, prefix: m.prefix });
    }
    throw fail(400, "invalid_argument", "unknown request " + JSON.stringify(m.op), "op");
  }
  frame.addEventListener("load", () => {
    const ch = new MessageChannel();
    ch.port1.onmessage = async (e) => {
      const m = e.data || {};
      try { ch.port1.postMessage({ id: m.id, ok: true, result: await answer(m) }); }
      catch (x) { ch.port1.postMessage({ id: m.id, ok: false, error: x && x.kind ? x : fail(500, "internal", String(x && x.message || x)) }); }
    };
    // Framed from an origin of its own, the port goes to that origin only; an opaque one is reached by "*" alone, and the port is what stays private.
    frame.contentWindow.postMessage({ hearth: "port" }, /^https?:/.test(cfg.frame) ? new URL(cfg.frame).origin : "*", [ch.port2]);
  });
  const openButton = document.getElementById("app-open");
  if (!cfg.needs_ticket) { frame.src = cfg.frame; return; }
  openButton.addEventListener("click", async () => {
    openButton.disabled = true;
    try {
      const r = await post("/apps/" + cfg.slug + "/open", {});
      status.textContent = r.charged ? "Paid " + r.charged + " credit(s); balance " + r.balance + "." : "";
      openButton.hidden = true;
      frame.hidden = false;
      frame.src = cfg.frame + "?ticket=" + encodeURIComponent(r.ticket);
    } catch (x) {
      status.textContent = (x && x.message) || "could not open the app";
      openButton.disabled = false;
    }
  });
})();`;
