// Backups that run themselves. With HEARTH_BACKUP=on a serving instance
// writes a backup (./snapshot.ts) at each time HEARTH_BACKUP_SCHEDULE names
// (a cron expression, read by croner as the scheduler reads its own),
// encrypts it (./crypt.ts), puts it at HEARTH_BACKUP_TO (./destination.ts),
// reads it back from there, decrypts it and checks it through before calling
// it a success, and then removes the oldest beyond HEARTH_BACKUP_KEEP.
//
// Time is the instance clock's, so tests move a clock instead of waiting.
// Several instances on one database each keep a timer; the first to claim a
// due time in the shared state runs it, the others leave it. What happened
// last is kept in the database (backup_runs), so every instance sharing it
// shows the same on /status and the settings page; a time that fell due
// while the instance was stopped is run as soon as it serves again.
import { Cron } from "croner";
import { eq } from "drizzle-orm";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { blobBackend } from "../blobs.ts";
import { HearthError, invalid } from "../errors.ts";
import type { Runtime } from "../runtime.ts";
import { oneTimeKey, seal, sealingOf, unseal } from "./crypt.ts";
import { backupName, destinationOf, type Destination } from "./destination.ts";
import { backup, checkArchive } from "./snapshot.ts";
import { backupRuns } from "../settings/schema.ts";

/** The one row of backup_runs. */
const ROW = "last";
/** A claim outlives any backup: a second instance must never start the same one. */
const CLAIM_MS = 12 * 3_600_000;
/** The timer never sleeps longer than this, so a clock moved or a machine suspended is noticed. */
const MAX_SLEEP_MS = 60_000;

export interface BackupSuccess {
  at: string;
  /** The backup's name at the destination. */
  name: string;
  /** Bytes written to the destination (encrypted). */
  bytes: number;
  /** Files in the archive (database and blobs). */
  files: number;
  /** Decrypted from the destination and checked through after writing. */
  verified: true;
  took_ms: number;
}

export interface BackupFailure {
  at: string;
  reason: string;
}

/** What the status page and the settings page show about scheduled backups. */
export interface BackupState {
  enabled: boolean;
  schedule: string;
  /** The folder or s3:// address; null when it is not set or not valid. */
  destination: string | null;
  encryption: "passphrase" | "recipients" | null;
  keep: number;
  /** When the next one is due (ISO); null when off or misconfigured. */
  next: string | null;
  running: boolean;
  /** A setting that stops backups from running, said plainly; null when they can run. */
  problem: string | null;
  lastSuccess: BackupSuccess | null;
  lastFailure: BackupFailure | null;
}

interface Kept {
  lastAttempt: string | null;
  lastSuccess: BackupSuccess | null;
  lastFailure: BackupFailure | null;
}

interface Plan {
  cron: Cron;
  keep: number;
  destination: Destination;
  sealing: ReturnType<typeof sealingOf>;
}

const sha256 = async (path: string) => {
  const h = new Bun.CryptoHasher("sha256");
  for await (const chunk of Bun.file(path).stream()) h.update(chunk);
  return h.digest("hex");
};

export class Backups {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private nextDue: Date | null = null;
  private running: Promise<unknown> | null = null;
  private stopped = true;
  /** start() under way: runDue and state wait for it, so a test moving the clock right after start finds the timer armed. */
  private starting: Promise<void> = Promise.resolve();

  constructor(readonly rt: Runtime) {}

  get enabled() {
    return (this.rt.config.HEARTH_BACKUP || "off") === "on";
  }

  /** The settings read into what a run needs; throws the first that is wrong, named. */
  plan(): Plan {
    const c = this.rt.config;
    const on = c.HEARTH_BACKUP || "off";
    if (on !== "on" && on !== "off") throw invalid("HEARTH_BACKUP", `HEARTH_BACKUP is ${JSON.stringify(on)}: set it to on or off`);
    let cron: Cron;
    try {
      cron = new Cron(c.HEARTH_BACKUP_SCHEDULE || "0 3 * * *", { paused: true, timezone: c.HEARTH_TZ || undefined });
    } catch (e) {
      throw invalid("HEARTH_BACKUP_SCHEDULE", `HEARTH_BACKUP_SCHEDULE ${JSON.stringify(c.HEARTH_BACKUP_SCHEDULE)} is not a cron expression (minute hour day month weekday, "0 3 * * *" for 03:00 daily): ${(e as Error).message}`);
    }
    const keep = Number(c.HEARTH_BACKUP_KEEP || "7");
    if (!Number.isInteger(keep) || keep < 1) throw invalid("HEARTH_BACKUP_KEEP", `HEARTH_BACKUP_KEEP must be a whole number of at least 1, not ${JSON.stringify(c.HEARTH_BACKUP_KEEP)}`);
    return { cron, keep, destination: destinationOf(c), sealing: sealingOf(c) };
  }

