// App icons are SVG given by anyone, shown on pages other people open: only
// drawing elements and presentation attributes survive, never a script, an
// event handler, a link or anything fetched from elsewhere.
import type SanitizeHtml from "sanitize-html";
import { invalid } from "hearth";

const SHAPES = ["svg", "g", "path", "circle", "ellipse", "rect", "line", "polyline", "polygon", "text", "tspan", "title", "desc", "defs", "linearGradient", "radialGradient", "stop", "clipPath", "mask", "symbol"];
const PRESENTATION = [
  "viewBox", "width", "height", "xmlns", "fill", "fill-opacity", "fill-rule", "stroke", "stroke-width", "stroke-linecap", "stroke-linejoin", "stroke-opacity", "stroke-dasharray",
  "opacity", "transform", "d", "cx", "cy", "r", "rx", "ry", "x", "y", "x1", "y1", "x2", "y2", "points", "offset", "stop-color", "stop-opacity", "gradientUnits",
  "gradientTransform", "font-size", "font-family", "font-weight", "text-anchor", "dominant-baseline", "id", "clip-path", "mask", "preserveAspectRatio", "role", "aria-label",
];
export const MAX_ICON_BYTES = 16 * 1024;

export function sanitiseIcon(svg: string): string {
  if (svg.trim() === "") return "";
  if (new TextEncoder().encode(svg).byteLength > MAX_ICON_BYTES) throw invalid("icon", `icon must be an SVG of at most ${MAX_ICON_BYTES} bytes`);
  if (!/<svg[\s>]/i.test(svg)) throw invalid("icon", "icon must be an SVG image (<svg ...>...</svg>)");
  // Loaded on first use: sanitize-html with postcss holds ~20 MB resident.
  const sanitizeHtml = require("sanitize-html") as typeof SanitizeHtml;
  const clean = sanitizeHtml(svg, {
    allowedTags: SHAPES,
    allowedAttributes: { "*": PRESENTATION },
    allowedSchemes: [],
    parser: { lowerCaseTags: false, lowerCaseAttributeNames: false, xmlMode: true },
  })
    // url(...) in a fill or clip-path could fetch from elsewhere; only local references (#id) stay.
    .replace(/\s(fill|stroke|clip-path|mask)="url\((?!#)[^"]*\)"/gi, "")
    .trim();
  if (!/^<svg[\s>]/i.test(clean)) throw invalid("icon", "icon must be an SVG image with <svg> as its outer element");
  return clean;
}

/** The icon as a data URL for <img>, where an SVG cannot run anything even if something slipped through. */
export function iconDataUrl(svg: string): string | null {
  if (!svg) return null;
  const withNs = /\sxmlns=/.test(svg) ? svg : svg.replace(/^<svg/i, '<svg xmlns="http://www.w3.org/2000/svg"');
  return `data:image/svg+xml;charset=utf-8,${encodeURIComponent(withNs)}`;
}
