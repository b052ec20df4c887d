// ctx.agentHost: what the agent needs from the instance beyond an ordinary
// plugin, given only to a plugin naming "agentHost" in needs (the agent), so
// it reaches no core file. Its tools are the registry's methods, called
// through dispatch as the person it acts for with `agent` set, so prices,
// scopes, ownership and the methods withheld from it apply exactly as they do
// to any other call; its clients (the page, mail, the worker) start runs
// through dispatch too.
import { findSession } from "../auth/sessions.ts";
import { intersectScopes } from "../auth/tokens.ts";
import { changedCaller } from "../call.ts";
import type { CapabilityScope } from "../capabilities.ts";
import { accounts } from "../db/schema.ts";
import { dispatch, priceOf } from "../dispatch.ts";
import { mailOf, type SendInput } from "../mail/index.ts";
import { defineModule } from "../module.ts";
import type { Caller } from "../plugin.ts";
import type { MethodEntry } from "../registry.ts";
import type { Runtime } from "../runtime.ts";

/** Where a person talks with the agent: the page, mail, the command line. */
export type Client = "web" | "mail" | "cli";

/** How a run was started, for what the method cannot read from its arguments. */
export interface RunHint {
  client: Client;
  /** A mail thread's root Message-ID, so a reply continues its conversation. */
  thread?: string;
  /** What a new conversation is about, when the client knows better than the prompt's first words (a mail's subject, a task's title). */
  topic?: string;
  onText?: (piece: string) => void;
  onTool?: (name: string, ok: boolean, refused?: string) => void;
  /** Ends the run early (the instance stopping): the model request under way is cancelled. */
  signal?: AbortSignal;
  /** Outside content the request itself carries (a forwarded or quoted mail): the run starts as having read it. */
  outside?: string;
}

