// The price/pay step of dispatch: credits for accounts, x402 for strangers.
// Verify happens before the handler runs; the charge (a ledger entry) or the
// settlement happens inside the call's transaction after it succeeded, so a
// call that fails is never charged and a charge that fails undoes the call.
// A method whose effect cannot be undone (irreversible) is the exception: its
// x402 payment settles before it runs, and should it then fail, what was paid
// becomes credits of the caller's account.
import { HTTPFacilitatorClient, encodePaymentResponseHeader } from "@x402/core/http";
import type { SettleResponse } from "@x402/core/types";
import { and, eq } from "drizzle-orm";
import { HearthError, invalid, upstream } from "../errors.ts";
import type { Caller } from "../plugin.ts";
import type { MethodEntry } from "../registry.ts";
import type { Metering, Runtime } from "../runtime.ts";
import { append, balanceOf, holdAccount } from "./ledger.ts";
import { Prices } from "./prices.ts";
import { payX402 } from "./schema.ts";
import { challenge, noPayments, paymentOf, paysByX402, statedPrice, requirementsOf, requirementsV1Of, resourceOf, termsOf, type PaymentContext, type Terms } from "./x402.ts";
import { servedFromCache } from "../upstream/index.ts";
import type { Call } from "../call.ts";
import { reasonCode, scrub } from "../upstream/redact.ts";

interface CreditPlan {
  kind: "credits";
  /** Whether the credits are still held against the balance for this call. */
  held: boolean;
  /** The hold's own name, never anything the client sent. */
  hold: string;
  account: string;
  credits: number;
  entry: MethodEntry;
  caller: Caller;
  baseUrl: string;
}

interface PaymentPlan {
  kind: "x402";
  credits: number;
  entry: MethodEntry;
  terms: Terms;
  baseUrl: string;
  ctx: PaymentContext;
  key: string;
  payer: string;
  nonce: string;
  amount: string;
  /** Exactly what the facilitator verified, sent again to settle. */
  body: { payload: Record<string, unknown>; requirements: Record<string, unknown> };
  /** The account sending the payment beside its token, if any: what a prepaid call that failed is credited to. */
  account: string | null;
  /** Whether the amount is still held against the payer's balance among its payments in flight. */
  inFlight: boolean;
  settled?: SettleResponse;
  /** Settled and recorded before the handler ran (an irreversible method). */
  prepaid?: boolean;
  /** Recorded in the database (the settled authorization). */
  recorded?: boolean;
}

type Plan = CreditPlan | PaymentPlan;

interface Authorization {
  from: string;
  to: string;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: string;
}

const same = (a: unknown, b: unknown) => typeof a === "string" && typeof b === "string" && a.toLowerCase() === b.toLowerCase();
const INVALID = "the facilitator found it invalid";
const plural = (n: number) => `${n} credit${n === 1 ? "" : "s"}`;

/** Longer than verify, the call and settle take; a claim is let go sooner unless its instance died. */
const CLAIM_MS = 10 * 60_000;

/** Where a payer's authorizations not yet settled are held, per network, asset and payer. */
const inFlightKey = (network: string, asset: string, payer: string) => `x402:${network}|${asset.toLowerCase()}|${payer.toLowerCase()}`;

// Between verify and settle an authorization is claimed, so a concurrent
// replay is refused before the chain knows; credits promised to calls still
// running are held, so concurrent calls cannot all run on one balance; and a
// payer's authorizations verified but not yet settled are held against its
// balance on the chain (X402_RPC_URL; unread, against the one authorization),
// so payments that could not all settle never all run.
// Both are in the instance's shared state, so they hold across every
// instance; the ledger and the settled authorizations, in the database, stay
// the record (a charge the balance cannot pay is refused at commit).
export class PayMetering implements Metering {
  readonly prices: Prices;
  private facilitator: HTTPFacilitatorClient | null = null;

  constructor(
    private rt: Runtime,
    overrides: Map<string, number>,
  ) {
    this.prices = new Prices(rt, overrides);
  }

  price(entry: MethodEntry, args: Record<string, unknown>, caller: Caller): number | Promise<number> {
    return this.prices.of(entry, args, caller);
  }

  private base(baseUrl?: string) {
    return this.rt.config.HEARTH_PUBLIC_URL || baseUrl || `http://127.0.0.1:${this.rt.config.PORT}`;
  }

