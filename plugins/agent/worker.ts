// The agent's own work: tasks assigned to it. Each pass takes, per account,
// the open `todo` task due first, marks it doing, runs it as the owner's
// agent, and marks it done with the answer as its result, or puts it back to
// todo with the reason. A task that failed is not retried until its owner
// changes it, so one impossible task does not spend credits on every pass.
// The worker finds tasks with the tasks service alone, and works on each with
// no more than the task's own scopes: those of whoever set it, so a token
// limited to tasks cannot reach notes or mail by handing work to the agent.
// Those scopes must name `agent` itself, as an event's prompt must: a token
// that may not call the agent cannot set it working through a task either.
import { asHearthError, type Caller } from "hearth";
import type { AskResult } from "hearth";
import type { AgentCtx } from "./run.ts";

interface TaskRow {
  id: string;
  title: string;
  detail: string;
  assignee: string;
  status: string;
  updated: string | null;
  scopes: "*" | string[];
}

export class Worker {
  private timer: ReturnType<typeof setInterval> | null = null;
  private running: Promise<string[]> | null = null;
  /** Task id -> its `updated` when it last failed. */
  private failed = new Map<string, string | null>();
  /** Cancels the run under way when the instance stops, so its task goes back to todo rather than staying doing. */
  private stopping = new AbortController();

  constructor(private ctx: AgentCtx) {}

  start(everyMs: number) {
    this.timer = setInterval(() => void this.pass().catch((e) => this.ctx.log.error("agent worker pass failed", { error: String(e) })), everyMs);
    this.timer.unref?.();
  }

  async stop() {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.stopping.abort();
    await this.running;
  }

  /** One pass over every account; returns the ids of the tasks it ran. Passes never overlap. */
  pass(): Promise<string[]> {
    if (!this.running) this.running = this.work().finally(() => (this.running = null));
    return this.running;
  }

  private async work(): Promise<string[]> {
    const host = this.ctx.agentHost;
    const ran: string[] = [];
    for (const account of await host.accounts()) {
      if (this.stopping.signal.aborted) break;
      const finder: Caller = { account, scopes: ["tasks"], via: "local" };
      let tasks: TaskRow[];
      try {
        tasks = (await host.callAs(finder, "tasks/list", { status: "todo" })) as TaskRow[];
      } catch (e) {
        const he = asHearthError(e);
        // An instance without the tasks service has no work to pick up.
        if (he.kind === "not_found") return ran;
        this.ctx.log.warn("agent worker cannot list tasks", { account: account.id, error: he.message });
        continue;
      }
      const task = tasks.find((t) => t.assignee === "agent" && !(this.failed.has(t.id) && this.failed.get(t.id) === t.updated));
      if (!task) continue;
      ran.push(task.id);
      const setter: Caller = { account, scopes: task.scopes, via: "local" };
      await host.callAs(setter, "tasks/update", { id: task.id, status: "doing" });
      const prompt = [`Task: ${task.title}`, task.detail].filter(Boolean).join("\n\n");
      let next: { status: "done" | "todo"; result: string };
      try {
        const r = (await host.ask(setter, { prompt }, { client: "cli", topic: `Task: ${task.title}`, signal: this.stopping.signal }, { own: true })) as AskResult;
        next = r.stopped ? { status: "todo", result: r.answer } : { status: "done", result: r.answer };
      } catch (e) {
        next = { status: "todo", result: `The agent could not do this: ${asHearthError(e).message}` };
      }
      try {
        const after = (await host.callAs(setter, "tasks/update", { id: task.id, ...next })) as TaskRow;
        if (next.status === "todo") this.failed.set(task.id, after.updated);
        else this.failed.delete(task.id);
      } catch (e) {
        // Deleted meanwhile: nothing to record it on.
        this.ctx.log.warn("agent worker could not record a task's outcome", { task: task.id, error: asHearthError(e).message });
      }
    }
    return ran;
  }
}

const workers = new WeakMap<object, Worker>();

/** The instance's worker, keyed by the agent's settings object (one per running instance); tests run passes by hand. */
export function workerFor(rt: { pluginConfig(service: string): object }): Worker | undefined {
  return workers.get(rt.pluginConfig("agent"));
}

export function startWorker(ctx: AgentCtx) {
  const w = new Worker(ctx);
  workers.set(ctx.config, w);
  if ((ctx.config.AGENT_WORKER ?? "on") === "off") return;
  const secs = Number(ctx.config.AGENT_WORKER_SECONDS);
  w.start((Number.isFinite(secs) && secs > 0 ? secs : 60) * 1000);
}

export async function stopWorker(ctx: AgentCtx) {
  await workers.get(ctx.config)?.stop();
}
