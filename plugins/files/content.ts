// Turning a put's `content` into bytes, and naming their type.
import { invalid, tooLarge } from "hearth";

const B64 = /^[A-Za-z0-9+/]*={0,2}$/;
const B64URL = /^[A-Za-z0-9_-]*={0,2}$/;

/** Strict base64 (standard or URL-safe alphabet, whitespace ignored): anything else is a 400 naming `content`. */
export function decodeBase64(text: string): Uint8Array {
  const s = text.replace(/[\s]+/g, "");
  if (!(B64.test(s) || B64URL.test(s)) || s.length % 4 === 1 || (s.includes("=") && s.length % 4 !== 0))
    throw invalid("content", "content is not valid base64 (encoding is \"base64\"): use A-Z, a-z, 0-9, + and / with = padding");
  return new Uint8Array(Buffer.from(s, "base64"));
}

export function toBytes(content: string, encoding: "base64" | undefined, max: number): Uint8Array {
  // Checked before decoding so an oversized upload is refused without building it in memory twice.
  const estimate = encoding === "base64" ? Math.floor((content.replace(/\s+/g, "").length * 3) / 4) - 2 : Buffer.byteLength(content, "utf8");
  if (estimate > max) throw tooLarge(`the file is about ${estimate} bytes; the limit is ${max} bytes (HEARTH_FILES_MAX_BYTES)`, "content");
  const bytes = encoding === "base64" ? decodeBase64(content) : new TextEncoder().encode(content);
  if (bytes.byteLength > max) throw tooLarge(`the file is ${bytes.byteLength} bytes; the limit is ${max} bytes (HEARTH_FILES_MAX_BYTES)`, "content");
  return bytes;
}

/** The content type: the one given, else guessed from the name's extension; text given as text says it is UTF-8. */
export function typeFor(name: string, given: string | undefined, encoding: "text" | "base64"): string {
  let type = given?.trim() || Bun.file(name).type;
  if (encoding === "text") {
    if (type === "application/octet-stream") type = "text/plain;charset=utf-8";
    if (/^text\//i.test(type) && !/charset=/i.test(type)) type = `${type};charset=utf-8`;
  }
  return type;
}

export const TYPE_PATTERN = "^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*(\\s*;\\s*[A-Za-z0-9!#$&^_.+-]+=(\"[^\"]*\"|[A-Za-z0-9!#$&^_.+-]+))*$";

/** A file name: no slashes or control characters (the API's rule for files/put's name, and WebDAV's for a rename). */
export const NAME_PATTERN = "^[^/\\\\\\u0000-\\u001f\\u007f]+$";
