// Reading a request body under a cap, for every reader (the API, /mcp, forms,
// plugin routes). The body is read as it streams and the read stops the moment
// the cap is passed, so a body without a Content-Length, or one that lies about
// it, is never held whole. Bytes being received at once are also capped per
// instance, so many large bodies arriving together cannot exhaust memory.
import { rateLimited } from "../auth/limits.ts";
import { HearthError, invalid, tooLarge } from "../errors.ts";
import type { MethodEntry } from "../registry.ts";
import type { Runtime } from "../runtime.ts";

/** Bytes of request bodies being received at once, across all requests of one instance. */
export class BodyBudget {
  private used = 0;
  constructor(public bytes: number) {}

  take(n: number): boolean {
    if (this.used + n > this.bytes) return false;
    this.used += n;
    return true;
  }

  give(n: number) {
    this.used = Math.max(0, this.used - n);
  }

  get inFlight(): number {
    return this.used;
  }
}

/** The largest body each instance's readers outside the methods take (acceptsBodies). */
const readers = new WeakMap<Runtime, number>();

/** The largest body a method's call accepts: its own limit (an upload), else the general one. */
export function bodyLimitOf(rt: Runtime, entry: MethodEntry): number {
  const own = entry.def.bodyLimit;
  return own === undefined ? Number(rt.config.HEARTH_BODY_LIMIT) : typeof own === "function" ? own(rt.config) : own;
}

/** The most any reader here accepts: the general limit, a method's own, or a protocol's (acceptsBodies). */
export function largestBody(rt: Runtime): number {
  let most = Math.max(Number(rt.config.HEARTH_BODY_LIMIT) || 0, readers.get(rt) ?? 0);
  for (const e of rt.registry.methods.values()) most = Math.max(most, bodyLimitOf(rt, e));
  return most;
}

const budgets = new WeakMap<Runtime, BodyBudget>();
export function bodyBudgetOf(rt: Runtime): BodyBudget {
  let b = budgets.get(rt);
  if (!b) {
    const n = Number(rt.config.HEARTH_BODY_BUDGET);
    // Never below the largest single body, or that body could never be received.
    budgets.set(rt, (b = new BodyBudget(n > 0 ? Math.max(n, largestBody(rt)) : Infinity)));
  }
  return b;
}

/** A reader outside the methods (the DAV protocols) takes bodies up to `limit`: the budget never falls below it. */
export function acceptsBodies(rt: Runtime, limit: number) {
  readers.set(rt, Math.max(readers.get(rt) ?? 0, limit));
  const b = budgets.get(rt);
  if (b && b.bytes < limit) b.bytes = limit;
}

/** Seconds a sender is asked to wait when the budget is full: bodies in flight finish within moments. */
const BUSY_RETRY_S = 2;

const busy = () => rateLimited(`the instance is receiving too many request bodies at once; try again in ${BUSY_RETRY_S} s`, BUSY_RETRY_S);
const over = (limit: number, declared?: number) =>
  tooLarge(declared === undefined ? `the request body is over the limit of ${limit} bytes` : `the request body is ${declared} bytes; the limit is ${limit}`);

/**
 * The body's bytes, at most `limit` of them: 413 as soon as more arrive (or
 * are declared), 429 with Retry-After when the instance is already receiving
 * its budget of bodies. What is reserved is given back once the read ends.
 */
export function readBody(rt: Runtime, req: Request, limit: number): Promise<Uint8Array<ArrayBuffer>> {
  return receive(rt, req, limit, async (r) => new Uint8Array(await r.arrayBuffer()), (b) => b);
}

/** A Content-Length of decimal digits (spaces around them allowed), else null, read without a regular expression. */
function lengthOf(header: string | null): number | null {
  if (header === null) return null;
  const digits = header.trim();
  if (digits === "") return null;
  for (let i = 0; i < digits.length; i++) {
    const c = digits.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return null;
  }
  return Number(digits);
}

/** A number of the settings below, or its default when it is not one (0 and more; 0 turns it off). */
const setting = (v: string | undefined, fallback: number) => {
  const n = Number(v);
  return v !== undefined && v.trim() !== "" && Number.isFinite(n) && n >= 0 ? n : fallback;
};

