// Markdown to HTML that is safe to serve on the instance's origin: marked
// renders, sanitize-html keeps only markup that cannot run script or load
// anything but images and links.
import type { Marked } from "marked";
import type SanitizeHtml from "sanitize-html";

// marked and sanitize-html (with postcss, ~20 MB resident) load on first use,
// so an instance that never renders a document does not carry them.
let loaded: { marked: Marked; sanitizeHtml: typeof SanitizeHtml; policy: SanitizeHtml.IOptions } | undefined;
function libs() {
  if (!loaded) {
    const sanitizeHtml = require("sanitize-html") as typeof SanitizeHtml;
    const { Marked: MarkedClass } = require("marked") as typeof import("marked");
    loaded = { marked: new MarkedClass({ gfm: true, breaks: false, async: false }), sanitizeHtml, policy: policyOf(sanitizeHtml) };
  }
  return loaded;
}

const policyOf = (sanitizeHtml: typeof SanitizeHtml): SanitizeHtml.IOptions => ({
  allowedTags: [
    ...sanitizeHtml.defaults.allowedTags,
    "img",
    "del",
    "ins",
    "sup",
    "sub",
    "details",
    "summary",
    "input",
  ],
  allowedAttributes: {
    a: ["href", "title", "rel"],
    img: ["src", "alt", "title", "width", "height"],
    code: ["class"],
    th: ["align"],
    td: ["align"],
    ol: ["start"],
    input: ["type", "checked", "disabled"],
  },
  allowedClasses: { code: [/^language-[\w-]+$/] },
  allowedSchemes: ["http", "https", "mailto"],
  allowedSchemesByTag: { img: ["http", "https"] },
  allowProtocolRelative: false,
  exclusiveFilter: (frame) => frame.tag === "input" && frame.attribs.type !== "checkbox",
  transformTags: {
    a: sanitizeHtml.simpleTransform("a", { rel: "nofollow noopener noreferrer" }),
  },
});

export function renderMarkdown(source: string): string {
  const { marked, sanitizeHtml, policy } = libs();
  return sanitizeHtml(marked.parse(source) as string, policy);
}

/** Plain text of a markdown body, for snippets and generated titles. */
export function plainText(source: string): string {
  const { marked, sanitizeHtml } = libs();
  const html = marked.parse(source) as string;
  return sanitizeHtml(html, { allowedTags: [], allowedAttributes: {} })
    .replace(/&amp;/g, "&")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/\s+/g, " ")
    .trim();
}
