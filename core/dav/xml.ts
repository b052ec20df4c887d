// The XML of WebDAV requests and answers. Requests are read with
// fast-xml-parser, namespaces resolved from their declarations so a property
// is known by its namespace and name whatever prefix the client chose;
// answers are written with fixed prefixes.
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { invalid } from "../errors.ts";

export const NS = {
  dav: "DAV:",
  caldav: "urn:ietf:params:xml:ns:caldav",
  carddav: "urn:ietf:params:xml:ns:carddav",
  cs: "http://calendarserver.org/ns/",
  apple: "http://apple.com/ns/ical/",
} as const;

const PREFIX: Record<string, string> = { [NS.dav]: "d", [NS.caldav]: "c", [NS.carddav]: "card", [NS.cs]: "cs", [NS.apple]: "a" };
const ROOT_NS = Object.entries(PREFIX)
  .map(([ns, p]) => `xmlns:${p}="${ns}"`)
  .join(" ");

/** An element of a request: its namespace, local name, attributes, children and text. */
export interface El {
  ns: string;
  name: string;
  attrs: Record<string, string>;
  children: El[];
  text: string;
  /** Its children and text in document order, and the prefixes in scope on it: enough to write it back as it came (serialize). */
  nodes: (El | string)[];
  scope: Record<string, string>;
}

// htmlEntities: character references (&#65536;, &#xE9;) are decoded too.
const options = { ignoreAttributes: false, attributeNamePrefix: "", preserveOrder: true, processEntities: true, htmlEntities: true, parseTagValue: false } as const;
const parser = new XMLParser({ ...options, trimValues: true });
// Dead property values are kept as sent, whitespace included.
const spaced = new XMLParser({ ...options, trimValues: false });
const XML_NS = "http://www.w3.org/XML/1998/namespace";

type Raw = Record<string, unknown>;

function build(node: Raw, scope: Record<string, string>): El | null {
  const tag = Object.keys(node).find((k) => k !== ":@");
  if (!tag || tag === "#text" || tag.startsWith("?")) return null;
  const attrs = (node[":@"] ?? {}) as Record<string, string>;
  const here = { ...scope };
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "xmlns") here[""] = v;
    else if (k.startsWith("xmlns:")) {
      // Namespaces in XML 1.0 has no undeclaring a prefix.
      if (v === "") throw invalid("body", `the body is not namespace-well-formed: ${k}="" declares no namespace`);
      here[k.slice(6)] = v;
    }
  }
  const colon = tag.indexOf(":");
  const prefix = colon >= 0 ? tag.slice(0, colon) : "";
  if (prefix && here[prefix] === undefined) throw invalid("body", `the body is not namespace-well-formed: the prefix ${JSON.stringify(prefix)} of <${tag}> is not declared`);
  const el: El = { ns: here[prefix] ?? "", name: colon >= 0 ? tag.slice(colon + 1) : tag, attrs, children: [], text: "", nodes: [], scope: here };
  for (const c of (node[tag] ?? []) as Raw[]) {
    if ("#text" in c) {
      el.text += String(c["#text"]);
      el.nodes.push(String(c["#text"]));
    } else {
      const child = build(c, here);
      if (child) {
        el.children.push(child);
        el.nodes.push(child);
      }
    }
  }
  return el;
}

/** The request body's root element, or null for an empty body; a body that is not XML is a 400 naming it. */
export function parseXml(text: string, o: { keepSpace?: boolean } = {}): El | null {
  if (!text.trim()) return null;
  // The parser reads leniently (an unclosed element is closed for it); a request must be well-formed.
  const valid = XMLValidator.validate(text);
  if (valid !== true) throw invalid("body", `the body is not well-formed XML: ${valid.err.msg} (line ${valid.err.line})`);
  let raw: Raw[];
  try {
    raw = (o.keepSpace ? spaced : parser).parse(text) as Raw[];
  } catch (e) {
    throw invalid("body", `the body is not XML: ${(e as Error).message}`);
  }
  for (const n of raw) {
    const el = build(n, { xml: XML_NS });
    if (el) return el;
  }
  throw invalid("body", "the body holds no XML element");
}

