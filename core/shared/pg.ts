// Shared state in the PostgreSQL database the instances already share, for
// a deployment without Redis. Each check-and-change is one statement
// (INSERT … ON CONFLICT DO UPDATE … RETURNING): the conflicting row is
// locked and read at its latest version, so racing instances agree without
// a transaction of their own. Messages go over LISTEN/NOTIFY on one channel,
// on a connection of its own.
//
// The tables are scratch state, as Redis's keys are: UNLOGGED (not written
// to the WAL, emptied by a crash), created at open rather than by the
// store's migrations since they hold nothing a backup should keep, and their
// rows lapse, swept every few seconds off the calls' path. Times that decide
// lapsing are the database's own, so instances whose clocks differ agree.
//
// The database going away stops the store too, so the fallback is plain:
// a command that fails or does not answer in time is served from this
// instance's memory, as redis.ts does, and `heard` is false while the
// listening connection is down. A connection can also stay open and hear
// nothing (a server that stopped answering, a link that died silently):
// each instance notifies itself twice a second, and one that does not hear
// itself in time drops its listening connection and makes another.
import { SQL } from "bun";
import type { Logger } from "../plugin.ts";
import type { Failures, Shared } from "./index.ts";
import { LocalShared } from "./local.ts";
import { SLOW_PAUSE_MS, Subscribers, within } from "./subscribers.ts";

const CHANNEL = "hearth_shared";
/** NOTIFY refuses payloads of 8000 bytes or more: longer messages wait in a table and the notification names their row. */
const NOTIFY_BYTES = 7900;
const RETRY_MS = 250;
const SWEEP_MS = 3_000;
/** How often an instance notifies itself to learn whether its listening connection still hears, and how long the answer may take. */
const PING_MS = 500;
const PING_WAIT_MS = 1_500;
/** Longer than any call runs; only an instance that died leaves a hold to lapse. */
const HOLD_MS = 10 * 60_000;
/** How long a long message waits for the listeners to read it. */
const MESSAGE_MS = 60_000;
/** Serialises the creation of the tables by instances starting together. */
const CREATE_KEY = 0x4865617274680003n;

/** The database's time in milliseconds, one value for the whole statement. */
const NOW = "(extract(epoch from now()) * 1000)::float8";

const TABLES = `
CREATE UNLOGGED TABLE IF NOT EXISTS hearth_shared_rate (key TEXT PRIMARY KEY, tokens FLOAT8 NOT NULL, at FLOAT8 NOT NULL, ok BOOLEAN NOT NULL, lapse FLOAT8 NOT NULL);
CREATE UNLOGGED TABLE IF NOT EXISTS hearth_shared_holds (account TEXT PRIMARY KEY, holds JSONB NOT NULL, lapse FLOAT8 NOT NULL);
CREATE UNLOGGED TABLE IF NOT EXISTS hearth_shared_failures (key TEXT PRIMARY KEY, count INT NOT NULL, last FLOAT8 NOT NULL, lapse FLOAT8 NOT NULL);
CREATE UNLOGGED TABLE IF NOT EXISTS hearth_shared_claims (key TEXT PRIMARY KEY, lapse FLOAT8 NOT NULL);
CREATE UNLOGGED TABLE IF NOT EXISTS hearth_shared_messages (id BIGSERIAL PRIMARY KEY, body TEXT NOT NULL, lapse FLOAT8 NOT NULL);
`;

// A token bucket per key, as core/auth/limits.ts Buckets and redis.ts TAKE:
// refilled for the time since it was last touched, one token taken if whole.
// $1 key, $2 capacity (a minute's worth), $3 now.
const REFILLED = "least($2::float8, r.tokens + greatest(0, $3::float8 - r.at) * $2::float8 / 60000)";
const TAKE = `
INSERT INTO hearth_shared_rate AS r (key, tokens, at, ok, lapse)
VALUES ($1, CASE WHEN $2::float8 >= 1 THEN $2::float8 - 1 ELSE $2::float8 END, $3::float8, $2::float8 >= 1, ${NOW} + 60000)
ON CONFLICT (key) DO UPDATE SET
  tokens = CASE WHEN ${REFILLED} >= 1 THEN ${REFILLED} - 1 ELSE ${REFILLED} END,
  ok = ${REFILLED} >= 1,
  at = greatest($3::float8, r.at),
  lapse = ${NOW} + 60000
RETURNING tokens, ok`;

