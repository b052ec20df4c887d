// HTTP/1.1 over a plain socket, for requests fetch will not make: a Host
// header of our choosing, a body sent a piece at a time and left unfinished.
import { connect, type Socket } from "node:net";

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  text: string;
  /** Body bytes the client had written when the answer was complete. */
  sent: number;
}

export interface RawRequest {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  /** Sent whole, with its Content-Length. */
  body?: string;
  /** Sent as this many bytes of chunked body with no final chunk: the body never ends. */
  openBody?: number;
  /** Byte to fill an open body with. */
  fill?: string;
  /** The body is sent one byte each this many milliseconds, and never finished (chunked unless a Content-Length is given). */
  trickle?: number;
  /** The loopback address to send from (any of 127.0.0.0/8), so the server sees different clients. */
  from?: string;
  /** Hangs up when aborted. */
  signal?: AbortSignal;
}

/** Resolves with the answer, or rejects naming `waiting` when none has come after `patienceMs`. */
export async function rawRequest(port: number, r: RawRequest, patienceMs = 60_000): Promise<RawAnswer> {
  const socket: Socket = connect({ port, host: "127.0.0.1", localAddress: r.from });
  await new Promise<void>((ok, fail) => socket.once("connect", ok).once("error", fail));
  let received = Buffer.alloc(0);
  let sent = 0;
  const answer = new Promise<RawAnswer>((resolve, reject) => {
    const tryParse = () => {
      const end = received.indexOf("\r\n\r\n");
      if (end < 0) return false;
      const [statusLine, ...lines] = received.subarray(0, end).toString("latin1").split("\r\n");
      const headers: Record<string, string> = {};
      for (const l of lines) {
        const i = l.indexOf(":");
        headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      const length = Number(headers["content-length"] ?? NaN);
      const body = received.subarray(end + 4);
      if (Number.isFinite(length) && body.length < length) return false;
      resolve({ status: Number(statusLine.split(" ")[1]), headers, text: body.toString("utf8"), sent });
      return true;
    };
    socket.on("data", (d) => {
      received = Buffer.concat([received, d as Buffer]);
      if (tryParse()) socket.destroy();
    });
    socket.on("close", () => tryParse() || reject(new Error(`the connection closed without a whole answer: ${JSON.stringify(received.toString("latin1").slice(0, 200))}`)));
    socket.on("error", () => {});
    r.signal?.addEventListener("abort", () => {
      socket.destroy();
      reject(new Error("hung up"));
    });
  });
  const timer = new Promise<never>((_, reject) => {
    const t = setTimeout(() => reject(new Error(`no answer to ${r.path} after ${patienceMs} ms: the server is still waiting for the rest of the body`)), patienceMs);
    void answer.finally(() => clearTimeout(t)).catch(() => {});
  });
  const head = [`${r.method ?? "POST"} ${r.path} HTTP/1.1`];
  const headers: Record<string, string> = { host: `127.0.0.1:${port}`, ...(r.headers ?? {}) };
  if (r.openBody !== undefined || (r.trickle !== undefined && headers["content-length"] === undefined)) headers["transfer-encoding"] = "chunked";
  else if (r.body !== undefined) headers["content-length"] = String(Buffer.byteLength(r.body));
  for (const [k, v] of Object.entries(headers)) head.push(`${k}: ${v}`);
  socket.write(head.join("\r\n") + "\r\n\r\n");
  if (r.body !== undefined) socket.write(r.body);
  if (r.openBody !== undefined) {
    const piece = Buffer.alloc(16 * 1024, r.fill ?? "a");
    while (sent < r.openBody && !socket.destroyed) {
      const n = Math.min(piece.length, r.openBody - sent);
      socket.write(`${n.toString(16)}\r\n`);
      socket.write(piece.subarray(0, n));
      socket.write("\r\n");
      sent += n;
    }
  }
  if (r.trickle !== undefined) {
    const chunked = headers["transfer-encoding"] === "chunked";
    const drip = setInterval(() => {
      if (socket.destroyed) return clearInterval(drip);
      socket.write(chunked ? "1\r\na\r\n" : "a");
      sent++;
    }, r.trickle);
    void answer.finally(() => clearInterval(drip)).catch(() => {});
    void timer.catch(() => clearInterval(drip));
  }
  try {
    return await Promise.race([answer, timer]);
  } finally {
    socket.destroy();
  }
}