export interface Tool {
  entry: MethodEntry;
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface AgentHost {
  /** Methods the agent may call for this caller: in its scopes, not withheld from the agent, not the agent's own service's. */
  tools(): Tool[];
  /**
   * Calls a tool through dispatch as the caller acting through the agent.
   * `read`: what outside content the run has read. The call's scopes then
   * leave out `agent`, so a task or event prompt it sets down for the agent
   * is not run as the owner's own request later; and a send waits for the
   * owner's approval.
   */
  call(entry: MethodEntry, args: Record<string, unknown>, o?: { read?: string | null }): Promise<unknown>;
  /** What a call would cost in credits, with the instance's overrides and metering switch. */
  price(entry: MethodEntry, args: Record<string, unknown>): number | Promise<number>;
  /** How this run was started (client, thread, stream listeners); null for a plain API call. */
  hint(): RunHint | null;
  /** Calls any method through dispatch as `caller` (the worker moving a task along as its owner). */
  callAs(caller: Caller, path: string, args: Record<string, unknown>): Promise<unknown>;
  /**
   * Runs the agent's ask through dispatch for `caller`, telling it how it was started.
   * `caller` holds the scopes of whoever set the agent working (a task's
   * setter, a mail's sender), and its tools stay within those scopes.
   * The agent's ask itself is let through, since handing work to the agent was the
   * point, unless `own` says those scopes must name the agent's service themselves (a
   * task, as an event's prompt): then dispatch refuses a caller without it.
   * `page`: a person asked on a page in the browser, which is then the call's
   * surface (an event's otherwise).
   */
  ask(caller: Caller, args: Record<string, unknown>, hint: RunHint, o?: { own?: boolean; page?: boolean }): Promise<AskResult>;
  /** The signed-in session's CSRF token, for the page's script. */
  csrf(req: Request): Promise<string | null>;
  /** Every account, for the worker that looks for their agents' tasks. */
  accounts(): Promise<{ id: string; username: string; admin: boolean }[]>;
  /** Mail as an account under a tag (an agent answering as handle+name). */
  sendMail(account: { id: string; username: string }, m: SendInput): Promise<unknown>;
}

export interface AskResult {
  answer: string;
  conversation: string;
  agent: string;
  steps: number;
  stopped: string | null;
  calls: { tool: string; ok: boolean; status?: number }[];
  credits: number;
  /** Sends not made because the run had read outside content: the tool, its method, and what the run had read. */
  refused: { tool: string; method: string; read: string }[];
}

declare module "../plugin.ts" {
  interface CapabilityTypes {
    agentHost: AgentHost;
  }
}


/** The services named in AGENT_SERVICES, or null for every one. */
function offered(config: Readonly<Record<string, string>>): Set<string> | null {
  const list = (config.AGENT_SERVICES ?? "").split(",").map((s) => s.trim().toLowerCase()).filter(Boolean);
  return list.length ? new Set(list) : null;
}

/** The methods offered as tools: every service's but the agent's own (`self`), within the caller's scopes. */
export function toolsFor(rt: Runtime, self: string, caller: Caller): Tool[] {
  const out: Tool[] = [];
  for (const entry of rt.registry.list()) {
    if (entry.service === self || entry.def.withheldFromAgent) continue;
    if (caller.scopes !== "*" && !caller.scopes.includes(entry.service)) continue;
    if (entry.def.access === "account" && !caller.account) continue;
    out.push({ entry, name: entry.tool, description: entry.def.description, parameters: entry.schema });
  }
  return out;
}

/**
 * ctx.agentHost: what the agent does as the instance on the caller's behalf
 * (its tools, their prices, mail). The agent is whichever service declares
 * it (s.service): the core names none.
 */
export function agentHostFor(s: CapabilityScope): AgentHost {
  const { rt, service: self } = s;
  // The agent's calls carry the caller's scopes cut to AGENT_SERVICES, so dispatch refuses what either leaves out.
  const only = offered(rt.config);
  const asAgent: Caller = { ...s.caller, scopes: only ? intersectScopes(s.caller.scopes, [...only]) : s.caller.scopes, agent: true };
  // Work set down after reading outside content carries no scope for the agent's service: a task or event prompt
  // written from a stranger's words would otherwise come back as the owner's own request.
  // The call also says what the run read, so dispatch holds a send for the owner's approval (core/policy/gate.ts).
  const afterReading = (read: string): Caller => ({ ...asAgent, scopes: (asAgent.scopes === "*" ? rt.registry.services() : asAgent.scopes).filter((n) => n !== self), untrustedRead: read });
  return {
    tools: () => toolsFor(rt, self, asAgent),
    // Each tool call is a call of its own, made from the run: priced, charged and limited by itself.
    call: (entry, args, o) => dispatch(rt, { service: entry.service, method: entry.name, args, caller: o?.read ? afterReading(o.read) : asAgent, parent: s.call }),
    async price(entry, args) {
      if (rt.config.HEARTH_METERING === "off") return 0;
      try {
        return await (rt.metering?.price ? rt.metering.price(entry, args, asAgent) : priceOf(entry, args, rt, asAgent));
      } catch {
        // A price that cannot be worked out from these arguments is for dispatch to refuse with its own message.
        return 0;
      }
    },
    hint: () => (s.call.hint as RunHint | undefined) ?? null,
    callAs(caller, path, args) {
      const [service, method] = path.split("/");
      return dispatch(rt, { service, method, args, caller, parent: s.call });
    },
    async ask(caller, args, hint, o) {
      if (!o?.own && caller.scopes !== "*" && !caller.scopes.includes(self)) caller = changedCaller(caller, { scopes: [...caller.scopes, self] });
      return (await dispatch(rt, { service: self, method: "ask", args, caller, hint, surface: o?.page ? "page" : "event" })) as AskResult;
    },
    csrf: async (req) => (await findSession(rt, req))?.csrf ?? null,
    accounts: () => rt.store.rdb.select({ id: accounts.id, username: accounts.username, admin: accounts.admin }).from(accounts).all(),
    sendMail: (account, m) => mailOf(rt).send(account, m, [], s.call),
  };
}

export const agentHostModule = defineModule({ name: "agentHost", provides: { capabilities: { agentHost: agentHostFor } } });
