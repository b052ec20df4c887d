// A minimal ustar writer and reader: a backup is one file any `tar -xf` can
// open, written and read a file at a time so blobs never sit in memory whole.
import { open, type FileHandle } from "node:fs/promises";
import { FILE_MODE } from "../private.ts";

const BLOCK = 512;

function header(name: string, size: number, mtime: number): Uint8Array {
  if (Buffer.byteLength(name) > 100) throw new Error(`name too long for the archive: ${name}`);
  const h = new Uint8Array(BLOCK);
  const put = (s: string, at: number, len: number) => h.set(new TextEncoder().encode(s).subarray(0, len), at);
  const octal = (n: number, len: number) => n.toString(8).padStart(len - 1, "0") + "\0";
  put(name, 0, 100);
  put(octal(FILE_MODE, 8), 100, 8);
  put(octal(0, 8), 108, 8);
  put(octal(0, 8), 116, 8);
  put(octal(size, 12), 124, 12);
  put(octal(Math.floor(mtime / 1000), 12), 136, 12);
  put("        ", 148, 8);
  put("0", 156, 1);
  put("ustar\0", 257, 6);
  put("00", 263, 2);
  let sum = 0;
  for (const b of h) sum += b;
  put(sum.toString(8).padStart(6, "0") + "\0 ", 148, 8);
  return h;
}

export class TarWriter {
  private constructor(private fh: FileHandle) {}
  static async create(path: string): Promise<TarWriter> {
    return new TarWriter(await open(path, "wx", FILE_MODE));
  }

  /** Appends a file from disk, copying it in chunks; `size` is what was there when the listing was made. */
  async addFile(name: string, path: string, mtime = Date.now()): Promise<void> {
    const src = await open(path, "r");
    try {
      const size = (await src.stat()).size;
      await this.fh.write(header(name, size, mtime));
      const buf = new Uint8Array(1 << 20);
      let done = 0;
      while (done < size) {
        const { bytesRead } = await src.read(buf, 0, Math.min(buf.length, size - done), done);
        if (bytesRead === 0) throw new Error(`${path} shrank while being archived`);
        await this.fh.write(buf.subarray(0, bytesRead));
        done += bytesRead;
      }
      const pad = (BLOCK - (size % BLOCK)) % BLOCK;
      if (pad) await this.fh.write(new Uint8Array(pad));
    } finally {
      await src.close();
    }
  }

  /** Ends the archive and makes it durable before anyone is told it exists. */
  async close(): Promise<void> {
    await this.fh.write(new Uint8Array(BLOCK * 2));
    await this.fh.sync();
    await this.fh.close();
  }

  async abort(): Promise<void> {
    await this.fh.close().catch(() => {});
  }
}

export interface TarEntry {
  name: string;
  size: number;
  /** Byte offset of the content in the archive. */
  offset: number;
}

/** Lists an archive's regular files; refuses a truncated or corrupted one rather than restoring part of it. */
export async function readTar(path: string): Promise<TarEntry[]> {
  const fh = await open(path, "r");
  try {
    const total = (await fh.stat()).size;
    const out: TarEntry[] = [];
    const h = new Uint8Array(BLOCK);
    let at = 0;
    for (;;) {
      if (at + BLOCK > total) throw new Error("the archive ends early: it is truncated");
      await fh.read(h, 0, BLOCK, at);
      if (h.every((b) => b === 0)) return out;
      const text = (from: number, len: number) => new TextDecoder().decode(h.subarray(from, from + len)).replace(/\0.*$/s, "");
      let sum = 0;
      for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : h[i];
      if (parseInt(text(148, 8).trim(), 8) !== sum) throw new Error(`the archive is damaged at byte ${at}`);
      const name = text(0, 100);
      const size = parseInt(text(124, 12).trim(), 8);
      const type = text(156, 1) || "0";
      if (at + BLOCK + size > total) throw new Error("the archive ends early: it is truncated");
      if (type === "0") out.push({ name, size, offset: at + BLOCK });
      at += BLOCK + Math.ceil(size / BLOCK) * BLOCK;
    }
  } finally {
    await fh.close();
  }
}

/** Copies one entry's content out of the archive to `dest`. */
export async function extractEntry(archive: string, e: TarEntry, dest: string): Promise<void> {
  const src = await open(archive, "r");
  const out = await open(dest, "wx", FILE_MODE);
  try {
    const buf = new Uint8Array(1 << 20);
    let done = 0;
    while (done < e.size) {
      const { bytesRead } = await src.read(buf, 0, Math.min(buf.length, e.size - done), e.offset + done);
      if (bytesRead === 0) throw new Error(`the archive ends inside ${e.name}`);
      await out.write(buf.subarray(0, bytesRead));
      done += bytesRead;
    }
    await out.sync();
  } finally {
    await out.close();
    await src.close();
  }
}