  private client(): HTTPFacilitatorClient {
    this.facilitator ??= new HTTPFacilitatorClient({ url: this.rt.config.X402_FACILITATOR_URL, timeoutMs: 30_000 });
    return this.facilitator;
  }

  /**
   * A payment sent with a call that costs its caller nothing (metering off, a
   * method free for the account) is not taken, and the answer carries no
   * receipt; one this instance has already taken is refused with 400 naming
   * where it came, so no one is told a spent payment was good.
   */
  free(caller: Caller, call: Call): Promise<void> | undefined {
    const sent = paymentOf(caller);
    if (!sent) return undefined;
    const parent = call.parent;
    if (parent && paymentOf(parent.caller) === sent) return undefined;
    return this.spent(sent);
  }

  private async spent(sent: PaymentContext): Promise<void> {
    const p = sent.payload;
    const auth = (p.payload as Record<string, unknown>).authorization as Authorization | undefined;
    if (!auth || typeof auth !== "object" || typeof auth.from !== "string" || typeof auth.nonce !== "string") return;
    const terms = termsOf(this.rt.config);
    const accepted = (p.accepted ?? {}) as Record<string, unknown>;
    const network = terms?.network ?? (typeof accepted.network === "string" ? accepted.network : null);
    const asset = terms?.asset ?? (typeof accepted.asset === "string" ? accepted.asset : null);
    if (!network || !asset) return;
    const row = await this.rt.store.wdb
      .select({ transaction: payX402.transaction, method: payX402.method })
      .from(payX402)
      .where(and(eq(payX402.network, network), eq(payX402.asset, asset.toLowerCase()), eq(payX402.payer, auth.from.toLowerCase()), eq(payX402.nonce, auth.nonce.toLowerCase())))
      .get();
    if (row) throw invalid(sent.field, `this payment was already taken, for ${row.method} (transaction ${row.transaction}); this call costs nothing, so send it without one`);
  }

  async before(s: { entry: MethodEntry; caller: Caller; price: number; baseUrl?: string; call?: Call }): Promise<Plan> {
    const { entry, caller, price } = s;
    const baseUrl = this.base(s.baseUrl);
    const terms = termsOf(this.rt.config);
    // A payment pays for the call it was sent with: one made from that call with the same caller pays its own way.
    const sent = paymentOf(caller);
    const parent = s.call?.parent;
    const ctx = sent && parent && paymentOf(parent.caller) === sent ? undefined : sent;
    // A payment sent pays for this call, an account's too: its credits are left untouched.
    if (ctx && terms) return this.verify(entry, price, terms, baseUrl, ctx, caller.account?.id ?? null);
    // An account paying from its wallet is asked for a payment, as a stranger is, rather than charged credits.
    if (caller.account && paysByX402(caller)) {
      if (!terms) throw noPayments(entry, price);
      throw challenge(terms, entry, price, baseUrl, `${entry.path} costs ${plural(price)} ($${(price / 100).toFixed(2)}): pay with x402`);
    }
    if (caller.account) {
      const account = caller.account.id;
      const balance = await balanceOf(this.rt.store.inWrite() ? this.rt.store.wdb : this.rt.store.rdb, account);
      const hold = crypto.randomUUID();
      const free = balance < price ? balance : balance - (await this.rt.shared.hold(account, hold, price, balance));
      if (free < price) throw this.short(entry, price, Math.max(0, free), baseUrl);
      return { kind: "credits", held: true, hold, account, credits: price, entry, caller, baseUrl };
    }
    if (!terms) throw noPayments(entry, price);
    throw challenge(terms, entry, price, baseUrl, `${entry.path} costs ${plural(price)} ($${(price / 100).toFixed(2)}): pay with x402 or send a token`);
  }

  private short(entry: MethodEntry, price: number, balance: number, baseUrl: string): HearthError {
    const msg = `${entry.path} costs ${plural(price)}; the balance is ${plural(balance)}`;
    const terms = termsOf(this.rt.config);
    return terms
      ? challenge(terms, entry, price, baseUrl, msg)
      : new HearthError("payment_required", `${msg}: ask the instance's admin for credits`, { extra: { price: statedPrice(price), balance }, headers: { "Cache-Control": "no-store" } });
  }