export const child = (el: El | null | undefined, ns: string, name: string) => el?.children.find((c) => c.ns === ns && c.name === name);
export const children = (el: El | null | undefined, ns: string, name: string) => el?.children.filter((c) => c.ns === ns && c.name === name) ?? [];
/** Every descendant with this name, at any depth. */
export function descendants(el: El | null | undefined, ns: string, name: string, out: El[] = []): El[] {
  for (const c of el?.children ?? []) {
    if (c.ns === ns && c.name === name) out.push(c);
    descendants(c, ns, name, out);
  }
  return out;
}

export const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/**
 * An element written back as XML that means what it meant where it was read:
 * each element carries its namespace as a default declaration, prefixed
 * attributes the declarations of their prefixes, so it stands alone in any
 * document it is put into.
 */
export function serialize(el: El, inherited = ""): string {
  const attrs: string[] = [];
  if (el.ns !== inherited) attrs.push(`xmlns="${esc(el.ns)}"`);
  const declared = new Set<string>();
  for (const [k, v] of Object.entries(el.attrs)) {
    if (k === "xmlns" || k.startsWith("xmlns:")) continue;
    const colon = k.indexOf(":");
    if (colon >= 0) {
      const p = k.slice(0, colon);
      if (p !== "xml" && !declared.has(p) && el.scope[p] !== undefined) {
        declared.add(p);
        attrs.push(`xmlns:${p}="${esc(el.scope[p])}"`);
      }
    }
    attrs.push(`${k}="${esc(String(v))}"`);
  }
  const open = [el.name, ...attrs].join(" ");
  if (el.nodes.length === 0) return `<${open}/>`;
  const inner = el.nodes.map((n) => (typeof n === "string" ? esc(n) : serialize(n, el.ns))).join("");
  return `<${open}>${inner}</${el.name}>`;
}

/** A property's element name in an answer: a known prefix, or the namespace declared on it. */
export function tagOf(ns: string, name: string): { open: string; close: string } {
  const p = PREFIX[ns];
  if (p) return { open: `${p}:${name}`, close: `${p}:${name}` };
  return { open: `x:${name} xmlns:x="${esc(ns)}"`, close: `x:${name}` };
}

/** A property with its value already as XML (or empty). */
export const prop = (ns: string, name: string, inner = "") => {
  const t = tagOf(ns, name);
  return inner ? `<${t.open}>${inner}</${t.close}>` : `<${t.open}/>`;
};

export interface ResponseXml {
  href: string;
  found?: string[];
  missing?: { ns: string; name: string }[];
  /** A response with a status alone (a deleted member in sync-collection). */
  status?: number;
}

const STATUS_TEXT: Record<number, string> = { 200: "OK", 403: "Forbidden", 404: "Not Found", 507: "Insufficient Storage" };

export function multistatus(responses: ResponseXml[], syncToken?: string): string {
  const parts = responses.map((r) => {
    if (r.status) return `<d:response><d:href>${esc(r.href)}</d:href><d:status>HTTP/1.1 ${r.status} ${STATUS_TEXT[r.status] ?? ""}</d:status></d:response>`;
    let stats = "";
    if (r.found?.length) stats += `<d:propstat><d:prop>${r.found.join("")}</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat>`;
    if (r.missing?.length) stats += `<d:propstat><d:prop>${r.missing.map((m) => prop(m.ns, m.name)).join("")}</d:prop><d:status>HTTP/1.1 404 Not Found</d:status></d:propstat>`;
    return `<d:response><d:href>${esc(r.href)}</d:href>${stats}</d:response>`;
  });
  const token = syncToken ? `<d:sync-token>${esc(syncToken)}</d:sync-token>` : "";
  return `<?xml version="1.0" encoding="utf-8"?>\n<d:multistatus ${ROOT_NS}>${parts.join("")}${token}</d:multistatus>`;
}

export function errorXml(ns: string, name: string, inner = ""): string {
  return `<?xml version="1.0" encoding="utf-8"?>\n<d:error ${ROOT_NS}>${prop(ns, name, inner)}</d:error>`;
}
