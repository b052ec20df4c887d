// The app's icon as PNG, for systems that install a web app only with one
// (192 and 512 px, maskable: the flame sits inside the safe circle). Drawn
// here, once per size, so the single binary carries no image file: the
// favicon's accent square with a light drop of flame, supersampled 4×4.
import { deflateSync } from "node:zlib";

const ACCENT = [0x8a, 0x3b, 0x12];
const LIGHT = [0xfb, 0xfa, 0xf7];

/** Whether (x, y), both 0..1, is inside the flame: a circle and the cone up to its tip. */
function inFlame(x: number, y: number): boolean {
  const cx = 0.5, cy = 0.6, r = 0.2, tip = 0.2;
  if ((x - cx) ** 2 + (y - cy) ** 2 <= r * r) return true;
  if (y < tip || y > cy) return false;
  // The cone meets the circle where its sides are tangent: close enough at 0.93 of the radius.
  return Math.abs(x - cx) <= ((y - tip) / (cy - tip)) * r * 0.93;
}

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  out.set(new TextEncoder().encode(type), 4);
  out.set(data, 8);
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

function draw(size: number): Uint8Array<ArrayBuffer> {
  const raw = new Uint8Array(size * (size * 3 + 1));
  const S = 4;
  for (let py = 0; py < size; py++) {
    raw[py * (size * 3 + 1)] = 0;
    for (let px = 0; px < size; px++) {
      let hits = 0;
      for (let sy = 0; sy < S; sy++) for (let sx = 0; sx < S; sx++) if (inFlame((px + (sx + 0.5) / S) / size, (py + (sy + 0.5) / S) / size)) hits++;
      const a = hits / (S * S);
      const at = py * (size * 3 + 1) + 1 + px * 3;
      for (let c = 0; c < 3; c++) raw[at + c] = Math.round(ACCENT[c] * (1 - a) + LIGHT[c] * a);
    }
  }
  const header = new Uint8Array(13);
  const v = new DataView(header.buffer);
  v.setUint32(0, size);
  v.setUint32(4, size);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits, RGB, deflate, no filter, no interlace
  const parts = [new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk("IHDR", header), chunk("IDAT", new Uint8Array(deflateSync(raw, { level: 9 }))), chunk("IEND", new Uint8Array())];
  const png = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) (png.set(p, at), (at += p.length));
  return png as Uint8Array<ArrayBuffer>;
}

const drawn = new Map<number, Uint8Array<ArrayBuffer>>();
export const ICON_SIZES = [192, 512] as const;

export function iconPng(size: number): Uint8Array<ArrayBuffer> {
  let png = drawn.get(size);
  if (!png) drawn.set(size, (png = draw(size)));
  return png;
}

/** The same, as SVG (the favicon's flame on a full-bleed square, for the maskable purpose). */
export const ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" fill="#8a3b12"/><path d="M16 7c.8 4 6.4 6.4 6.4 12.8a6.4 6.4 0 0 1-12.8 0c0-3.2 1.6-5.6 3.2-7.2 0 2.4.8 4 2.4 4.8 0-4-.8-7.2.8-10.4z" fill="#fbfaf7"/></svg>`;