  private async verify(entry: MethodEntry, credits: number, terms: Terms, baseUrl: string, ctx: PaymentContext, account: string | null): Promise<PaymentPlan> {
    const refuse = (why: string) => challenge(terms, entry, credits, baseUrl, `payment refused: ${why}`);
    const wanted = requirementsOf(terms, credits);
    const p = ctx.payload;
    let requirements: Record<string, unknown>;
    if (ctx.version === 2) {
      const accepted = p.accepted as Record<string, unknown> | undefined;
      if (!accepted || typeof accepted !== "object") throw refuse("the payload names no accepted requirements");
      if (accepted.scheme !== "exact" || accepted.network !== wanted.network || !same(accepted.asset, wanted.asset) || !same(accepted.payTo, wanted.payTo))
        throw refuse(`it is not for these terms (exact, ${wanted.network}, ${wanted.asset}, to ${wanted.payTo})`);
      if (accepted.amount !== wanted.amount) throw refuse(`it is for ${String(accepted.amount)} atomic units; this call costs ${wanted.amount}`);
      requirements = wanted;
    } else {
      const v1 = requirementsV1Of(terms, credits, resourceOf(entry, baseUrl));
      if (p.scheme !== "exact" || p.network !== v1.network) throw refuse(`it is not for these terms (exact on ${v1.network})`);
      requirements = v1;
    }
    const auth = (p.payload as Record<string, unknown>).authorization as Authorization | undefined;
    if (!auth || typeof auth !== "object" || typeof auth.from !== "string" || typeof auth.nonce !== "string")
      throw refuse("the payload carries no EIP-3009 authorization (from, to, value, validAfter, validBefore, nonce)");
    if (String(auth.value) !== wanted.amount) throw refuse(`it authorizes ${String(auth.value)} atomic units; this call costs ${wanted.amount}`);
    if (!same(auth.to, wanted.payTo)) throw refuse(`it pays ${auth.to}, not ${wanted.payTo}`);

    const key = `${wanted.network}|${wanted.asset.toLowerCase()}|${auth.from.toLowerCase()}|${auth.nonce.toLowerCase()}`;
    if ((await this.used(wanted.network, wanted.asset, auth.from, auth.nonce)) || !(await this.rt.shared.claim(`x402:${key}`, CLAIM_MS))) throw refuse("this authorization was already used");
    const payerKey = inFlightKey(wanted.network, wanted.asset, auth.from);
    const amount = Number(wanted.amount);
    try {
      let result;
      try {
        result = await this.client().verify(p as never, requirements as never);
      } catch (e) {
        const data = (e as { invalidReason?: string; invalidMessage?: string }) ?? {};
        this.facilitatorSaid("verify", data.invalidMessage ?? (e as Error)?.message ?? e);
        if (data.invalidReason) throw refuse(reasonCode(data.invalidReason, INVALID));
        // Said apart: a facilitator that did not answer in time (a busy one) from one that could not be reached or answered amiss.
        const why = (e as Error)?.name === "FacilitatorTimeoutError" ? "did not answer in time (30 s)" : "could not be reached or answered amiss";
        throw upstream("upstream_unavailable", `the payment facilitator (X402_FACILITATOR_URL) ${why}: the payment was not verified, nothing was charged or run; send it again`);
      }
      if (!result.isValid) {
        if (result.invalidMessage) this.facilitatorSaid("verify", result.invalidMessage);
        throw refuse(reasonCode(result.invalidReason, INVALID));
      }
      // Held once its signature is known good, so no one can hold a payer's balance with payments it did not sign.
      // Unread, the balance is taken to be this one payment: one in flight at a time.
      const balance = (await this.balanceOnChain(wanted.asset, auth.from)) ?? amount;
      const others = await this.rt.shared.hold(payerKey, key, amount, balance);
      if (others + amount > balance)
        throw refuse(`the payer's balance cannot cover this payment beside the ${others} atomic units it has authorized to calls still running; wait for them to settle`);
    } catch (e) {
      this.rt.shared.unclaim(`x402:${key}`);
      throw e;
    }
    return {
      kind: "x402",
      credits,
      entry,
      terms,
      baseUrl,
      ctx,
      key,
      payer: auth.from,
      nonce: auth.nonce,
      amount: wanted.amount,
      body: { payload: p, requirements },
      account,
      inFlight: true,
    };
  }