  /** Read each time: `hearth backup --now` beside the server, or another instance on the same database, writes it too. */
  private async load(): Promise<Kept> {
    const row = await this.rt.store.rdb.select().from(backupRuns).where(eq(backupRuns.id, ROW)).get();
    const parse = <T>(text: string | null | undefined): T | null => (text ? (JSON.parse(text) as T) : null);
    return { lastAttempt: row?.lastAttempt ?? null, lastSuccess: parse<BackupSuccess>(row?.lastSuccess), lastFailure: parse<BackupFailure>(row?.lastFailure) };
  }

  private async save(k: Kept) {
    const values = { lastAttempt: k.lastAttempt, lastSuccess: k.lastSuccess && JSON.stringify(k.lastSuccess), lastFailure: k.lastFailure && JSON.stringify(k.lastFailure) };
    await this.rt.store.write(() =>
      this.rt.store.wdb
        .insert(backupRuns)
        .values({ id: ROW, ...values })
        .onConflictDoUpdate({ target: backupRuns.id, set: values })
        .run(),
    );
  }

  /**
   * Arms the timer when backups are on. The first run is the first scheduled
   * time after the last attempt, so one missed while stopped runs now; a
   * setting that is wrong is logged and shown on /status, and the instance
   * serves on.
   */
  start(): Promise<void> {
    // The time it started serving is read now: a clock moved while the state file loads must not move the first due time.
    this.starting = this.begin(this.rt.clock.now());
    return this.starting;
  }

  private async begin(startedAt: Date): Promise<void> {
    if (!this.enabled) return;
    this.stopped = false;
    let plan: Plan;
    try {
      plan = this.plan();
    } catch (e) {
      this.rt.log.error("scheduled backups are on but cannot run", { error: (e as Error).message });
      return;
    }
    const k = await this.load();
    const from = k.lastAttempt ? new Date(k.lastAttempt) : startedAt;
    this.nextDue = plan.cron.nextRun(from);
    this.arm();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running?.catch(() => {});
  }

