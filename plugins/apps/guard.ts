// What an app's page may not use although the browser offers it. Its CSP
// stops fetches, but WebRTC's STUN and TURN traffic is outside connect-src
// (and Chromium ignores CSP's `webrtc` directive), so a page could send what
// it knows anywhere over UDP. FRAME_GUARD runs before any of the page's code:
//
// - every RTC* interface is removed from the page's window, the name held as
//   undefined and non-configurable so it cannot be put back;
// - a window of its own would bring them back. URL frames and workers are
//   refused by the CSP, but about:blank, srcdoc and javascript: frames are
//   not, and in a sandbox each gets a fresh origin that runs its own script.
//   So an app has no nested frames: a MutationObserver on the document and
//   on every shadow root removes each frame element as it is connected,
//   before its document can load (loading takes a task; the observer runs at
//   the next microtask). Closed shadow roots the parser makes
//   (`shadowrootmode`) would hide a frame from the observer, so that
//   attribute is neutralised in the served page and in the HTML-parsing
//   calls that honour it, and document.write, which can spell it across
//   calls, is not available.
// - navigating its own frame: the browser looks the host up and connects
//   to it (Chromium preconnects as the navigation starts, before the host
//   page's frame-src refuses it), so a host name or port the page chose
//   would carry what it knows out. Where the document has an origin of its
//   own (served on APPS_HOST), every navigation to another document is
//   cancelled as it starts (the Navigation API's navigate event, which the
//   browser withholds from documents with an opaque origin); a reload stays.
// - on such an origin, every app shares the browser's storage for it, so
//   storage, cookies and same-origin channels are taken away as WebRTC is.
// The page may replace any built-in before a frame appears, so what runs
// then uses only functions taken here, before the page's code.

/** The attribute that makes the parser attach a shadow root, made inert. */
export const inertShadowRoots = (html: string) => html.replace(/shadowrootmode/gi, "data-inert-shadowrootmode");

/** Inline script, first in every app and snippet document. */
export const FRAME_GUARD = `(() => {
  const O = Object, describe = O.getOwnPropertyDescriptor, define = O.defineProperty, apply = Reflect.apply;
  const fix = (target, name, d) => { try { define(target, name, O.assign({ enumerable: false }, d, { configurable: false })); } catch {} };
  const getter = (proto, name) => describe(proto, name).get;

  const names = ["RTCPeerConnection", "webkitRTCPeerConnection", "RTCDataChannel", "RTCIceTransport", "RTCIceCandidate", "RTCSessionDescription", "RTCDtlsTransport", "RTCSctpTransport", "RTCRtpSender", "RTCRtpReceiver", "RTCRtpTransceiver", "RTCCertificate"];
  for (const n of O.getOwnPropertyNames(window)) if (/^(webkit)?RTC/.test(n) && !names.includes(n)) names.push(n);
  for (const n of names) { try { delete window[n]; } catch {} fix(window, n, { value: undefined, writable: false }); }

  const FRAMES = "iframe,frame,object,embed,fencedframe";
  const nodeType = getter(Node.prototype, "nodeType"), shadowOf = getter(Element.prototype, "shadowRoot");
  const addedOf = getter(MutationRecord.prototype, "addedNodes");
  const listLength = getter(NodeList.prototype, "length"), item = NodeList.prototype.item;
  const matches = Element.prototype.matches, remove = Element.prototype.remove, observe = MutationObserver.prototype.observe;
  const select = { 1: Element.prototype.querySelectorAll, 9: Document.prototype.querySelectorAll, 11: DocumentFragment.prototype.querySelectorAll };
  const watched = [];
  const clear = (node) => {
    const type = apply(nodeType, node, []);
    if (type === 1 && apply(matches, node, [FRAMES])) return apply(remove, node, []);
    const q = select[type];
    if (!q) return;
    const found = apply(q, node, [FRAMES]);
    for (let i = 0, n = apply(listLength, found, []); i < n; i++) apply(remove, apply(item, found, [i]), []);
    if (type === 1) { const root = apply(shadowOf, node, []); if (root) { watch(root); clear(root); } }
  };
  const observer = new MutationObserver((records) => {
    for (let r = 0; r < records.length; r++) {
      const added = apply(addedOf, records[r], []);
      for (let i = 0, n = apply(listLength, added, []); i < n; i++) clear(apply(item, added, [i]));
    }
  });
  const watch = (root) => {
    for (let i = 0; i < watched.length; i++) if (watched[i] === root) return;
    watched[watched.length] = root;
    apply(observe, observer, [root, { __proto__: null, childList: true, subtree: true }]);
  };
  watch(document);

  const attach = Element.prototype.attachShadow;
  fix(Element.prototype, "attachShadow", { value: function attachShadow() { const root = apply(attach, this, arguments); watch(root); return root; }, writable: false });

  const lower = String.prototype.toLowerCase, indexOf = String.prototype.indexOf, slice = String.prototype.slice, str = String;
  const inert = (html) => {
    let s = str(html), out = "", from = 0;
    const l = apply(lower, s, []);
    for (let at; (at = apply(indexOf, l, ["shadowrootmode", from])) >= 0; from = at + 14) out += apply(slice, s, [from, at]) + "data-inert-shadowrootmode";
    return out + apply(slice, s, [from]);
  };
  const parsing = (target, name) => {
    const d = target && describe(target, name);
    if (!d || typeof d.value !== "function") return;
    const f = d.value;
    fix(target, name, { value: function (html) { const args = [inert(html)]; for (let i = 1; i < arguments.length; i++) args[i] = arguments[i]; return apply(f, this, args); }, writable: false });
  };
  for (const n of ["setHTMLUnsafe", "setHTML"]) { parsing(Element.prototype, n); parsing(window.ShadowRoot && ShadowRoot.prototype, n); }
  for (const n of ["parseHTMLUnsafe", "parseHTML"]) parsing(Document, n);
  for (const n of ["write", "writeln"]) fix(Document.prototype, n, { value: () => { throw new Error("document." + n + " is not available to apps: build the page with DOM methods"); }, writable: false });

  const nav = window.navigation, NE = window.NavigateEvent, ND = window.NavigationDestination;
  if (nav && NE && ND) {
    const cancel = Event.prototype.preventDefault, listen = EventTarget.prototype.addEventListener;
    const destinationOf = getter(NE.prototype, "destination"), typeOf = getter(NE.prototype, "navigationType"), sameDocument = getter(ND.prototype, "sameDocument");
    apply(listen, nav, ["navigate", (e) => {
      if (apply(sameDocument, apply(destinationOf, e, []), []) || apply(typeOf, e, []) === "reload") return;
      apply(cancel, e, []);
    }]);
  }
  for (const n of ["localStorage", "sessionStorage", "indexedDB", "caches", "cookieStore", "BroadcastChannel", "SharedWorker", "Worker"]) {
    try { delete window[n]; } catch {}
    fix(window, n, { value: undefined, writable: false });
  }
  if (describe(Document.prototype, "cookie")) fix(Document.prototype, "cookie", { get: () => "", set: () => {} });

  for (const C of [window.HTMLIFrameElement, window.HTMLFrameElement, window.HTMLObjectElement, window.HTMLEmbedElement]) {
    if (!C) continue;
    for (const n of ["contentWindow", "contentDocument"]) if (describe(C.prototype, n)) fix(C.prototype, n, { get: () => null });
    if (describe(C.prototype, "getSVGDocument")) fix(C.prototype, "getSVGDocument", { value: () => null, writable: false });
  }
})();`;
