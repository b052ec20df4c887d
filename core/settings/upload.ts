// A backup uploaded to /settings/restore, written to a file in the data
// folder's work area as it arrives rather than held in memory: a backup is
// the size of everything the instance holds. The session's CSRF token must
// come before the file (the form puts it first, a script sends it as a
// header), so no byte is kept for a request that is not the admin's own. The
// caller removes the folder whatever happens: a refusal, a body over the cap,
// or an upload the browser stopped.
import busboy from "busboy";
import { createWriteStream } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import { invalid, tooLarge } from "../errors.ts";

export interface Received {
  fields: Map<string, string>;
  /** The file, whole on disk; null when none was chosen. */
  file: { path: string; name: string; size: number } | null;
}

const mb = (n: number) => `${Math.floor(n / 1024 / 1024)} MB`;

/**
 * Reads a multipart form, its text fields into memory (small) and its one
 * file part, `file`, into `work/backup`, refusing it past `cap` bytes.
 * `allowed` is asked, with the token the form or the header carries, before
 * the file's first byte is written; it throws to refuse.
 */
export function receiveUpload(req: Request, work: string, cap: number, allowed: (csrf: string | undefined) => void): Promise<Received> {
  return new Promise<Received>((resolve, reject) => {
    let failed = false;
    const fail = (e: unknown) => {
      if (failed) return;
      failed = true;
      reject(e);
    };
    let bb: busboy.Busboy;
    try {
      bb = busboy({ headers: Object.fromEntries(req.headers), limits: { fileSize: cap, files: 1, fields: 20, fieldSize: 64 * 1024 } });
    } catch (e) {
      fail(invalid("file", `the upload is not a form this page can read: ${(e as Error).message}`));
      return;
    }
    const fields = new Map<string, string>();
    let file: Received["file"] = null;
    let written: Promise<void> = Promise.resolve();
    bb.on("field", (name, value) => fields.set(name, value));
    bb.on("file", (name, stream, info) => {
      if (name !== "file" || file || failed) return void stream.resume();
      try {
        allowed(fields.get("csrf"));
      } catch (e) {
        stream.resume();
        return fail(e);
      }
      const kept = { path: join(work, "backup"), name: info.filename ?? "", size: 0 };
      file = kept;
      const out = createWriteStream(kept.path, { mode: 0o600 });
      stream.on("data", (chunk: Buffer) => (kept.size += chunk.length));
      stream.on("limit", () => fail(tooLarge(`the backup is larger than this page takes (${mb(cap)}): put it in HEARTH_BACKUP_TO and pick it from the list, or run hearth restore on the server`, "file")));
      written = new Promise<void>((done, stop) => {
        out.on("finish", done);
        out.on("error", stop);
        stream.on("error", stop);
      });
      stream.pipe(out);
    });
    bb.on("error", (e) => fail(invalid("file", `the upload could not be read: ${(e as Error).message}`)));
    bb.on("close", () => {
      written.then(
        () => (failed ? undefined : resolve({ fields, file: file && file.size > 0 ? file : null })),
        (e) => fail(invalid("file", `the upload could not be kept: ${(e as Error).message}`)),
      );
    });
    const body = req.body ? Readable.fromWeb(req.body as unknown as import("node:stream/web").ReadableStream) : Readable.from([]);
    // The browser stopped sending (the admin cancelled, the page closed): what arrived goes with the folder.
    body.on("error", (e) => fail(invalid("file", `the upload stopped before it was whole: ${e.message}`)));
    body.pipe(bb);
  });
}