// An account's holds are one row, {id: [credits, lapses at]}, so that one
// statement reads what the others hold (those that have not lapsed) and adds
// this one only if it fits. $1 account, $2 id, $3 credits, $4 balance, $5 lapse ms.
const LIVE = `FROM jsonb_each(h.holds) e WHERE (e.value->>1)::float8 > ${NOW}`;
const THIS = `jsonb_build_object($2::text, jsonb_build_array($3::float8, ${NOW} + $5::float8))`;
const HOLD = `
INSERT INTO hearth_shared_holds AS h (account, holds, lapse)
VALUES ($1, CASE WHEN $3::float8 <= $4::float8 THEN ${THIS} ELSE '{}'::jsonb END, ${NOW} + $5::float8)
ON CONFLICT (account) DO UPDATE SET
  holds = (SELECT coalesce(jsonb_object_agg(e.key, e.value), '{}'::jsonb) ${LIVE})
    || CASE WHEN (SELECT coalesce(sum((e.value->>0)::float8), 0) ${LIVE} AND e.key <> $2) + $3::float8 <= $4::float8 THEN ${THIS} ELSE '{}'::jsonb END,
  lapse = greatest(h.lapse, ${NOW} + $5::float8)
RETURNING (SELECT coalesce(sum((e.value->>0)::float8), 0) FROM jsonb_each(h.holds) e WHERE e.key <> $2) AS others`;

// A count of failures that starts again after a quiet spell. $1 key, $2 now, $3 forget ms.
const FAIL = `
INSERT INTO hearth_shared_failures AS f (key, count, last, lapse) VALUES ($1, 1, $2::float8, ${NOW} + $3::float8)
ON CONFLICT (key) DO UPDATE SET
  count = CASE WHEN $2::float8 - f.last > $3::float8 OR f.lapse <= ${NOW} THEN 1 ELSE f.count + 1 END,
  last = $2::float8,
  lapse = ${NOW} + $3::float8`;

// Claimed unless a claim that has not lapsed holds it. $1 key, $2 ttl ms.
const CLAIM = `
INSERT INTO hearth_shared_claims AS c (key, lapse) VALUES ($1, ${NOW} + $2::float8)
ON CONFLICT (key) DO UPDATE SET lapse = excluded.lapse WHERE c.lapse <= ${NOW}
RETURNING 1 AS claimed`;

const SWEEP = ["hearth_shared_rate", "hearth_shared_failures", "hearth_shared_claims", "hearth_shared_messages", "hearth_shared_holds"]
  .map((t) => `DELETE FROM ${t} WHERE lapse < ${NOW}${t === "hearth_shared_holds" ? " OR holds = '{}'::jsonb" : ""};`)
  .join("\n");

export class PgShared implements Shared {
  private sql: SQL;
  private listener: SQL;
  private url: string;
  /** This instance's own ping, and when it was sent (0: none awaited). */
  private ping = "";
  private pingSent = 0;
  private pings = 0;
  private pinger: Timer;
  private local = new LocalShared();
  /** Holds and claims made in memory while the database was away, let go there too. */
  private heldHere = new Set<string>();
  private claimedHere = new Set<string>();
  private channels: Subscribers;
  private watchers: ((heard: boolean) => void)[] = [];
  private ready: Promise<boolean> | null = null;
  private tablesFailed = false;
  private closed = false;
  private slowUntil = 0;
  private sweeper: Timer;
  /** Notifications are delivered in the order they came, a long message's read from its row included. */
  private delivering: Promise<void> = Promise.resolve();
  private publishing: Promise<void> = Promise.resolve();
  heard = false;

  constructor(
    url: string,
    private log: Pick<Logger, "warn" | "info">,
  ) {
    this.url = url;
    this.channels = new Subscribers(log);
    // One connection: statements are pipelined on it, and its statements reach the database in the order they were made.
    this.sql = new SQL({ url, max: 1, connectionTimeout: 2 });
    this.listener = this.newListener();
    void this.tables();
    void this.listen(this.listener);
    this.sweeper = setInterval(() => void this.sweep(), SWEEP_MS);
    this.sweeper.unref();
    this.pinger = setInterval(() => this.checkHearing(), PING_MS);
    this.pinger.unref();
  }

  /** A client for the listening connection; one replaced by another no longer speaks for `heard`. */
  private newListener(): SQL {
    const client: SQL = new SQL({
      url: this.url,
      max: 1,
      connectionTimeout: 2,
      // A connection that only listens is idle: a server's idle_session_timeout would end it over and over.
      connection: { idle_session_timeout: 0 },
      onclose: () => client === this.listener && this.setHeard(false),
    } as ConstructorParameters<typeof SQL>[0]);
    return client;
  }

