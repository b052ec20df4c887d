// Serving a stored file over HTTP: right type, Content-Disposition, ETag,
// single byte ranges, streamed from the blob store, or, when the instance is
// set to, a redirect to a short-lived signed URL of its bucket. Types a
// browser could run script in (HTML, SVG, XML, ...) are sent as downloads
// under a sandboxing CSP, so a file never acts with the instance's origin.
import type { Blobs } from "hearth";
import type { files } from "./schema.ts";

type File = typeof files.$inferSelect;

// Shown in the browser; everything else is a download.
const INLINE = /^(image\/(png|jpeg|gif|webp|avif|bmp|x-icon|vnd\.microsoft\.icon)|audio\/[\w.+-]+|video\/[\w.+-]+|text\/(plain|csv|markdown)|application\/(json|pdf))(;|$)/i;

export function disposition(name: string, inline: boolean): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, "_");
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${inline ? "inline" : "attachment"}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

/** Parses one `bytes=` range; null means serve the whole file (absent, malformed or several ranges). */
export function parseRange(header: string | null, size: number): { start: number; end: number } | "unsatisfiable" | null {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === "" && m[2] === "")) return null;
  if (m[1] === "") {
    const n = Number(m[2]);
    if (n === 0 || size === 0) return "unsatisfiable";
    return { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size || end < start) return "unsatisfiable";
  return { start, end };
}

/** Serves the file; `etag` is its entity tag at this address (the content's hash unless the address names another). */
export async function serveFile(req: Request, f: File, blobs: Blobs, etag = `"${f.hash}"`): Promise<Response> {
  const inline = INLINE.test(f.type);
  const headers: Record<string, string> = {
    "content-type": f.type,
    "content-disposition": disposition(f.name, inline),
    "x-content-type-options": "nosniff",
    "accept-ranges": "bytes",
    etag,
    "cache-control": "private, no-cache",
    "last-modified": new Date(f.created).toUTCString(),
  };
  // A PDF viewer refuses to run inside a sandbox; PDFs open in the browser's own viewer, off this origin.
  if (!/^application\/pdf/i.test(f.type)) headers["content-security-policy"] = "sandbox; default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'";
  if (req.headers.get("if-none-match")?.split(",").some((t) => t.trim() === etag || t.trim() === "*")) return new Response(null, { status: 304, headers });
  const size = await blobs.size(f.hash);
  if (size === null) return new Response("the content of this file is missing", { status: 404, headers: { "content-type": "text/plain;charset=utf-8" } });
  if (blobs.presign) {
    // The store answers the reader itself; a type a browser could run script in goes as opaque bytes, a download.
    const type = inline || /^application\/pdf/i.test(f.type) ? f.type : "application/octet-stream";
    return new Response(null, { status: 302, headers: { location: blobs.presign(f.hash, { type, disposition: headers["content-disposition"] }), "cache-control": "no-store" } });
  }
  const ifRange = req.headers.get("if-range");
  const range = ifRange && ifRange !== etag ? null : parseRange(req.headers.get("range"), size);
  if (range === "unsatisfiable") return new Response(null, { status: 416, headers: { ...headers, "content-range": `bytes */${size}` } });
  if (range) {
    headers["content-range"] = `bytes ${range.start}-${range.end}/${size}`;
    headers["content-length"] = String(range.end - range.start + 1);
    return new Response(blobs.body(f.hash, range), { status: 206, headers });
  }
  // Bun sends a streamed body (a bucket's) chunked, without this length; a file on disk keeps it.
  headers["content-length"] = String(size);
  return new Response(blobs.body(f.hash), { status: 200, headers });
}
