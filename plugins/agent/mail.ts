// Mail to handle+name reaches the agent called name, and its answer goes back
// in the same thread from handle+name. Only the account's own mail is
// answered, and only as sent on this instance: a stranger writing to
// alice+research (or forging alice's address from outside) must not get an
// agent that reads Alice's notes, and an agent's answer (sent from a tagged
// address) never sets off another agent.
//
// The agent then acts with the scopes of the call that sent the mail, so a
// token limited to mail cannot reach notes through it. Mail from outside has
// no such call behind it: the owner configured the agent, but the one setting
// it working is whoever wrote, a stranger until proven otherwise (SPF, DKIM
// and DMARC vouch for a domain, never for a person). It therefore runs with no
// scopes at all, which is to say it is not run: a scope-less agent could only
// talk, and its words would go back to that stranger.
import { asHearthError, type Caller } from "hearth";
import { type ArrivedMail, splitAddress, parseLocal } from "hearth/mail";
import type { AskResult } from "hearth";
import type { AgentCtx } from "./run.ts";

/** The bare address inside "Name <addr>" or the address itself, lower-cased. */
function bare(from: string): string {
  const m = /<([^>]+)>/.exec(from);
  return (m ? m[1] : from).trim().toLowerCase();
}

/** Whether `from` is the account's own plain handle (here, or at the instance's mail domain). */
export function fromOwner(from: string, username: string, domain: string | null): boolean {
  const addr = bare(from);
  if (!addr.includes("@")) {
    const lp = parseLocal(addr);
    return !!lp && lp.handle === username && lp.tag === null;
  }
  const parts = splitAddress(addr);
  if (!parts || !domain || parts.domain.toLowerCase() !== domain) return false;
  const lp = parseLocal(parts.local);
  return !!lp && lp.handle === username && lp.tag === null;
}

/**
 * Whether the owner's mail carries someone else's words: a forward, or a
 * quoted message. The owner's own lines are their request; what they pass on
 * is outside content, so the run starts as having read it.
 */
export function passesOn(subject: string, body: string): string | null {
  if (/^\s*(?:re:\s*)*(?:fwd?|fw)\s*:/i.test(subject)) return "the mail that started it, a forward";
  if (/^-{2,}\s*(?:forwarded message|original message)|^begin forwarded message:|^on .{1,200} wrote:\s*$/im.test(body)) return "the mail that started it, which passes on other mail";
  if (/^>/m.test(body)) return "the mail that started it, which quotes other mail";
  return null;
}

export async function answerMail(mail: ArrivedMail, ctx: AgentCtx): Promise<boolean> {
  const { account, message } = mail;
  const finder: Caller = { account: { id: account.id, username: account.username, admin: false }, scopes: ["agent"], via: "local" };
  const agents = (await ctx.agentHost.callAs(finder, "agent/list", {})) as { name: string }[];
  if (!agents.some((a) => a.name === mail.tag)) return false;
  // Mail from outside carries its SPF/DKIM/DMARC verdict and no sender's scopes; the account's own mail never comes that way.
  if (mail.scopes === null || message.auth !== null || !fromOwner(message.from, account.username, ctx.mail.domain)) {
    ctx.log.info("agent mail not answered: not from the account itself", { tag: mail.tag, message: message.id });
    return true;
  }
  const caller: Caller = { ...finder, scopes: mail.scopes };
  const root = message.references[0] ?? message.in_reply_to ?? message.message_id;
  const prompt = [message.subject && `Subject: ${message.subject}`, message.body].filter(Boolean).join("\n\n");
  let body: string;
  try {
    const r = (await ctx.agentHost.ask(caller, { prompt, agent: mail.tag }, { client: "mail", thread: root, topic: message.subject.replace(/^(?:re:\s*)+/i, ""), outside: passesOn(message.subject, message.body) ?? undefined })) as AskResult;
    body = r.answer;
  } catch (e) {
    const he = asHearthError(e);
    body = `I could not answer this: ${he.message}`;
  }
  const subject = /^re:/i.test(message.subject) ? message.subject : `Re: ${message.subject}`.trim();
  await ctx.agentHost.sendMail(account, {
    to: message.from,
    subject: subject.replace(/[\r\n]+/g, " "),
    body,
    tag: mail.tag,
    inReplyTo: message.message_id,
    references: [...message.references, message.message_id],
  });
  return true;
}