  /** Sends this instance's ping, or, when the last went unheard too long, takes the listening connection as lost. */
  private checkHearing() {
    if (this.closed || !this.heard) return;
    if (this.pingSent) {
      if (Date.now() - this.pingSent > PING_WAIT_MS) this.relisten();
      return;
    }
    const ping = (this.ping = `!${this.id}:${++this.pings}`);
    this.pingSent = Date.now();
    this.publishing = this.publishing.then(() => this.run("SELECT pg_notify($1, $2)", [CHANNEL, ping]).then(() => {}));
  }
  private readonly id = crypto.randomUUID();

  private relisten() {
    this.pingSent = 0;
    this.setHeard(false);
    const old = this.listener;
    this.listener = this.newListener();
    void old.close({ timeout: 0 }).catch(() => {});
    void this.listen(this.listener);
  }

  /** The tables, created once; tried again on a later command if the database was not there. */
  private tables(): Promise<boolean> {
    this.ready ??= this.sql
      .begin(async (tx) => {
        await tx.unsafe(`SELECT pg_advisory_xact_lock(${CREATE_KEY})`);
        await tx.unsafe(TABLES);
      })
      .then(
        () => true,
        (e) => {
          // Said once, not at every retry while the database is away.
          if (!this.tablesFailed) this.log.warn("shared state: cannot create its tables in the database; serving from this instance's memory", { error: String(e) });
          this.tablesFailed = true;
          setTimeout(() => (this.ready = null), RETRY_MS).unref();
          return false;
        },
      );
    return this.ready;
  }

  /** Bun's client re-listens by itself when the connection drops (onlisten says when); only the first LISTEN is retried here. */
  private async listen(client: SQL) {
    for (let wait = RETRY_MS; !this.closed && client === this.listener; wait = Math.min(wait * 2, 10_000)) {
      try {
        await client.listen(
          CHANNEL,
          (payload) => this.notified(payload),
          () => client === this.listener && this.setHeard(true),
        );
        return;
      } catch {
        await Bun.sleep(wait);
      }
    }
  }