/**
 * Clocks of reads in flight, looked at by one coarse sweep rather than a
 * timer each: arming and clearing a timer per request cost more than the
 * rest of reading a small body. The sweep runs while any read is in flight.
 */
const running = new Set<BodyClock>();
let sweeper: Timer | null = null;
/** How often the sweep looks: a body is cut off at most this late. */
const SWEEP_MS = 250;

function sweep() {
  const now = performance.now();
  for (const c of running) c.check(now);
  if (running.size === 0 && sweeper) {
    clearInterval(sweeper);
    sweeper = null;
  }
}

/**
 * The time a body may take to arrive: HEARTH_BODY_TIMEOUT seconds, and one
 * more for each HEARTH_BODY_MIN_RATE bytes of it, so a large upload on a slow
 * link gets the time it needs while a body trickling in a byte at a time is
 * cut off. Its answer closes the connection: the rest of the body is never read.
 */
export class BodyClock {
  /** Rejects the read being waited for, once the time is up. */
  private fail: ((e: HearthError) => void) | null = null;
  private late: HearthError | null = null;
  private readonly started = performance.now();
  /** Bytes that extend the time: the declared length, or what has arrived so far. */
  bytes = 0;

  constructor(
    private readonly seconds: number,
    private readonly rate: number,
  ) {}

  static of(rt: Runtime): BodyClock {
    return new BodyClock(setting(rt.config.HEARTH_BODY_TIMEOUT, 30), setting(rt.config.HEARTH_BODY_MIN_RATE, 65536));
  }

  private due(): number {
    return this.started + (this.seconds + (this.rate > 0 ? this.bytes / this.rate : 0)) * 1000;
  }

  /** Called by the sweep: past the moment (which bytes that arrived may have moved later), the read waited for fails. */
  check(now: number) {
    if (now < this.due()) return;
    running.delete(this);
    const more = this.rate > 0 ? `, and 1 s more per ${this.rate} bytes` : "";
    this.late = new HearthError("request_timeout", `the request body did not arrive in time (${this.seconds} s${more}); nothing was done; send it again`, {
      retry: true,
      headers: { Connection: "close" },
    });
    this.fail?.(this.late);
    this.fail = null;
  }

  /** Waits for `p`, or throws 408 once the time is up. */
  within<T>(p: Promise<T>): Promise<T> {
    if (this.seconds <= 0) return p;
    if (this.late) return Promise.reject(this.late);
    if (this.fail === null && !running.has(this)) {
      running.add(this);
      sweeper ??= setInterval(sweep, SWEEP_MS);
    }
    return new Promise<T>((resolve, reject) => {
      this.fail = reject;
      p.then(resolve, reject);
    });
  }

  stop() {
    running.delete(this);
    this.fail = null;
  }
}

/**
 * The request with its body counted in the budget and the time bound as it
 * streams, for a handler that reads it itself (a WebDAV upload, held to its
 * own cap there): a declared length is reserved now, so a full budget refuses
 * before a byte is read; more than `limit` bytes is 413 as they arrive.
 * `streamed`: the handler passes each chunk on to storage rather than holding
 * the body, so only the chunk on its way is counted, taken as it arrives and
 * given back when the next is asked for; twenty large uploads at once then
 * hold twenty chunks, not twenty lengths. `release` gives back what is held
 * once the handler is done.
 */