  private arm() {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.stopped || !this.nextDue) return;
    const wait = Math.max(0, Math.min(this.nextDue.getTime() - this.rt.clock.now().getTime(), MAX_SLEEP_MS));
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.runDue()
        .catch((e) => this.rt.log.error("scheduled backup failed", { error: String(e) }))
        .finally(() => this.arm());
    }, wait);
    this.timer.unref?.();
  }

  /** Runs the backup that is due by the instance clock, if one is: what the timer does, and what tests call after moving the clock. */
  async runDue(): Promise<BackupSuccess | BackupFailure | null> {
    await this.starting;
    if (this.running) await this.running.catch(() => {});
    const now = this.rt.clock.now();
    if (!this.nextDue || now < this.nextDue) return null;
    const due = this.nextDue;
    let plan: Plan;
    try {
      plan = this.plan();
    } catch (e) {
      // Settings are read once at start: one that is wrong now stays wrong until the next.
      this.nextDue = null;
      return this.failed(now, e);
    }
    this.nextDue = plan.cron.nextRun(now);
    // Marked running at once, before any await, so settle() never misses a run that has taken its due time.
    const run = (async () => {
      // One instance of a deployment runs each due time.
      if (!(await this.rt.shared.claim(`backup:${due.getTime()}`, CLAIM_MS))) return null;
      return this.runWith(plan);
    })();
    this.running = run;
    try {
      return await run;
    } finally {
      if (this.running === run) this.running = null;
    }
  }

  /** Resolves once no backup is under way: after runDue, the timer may have been the one to run it. */
  async settle(): Promise<void> {
    while (this.running) await this.running.catch(() => {});
  }

  /** One backup now, whatever the schedule says (`hearth backup --now`): written, read back, checked, old ones pruned. */
  async runNow(): Promise<BackupSuccess | BackupFailure> {
    if (this.running) await this.running.catch(() => {});
    let plan: Plan;
    try {
      plan = this.plan();
    } catch (e) {
      return this.failed(this.rt.clock.now(), e);
    }
    const run = this.runWith(plan);
    this.running = run;
    try {
      return await run;
    } finally {
      if (this.running === run) this.running = null;
    }
  }

  private async failed(at: Date, e: unknown): Promise<BackupFailure> {
    // The owner reads this (admins only), so an unexpected error keeps its own words rather than "internal error".
    const f = { at: at.toISOString(), reason: e instanceof HearthError ? e.message : String((e as Error)?.message ?? e) };
    this.rt.log.error("backup failed", { reason: f.reason });
    const k = await this.load();
    await this.save({ ...k, lastAttempt: at.toISOString(), lastFailure: f });
    return { ...f };
  }

  private async runWith(plan: Plan): Promise<BackupSuccess | BackupFailure> {
    const now = this.rt.clock.now();
    const started = performance.now();
    const work = await mkdtemp(join(tmpdir(), "hearth-scheduled-"));
    const name = backupName(now);
    let written = false;
    try {
      const tar = join(work, "hearth.tar");
      const r = await backup(this.rt.dataDir, tar, { now, blobs: blobBackend(this.rt.config, this.rt.dataDir), database: this.rt.config.HEARTH_DATABASE_URL || undefined });
      // A key made for this backup alone lets the instance read back what it wrote to the owner's recipients; it is never stored.
      const check = plan.sealing.passphrase ? null : await oneTimeKey();
      const sealed = join(work, name);
      await seal(tar, sealed, plan.sealing, check ? [check.recipient] : []);
      const bytes = Bun.file(sealed).size;
      await plan.destination.put(name, sealed);
      written = true;
      // Checked as it is at the destination, not as it was here.
      const back = join(work, "back.age");
      const plain = join(work, "back.tar");
      await plan.destination.get(name, back);
      await unseal(back, plain, check ? { identities: [check.identity] } : { passphrase: plan.sealing.passphrase });
      if ((await sha256(plain)) !== (await sha256(tar))) throw new Error(`the backup read back from ${plan.destination.where} differs from the one written`);
      await checkArchive(plain);
      const ok: BackupSuccess = { at: now.toISOString(), name, bytes, files: r.files, verified: true, took_ms: Math.round(performance.now() - started) };
      const names = await plan.destination.list();
      for (const old of names.filter((n) => n !== name).slice(0, Math.max(0, names.length - plan.keep))) await plan.destination.remove(old);
      const k = await this.load();
      await this.save({ ...k, lastAttempt: ok.at, lastSuccess: { ...ok } });
      this.rt.log.info("backup written and checked", { name, where: plan.destination.where, bytes, files: r.files });
      return ok;
    } catch (e) {
      // A backup that failed its check is not kept, so the pruning never counts it as one of the good ones.
      if (written) await plan.destination.remove(name).catch(() => {});
      return this.failed(now, e);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }

  /** What the status page and the settings page show. */
  async state(): Promise<BackupState> {
    await this.starting;
    const c = this.rt.config;
    const k = await this.load();
    let problem: string | null = null;
    let destination: string | null = null;
    let encryption: BackupState["encryption"] = null;
    let keep = Number(c.HEARTH_BACKUP_KEEP || "7");
    try {
      const p = this.plan();
      destination = p.destination.where;
      encryption = p.sealing.passphrase ? "passphrase" : "recipients";
      keep = p.keep;
    } catch (e) {
      problem = (e as Error).message;
    }
    return {
      enabled: this.enabled,
      schedule: c.HEARTH_BACKUP_SCHEDULE || "0 3 * * *",
      destination,
      encryption,
      keep,
      next: this.enabled && !problem && this.nextDue ? this.nextDue.toISOString() : null,
      running: this.running !== null,
      problem: this.enabled ? problem : null,
      lastSuccess: k.lastSuccess && { ...k.lastSuccess },
      lastFailure: k.lastFailure && { ...k.lastFailure },
    };
  }
}

const all = new WeakMap<Runtime, Backups>();

/** The instance's scheduled backups; tests drive them with runDue() after moving the clock. */
export function backupsOf(rt: Runtime): Backups {
  let b = all.get(rt);
  if (!b) {
    b = new Backups(rt);
    all.set(rt, b);
    const made = b;
    rt.onStop(() => made.stop());
  }
  return b;
}

/** Scheduled backups as the settings page shows them: on or off, where, when next, and the last success and failure with its reason. */
export const backupState = (rt: Runtime): Promise<BackupState> => backupsOf(rt).state();
