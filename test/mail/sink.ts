// An SMTP server standing in for the next hop (a relay or a recipient's MX):
// it keeps what it is given and refuses recipients as the test scripts.
import { SMTPServer } from "smtp-server";

export interface Received {
  from: string;
  to: string[];
  raw: string;
  remoteAddress: string;
  secure: boolean;
}

export async function startSink(o: { starttls?: boolean; refuse?: (rcpt: string, attempt: number) => { code: number; message: string } | null } = {}) {
  const received: Received[] = [];
  const waiting: ((r: Received) => void)[] = [];
  const attempts = new Map<string, number>();
  let connections = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: o.starttls ? ["AUTH"] : ["AUTH", "STARTTLS"],
    logger: false,
    onConnect(_session, cb) {
      connections++;
      cb();
    },
    onRcptTo(address, _session, cb) {
      const n = (attempts.get(address.address) ?? 0) + 1;
      attempts.set(address.address, n);
      const no = o.refuse?.(address.address, n);
      if (no) return cb(Object.assign(new Error(no.message), { responseCode: no.code }));
      cb();
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        const r: Received = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((t) => t.address),
          raw: Buffer.concat(chunks).toString("utf8"),
          remoteAddress: session.remoteAddress,
          secure: session.secure,
        };
        received.push(r);
        waiting.shift()?.(r);
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const addr = server.server.address();
  const port = typeof addr === "object" && addr ? addr.port : 0;
  let taken = 0;
  return {
    port,
    received,
    attempts,
    /** Sessions opened, whatever came of them. */
    get connections() {
      return connections;
    },
    /** The next message not yet taken, waiting for it when none has come. */
    next(): Promise<Received> {
      const i = taken++;
      if (i < received.length) return Promise.resolve(received[i]);
      return new Promise((resolve) => waiting.push(resolve));
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