export function metered(rt: Runtime, req: Request, limit: number, o: { streamed?: boolean } = {}): { request: Request; release: () => void } {
  const declared = lengthOf(req.headers.get("content-length"));
  if (declared !== null && declared > limit) {
    void req.body?.cancel().catch(() => {});
    throw over(limit, declared);
  }
  if (declared === 0 || !req.body) return { request: req, release: () => {} };
  const budget = bodyBudgetOf(rt);
  let held = 0;
  if (declared !== null && !o.streamed) {
    if (!budget.take(declared)) {
      void req.body.cancel().catch(() => {});
      throw busy();
    }
    held = declared;
  }
  const clock = BodyClock.of(rt);
  clock.bytes = declared ?? 0;
  const release = () => {
    clock.stop();
    budget.give(held);
    held = 0;
  };
  const reader = req.body.getReader();
  let size = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(out) {
      try {
        // Asked for the next chunk: a streamed body's last one has been passed on.
        if (o.streamed && held > 0) {
          budget.give(held);
          held = 0;
        }
        const { done, value } = await clock.within(reader.read());
        if (done) {
          release();
          return out.close();
        }
        size += value.byteLength;
        if (declared === null) clock.bytes = size;
        if (size > limit) throw over(limit);
        if (o.streamed) {
          if (!budget.take(value.byteLength)) throw busy();
          held = value.byteLength;
        } else if (size > held) {
          if (!budget.take(size - held)) throw busy();
          held = size;
        }
        out.enqueue(value);
      } catch (e) {
        void reader.cancel().catch(() => {});
        release();
        throw e;
      }
    },
    cancel() {
      void reader.cancel().catch(() => {});
      release();
    },
  });
  const request = new Request(req.url, { method: req.method, headers: req.headers, body, duplex: "half" } as RequestInit);
  return { request, release };
}

/**
 * Reads the body under the caps; `whole` takes a body of declared length in
 * one go, `fromBytes` makes the answer from the bytes of one read as it streamed.
 */
async function receive<T>(rt: Runtime, req: Request, limit: number, whole: (req: Request) => Promise<T>, fromBytes: (b: Uint8Array<ArrayBuffer>) => T): Promise<T> {
  const declared = lengthOf(req.headers.get("content-length"));
  if (declared !== null && declared > limit) {
    void req.body?.cancel().catch(() => {});
    throw over(limit, declared);
  }
  // Touching req.body makes a stream of what Bun otherwise hands over whole; a declared length needs none.
  if (declared === 0 || (declared === null && !req.body)) return fromBytes(new Uint8Array(0));
  const budget = bodyBudgetOf(rt);
  let held = 0;
  const reserve = (n: number) => {
    if (!budget.take(n)) return false;
    held += n;
    return true;
  };
  const clock = BodyClock.of(rt);
  try {
    // A declared length is reserved whole before anything is read, so a full budget refuses at
    // once; the server reads exactly that many bytes as the body, so it is read in one go.
    if (declared !== null) {
      if (!reserve(declared)) {
        void req.body?.cancel().catch(() => {});
        throw busy();
      }
      clock.bytes = declared;
      const read = whole(req);
      // Cut off, the read ends when the connection is closed: that is no one's trouble.
      read.catch(() => {});
      return await clock.within(read);
    }
    const reader = req.body!.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const { done, value } = await clock.within(reader.read()).catch((e) => {
        void reader.cancel().catch(() => {});
        throw e;
      });
      if (done) break;
      size += value.byteLength;
      clock.bytes = size;
      const refusal = size > limit ? over(limit) : size > held && !reserve(size - held) ? busy() : null;
      if (refusal) {
        void reader.cancel().catch(() => {});
        throw refusal;
      }
      chunks.push(value);
    }
    return fromBytes(chunks.length === 1 ? (chunks[0] as Uint8Array<ArrayBuffer>) : new Uint8Array(Buffer.concat(chunks)));
  } finally {
    clock.stop();
    budget.give(held);
  }
}

/**
 * The body as UTF-8 text, under the same caps. Bytes that are not UTF-8 are
 * refused (400, field "body") rather than read as U+FFFD, which would change
 * what was sent without a word.
 */
const utf8 = new TextDecoder("utf-8", { fatal: true });
function decode(b: Uint8Array): string {
  try {
    return utf8.decode(b);
  } catch {
    throw invalid("body", "the body is not UTF-8 text (it holds a byte sequence UTF-8 does not have, such as a lone surrogate's); send text as UTF-8");
  }
}
export function readText(rt: Runtime, req: Request, limit: number): Promise<string> {
  return receive(rt, req, limit, (r) => r.bytes().then(decode), decode);
}