  private notified(payload: string) {
    // Pings are answered here, ahead of messages that may wait for a read.
    if (payload.startsWith("!")) {
      if (payload === this.ping) this.pingSent = 0;
      return;
    }
    this.delivering = this.delivering.then(async () => {
      let body: string | undefined = payload;
      if (payload.startsWith("#")) {
        const rows = await this.run<{ body: string }[]>("SELECT body FROM hearth_shared_messages WHERE id = $1::bigint", [payload.slice(1)]);
        body = rows?.[0]?.body;
        if (body === undefined) return this.log.warn("shared state: a long message could not be read", { id: payload.slice(1) });
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {}
      // Anything else notified on the channel is not ours to read.
      if (Array.isArray(parsed) && typeof parsed[0] === "string" && typeof parsed[1] === "string") this.deliver(parsed[0], parsed[1]);
    });
  }

  private setHeard(heard: boolean) {
    if (this.heard === heard || (heard && this.closed)) return;
    this.heard = heard;
    // A ping sent before the change says nothing of the connection after it.
    this.pingSent = 0;
    if (heard) this.log.info("shared state: hearing other instances through the database");
    else if (!this.closed) this.log.warn("shared state: lost the database's notifications; serving what cannot wait from this instance's memory until they are back");
    for (const fn of this.watchers) fn(heard);
  }

  private deliver(channel: string, message: string) {
    this.channels.deliver(channel, message);
  }

  /** A statement's rows, or undefined when the database is not there to give them in time. */
  private async run<T>(text: string, params: unknown[]): Promise<T | undefined> {
    // A database that stopped answering is left alone a while, so calls do not each wait for it.
    if (this.closed || Date.now() < this.slowUntil || !(await this.tables())) return undefined;
    return within(() => this.sql.unsafe(text, params) as Promise<T>, () => (this.slowUntil = Date.now() + SLOW_PAUSE_MS));
  }

  private async sweep() {
    if (this.closed || Date.now() < this.slowUntil || !(await this.tables())) return;
    await this.sql.unsafe(SWEEP).catch(() => {});
  }

  async take(key: string, perMinute: number, now: number): Promise<number> {
    const rows = await this.run<{ tokens: number; ok: boolean }[]>(TAKE, [key, perMinute, now]);
    if (!rows?.[0]) return this.local.take(key, perMinute, now);
    const { tokens, ok } = rows[0];
    return ok ? 0 : Math.max(1, Math.ceil((1 - tokens) / (perMinute / 60_000) / 1000));
  }

  async hold(account: string, id: string, credits: number, balance: number): Promise<number> {
    const rows = await this.run<{ others: number }[]>(HOLD, [account, id, credits, balance, HOLD_MS]);
    if (rows?.[0]) return rows[0].others;
    this.heldHere.add(id);
    return this.local.hold(account, id, credits, balance);
  }

  unhold(account: string, id: string, _credits?: number) {
    if (this.heldHere.delete(id)) return this.local.unhold(account, id);
    void this.run("UPDATE hearth_shared_holds SET holds = holds - $2::text WHERE account = $1", [account, id]);
  }

  async failures(key: string): Promise<Failures | null> {
    const rows = await this.run<Failures[]>(`SELECT count, last FROM hearth_shared_failures WHERE key = $1 AND lapse > ${NOW}`, [key]);
    if (rows === undefined) return this.local.failures(key);
    return rows[0] ?? null;
  }

  async fail(key: string, now: number, forgetMs: number) {
    if ((await this.run(FAIL, [key, now, forgetMs])) === undefined) this.local.fail(key, now, forgetMs);
  }

  async forgive(key: string) {
    this.local.forgive(key);
    await this.run("DELETE FROM hearth_shared_failures WHERE key = $1", [key]);
  }

  async claim(key: string, ttlMs: number): Promise<boolean> {
    const rows = await this.run<unknown[]>(CLAIM, [key, ttlMs]);
    if (rows !== undefined) return rows.length > 0;
    // The database away: this instance's memory claims it.
    if (!this.local.claim(key, ttlMs)) return false;
    this.claimedHere.add(key);
    return true;
  }

  unclaim(key: string) {
    if (this.claimedHere.delete(key)) return this.local.unclaim(key);
    void this.run("DELETE FROM hearth_shared_claims WHERE key = $1", [key]);
  }

  publish(channel: string, message: string) {
    // Unheard, this instance tells its own subscribers itself; the others hear it if the database takes the message.
    if (!this.heard) this.deliver(channel, message);
    const first = this.outbox.length === 0;
    this.outbox.push(JSON.stringify([channel, message]));
    // One send at a time, whatever the first has to wait for (the tables being made); what is published meanwhile goes out with the next.
    if (first) this.publishing = this.publishing.then(() => this.send());
  }

  /** Messages published since the last send began, in order. */
  private outbox: string[] = [];

  /**
   * Sends what waits in the outbox: the short messages in a row as one
   * statement, one transaction, rather than one each (each its own commit,
   * and a wake-up of every listening connection), so a burst of writes costs
   * the database a few notifications' transactions, not one per write. As
   * NOTIFY does within one transaction, a message the batch already holds
   * goes out once: what is published says that something happened (a
   * change, a revocation), not how many times.
   */
  private async send() {
    const batch = this.outbox;
    this.outbox = [];
    let short: string[] = [];
    const flush = async () => {
      if (short.length === 0) return;
      const payloads = short;
      short = [];
      if (payloads.length === 1) await this.run("SELECT pg_notify($1, $2)", [CHANNEL, payloads[0]]);
      // A function scan gives the array's elements in order, and NOTIFY delivers a transaction's notifications in the order they were made.
      else await this.run("SELECT pg_notify($1, m) FROM json_array_elements_text($2::text::json) AS m", [CHANNEL, JSON.stringify(payloads)]);
    };
    for (const payload of batch) {
      if (Buffer.byteLength(payload) < NOTIFY_BYTES) short.push(payload);
      else {
        await flush();
        await this.run(`WITH m AS (INSERT INTO hearth_shared_messages (body, lapse) VALUES ($2, ${NOW} + ${MESSAGE_MS}) RETURNING id) SELECT pg_notify($1, '#' || m.id) FROM m`, [CHANNEL, payload]);
      }
    }
    await flush();
  }

  subscribe(channel: string, fn: (message: string) => void): () => void {
    return this.channels.add(channel, fn).stop;
  }

  watch(fn: (heard: boolean) => void) {
    this.watchers.push(fn);
  }

  /** Resolves once both connections are closed: a stopped instance holds none. */
  async close() {
    this.closed = true;
    clearInterval(this.sweeper);
    clearInterval(this.pinger);
    this.heard = false;
    await Promise.all([this.listener.close().catch(() => {}), this.sql.close().catch(() => {})]);
  }
}