  /** The payer's balance of the asset on the chain, from X402_RPC_URL; null when it is not set or does not answer. */
  private async balanceOnChain(asset: string, payer: string): Promise<number | null> {
    const url = this.rt.config.X402_RPC_URL;
    if (!url || !/^0x[0-9a-fA-F]{40}$/.test(payer)) return null;
    // balanceOf(address): its selector and the address as one 32-byte word.
    const data = `0x70a08231${payer.slice(2).toLowerCase().padStart(64, "0")}`;
    try {
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_call", params: [{ to: asset, data }, "latest"] }),
        signal: AbortSignal.timeout(10_000),
      });
      const body = (await res.json()) as { result?: unknown };
      if (typeof body.result !== "string" || !/^0x[0-9a-fA-F]+$/.test(body.result)) throw new Error(`no balance in the answer (HTTP ${res.status})`);
      return Number(BigInt(body.result));
    } catch (e) {
      this.rt.log.warn("x402: the payer's balance could not be read; one payment of theirs at a time is let through", { error: scrub(String(e).slice(0, 300), [url]) });
      return null;
    }
  }

  /** What the facilitator said goes to the log, without its address's secrets; the payer gets a reason code. */
  private facilitatorSaid(step: "verify" | "settle", said: unknown) {
    this.rt.log.warn("payment facilitator", { step, said: scrub(String(said).slice(0, 500), [this.rt.config.X402_FACILITATOR_URL]) });
  }

  private async used(network: string, asset: string, payer: string, nonce: string): Promise<boolean> {
    // The writer connection also sees rows of a transaction still open on it.
    const row = await this.rt.store.wdb
      .select({ id: payX402.id })
      .from(payX402)
      .where(and(eq(payX402.network, network), eq(payX402.asset, asset.toLowerCase()), eq(payX402.payer, payer.toLowerCase()), eq(payX402.nonce, nonce.toLowerCase())))
      .get();
    return !!row;
  }

  /** Takes an x402 payment once the call succeeded; outside any lock for reads, so the chain's seconds block no one. */
  async settle(call: Call): Promise<void> {
    const plan = call.plan as Plan;
    if (plan.kind !== "x402" || plan.settled) return;
    // A cached answer costs the instance nothing, so the authorization is left unspent.
    if (servedFromCache(call)) return;
    let settled: SettleResponse;
    try {
      settled = await this.client().settle(plan.body.payload as never, plan.body.requirements as never);
    } catch (e) {
      const data = e as { errorReason?: string; errorMessage?: string };
      this.facilitatorSaid("settle", data.errorMessage ?? (e as Error)?.message ?? e);
      settled = { success: false, errorReason: data.errorReason ?? "settle_failed", transaction: "", network: plan.terms.network as SettleResponse["network"] };
    }
    if (!settled.success) {
      if (settled.errorMessage) this.facilitatorSaid("settle", settled.errorMessage);
      // The payer is told the reason's code and the receipt's facts, not the facilitator's own words.
      const reason = reasonCode(settled.errorReason, "settle_failed");
      const told: SettleResponse = { success: false, errorReason: reason, transaction: settled.transaction ?? "", network: settled.network, ...(settled.payer ? { payer: settled.payer } : {}) };
      const header = plan.ctx.version === 2 ? "PAYMENT-RESPONSE" : "X-PAYMENT-RESPONSE";
      throw challenge(plan.terms, plan.entry, plan.credits, plan.baseUrl, `payment settlement failed: ${reason}`, {
        settlement: told,
        headers: { [header]: encodePaymentResponseHeader(told) },
      });
    }
    plan.settled = settled;
    // Settled, the amount has left the payer's balance on the chain: held beside it, it would count twice.
    this.landed(plan);
  }

  private landed(plan: PaymentPlan) {
    if (!plan.inFlight) return;
    plan.inFlight = false;
    this.rt.shared.unhold(inFlightKey(plan.terms.network, plan.terms.asset, plan.payer), plan.key, Number(plan.amount));
  }

  /** Records the charge inside a write transaction: a ledger entry for credits, the settled authorization for x402. */
  async commit(call: Call): Promise<void> {
    const plan = call.plan as Plan;
    const requestId = call.id;
    const now = this.rt.clock.now().getTime();
    const db = this.rt.store.wdb;
    if (plan.kind === "credits") {
      // The hold stays until release, after this transaction commits.
      if (servedFromCache(call)) return;
      await holdAccount(db, plan.account);
      const balance = await balanceOf(db, plan.account);
      if (balance < plan.credits) throw this.short(plan.entry, plan.credits, balance, plan.baseUrl);
      await append(db, { account: plan.account, delta: -plan.credits, reason: "charge", method: plan.entry.path, requestId, at: now });
      return;
    }
    // The claim stays until release, after the settled authorization is committed.
    const settled = plan.settled;
    if (!settled || plan.recorded) return;
    await db
      .insert(payX402)
      .values({
        network: plan.terms.network,
        asset: plan.terms.asset.toLowerCase(),
        payer: plan.payer.toLowerCase(),
        nonce: plan.nonce.toLowerCase(),
        amount: plan.amount,
        credits: plan.credits,
        method: plan.entry.path,
        requestId,
        transaction: settled.transaction,
        at: now,
      })
      .run();
    plan.recorded = true;
    plan.ctx.receipt = settled;
  }

  /** Whether the call's payment is still to be taken after it runs, and may yet fail (x402 not settled). */
  unsettled(call: Call): boolean {
    const plan = call.plan as Plan;
    return plan.kind === "x402" && !plan.settled;
  }

  /**
   * Before an irreversible handler runs: settles its x402 payment and records
   * it, so the effect happens only once paid. A failed settlement is the 402
   * settle gives, with nothing run. Credits stay held, and are charged after.
   */
  async prepay(call: Call): Promise<void> {
    const plan = call.plan as Plan;
    if (plan.kind !== "x402" || plan.settled) return;
    await this.settle(call);
    plan.prepaid = true;
    await this.rt.store.write(() => this.commit(call));
  }

  /**
   * A call that failed after its payment settled (an irreversible one): the
   * chain cannot give it back, so what was paid is added to the account that
   * sent it as credits, in a ledger entry naming the transaction, and the
   * refusal says so and carries the receipt. A payment without an account
   * stays with the instance.
   */
  async failed(call: Call, error: unknown): Promise<HearthError | undefined> {
    const plan = call.plan as Plan;
    if (plan.kind !== "x402" || !plan.prepaid || !plan.recorded || !plan.account) return undefined;
    const account = plan.account;
    const settled = plan.settled!;
    try {
      await this.rt.store.write(async () => {
        const db = this.rt.store.wdb;
        await holdAccount(db, account);
        await append(db, {
          account,
          delta: plan.credits,
          reason: "refund",
          method: plan.entry.path,
          requestId: call.id,
          note: `paid with x402 (${settled.transaction}) before it ran; the call failed`,
          at: this.rt.clock.now().getTime(),
        });
      });
    } catch (e) {
      this.rt.log.error("x402: a prepaid call failed and its payment could not be credited", { method: plan.entry.path, transaction: settled.transaction, error: String(e) });
      return undefined;
    }
    if (!(error instanceof HearthError)) return undefined;
    const header = plan.ctx.version === 2 ? "PAYMENT-RESPONSE" : "X-PAYMENT-RESPONSE";
    return new HearthError(error.kind, `${error.message} (it was paid before it ran, so the ${plural(plan.credits)} paid were added to your balance)`, {
      field: error.field,
      retry: error.retry,
      extra: { ...error.extra, credited: plan.credits, "x402/payment-response": settled },
      headers: { ...error.headers, [header]: encodePaymentResponseHeader(settled) },
      envelope: error.envelope,
    });
  }

  release(call: Call): void {
    const plan = call.plan as Plan;
    if (plan.kind === "x402") {
      this.landed(plan);
      this.rt.shared.unclaim(`x402:${plan.key}`);
    } else this.unhold(plan);
  }

  private unhold(plan: CreditPlan) {
    if (!plan.held) return;
    plan.held = false;
    this.rt.shared.unhold(plan.account, plan.hold, plan.credits);
  }
}

/** Headers carrying a paid call's receipt, named for the version it was paid in. */
export function receiptHeaders(ctx: PaymentContext | undefined): Record<string, string> | undefined {
  if (!ctx?.receipt) return undefined;
  return { [ctx.version === 2 ? "PAYMENT-RESPONSE" : "X-PAYMENT-RESPONSE"]: encodePaymentResponseHeader(ctx.receipt) };
}
