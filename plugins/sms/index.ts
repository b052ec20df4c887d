import { Type as T } from "@sinclair/typebox";
import { createHash, randomInt, timingSafeEqual } from "node:crypto";
import { and, count, desc, eq, gte, ne } from "drizzle-orm";
import { forbidden, HearthError, invalid, definePlugin, read, write, type BaseCtx, type Db } from "hearth";
import { smsCodes, smsMessages, smsNumbers, smsOptOuts } from "./schema.ts";
import { segmentsOf } from "./segments.ts";
import { validSignature } from "./signature.ts";
import { createMessage, twilioConfig } from "./twilio.ts";

const CODE_MINUTES = 10;
const CODE_TRIES = 5;
const DAY_MS = 86_400_000;

/** Twilio's opt-out and opt-in keywords: a text that is exactly one of them (any case). */
const STOP_WORDS = new Set(["STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "OPTOUT", "REVOKE"]);
const START_WORDS = new Set(["START", "YES", "UNSTOP"]);

const Number_ = (what: string) => T.String({ minLength: 2, maxLength: 32, description: `${what}, in international (E.164) format: +447700900123.` });

/** E.164 after dropping spaces, dots, dashes and brackets people write numbers with; 400 naming the field otherwise. */
function e164(raw: string, field: string): string {
  const n = raw.replace(/[\s().-]/g, "");
  if (!/^\+[1-9]\d{1,14}$/.test(n)) throw invalid(field, `"${raw}" is not an international number: write it as + then the country code and number, up to 15 digits (+447700900123)`);
  return n;
}

const perSegment = (config: Readonly<Record<string, string>>) => {
  const n = Number(config.SMS_SEGMENT_CREDITS);
  return Number.isInteger(n) && n >= 0 ? n : 2;
};
const dailyCap = (config: Readonly<Record<string, string>>) => {
  const n = Number(config.SMS_DAILY_CAP);
  return Number.isInteger(n) && n >= 0 ? n : 20;
};
const codeText = (code: string) => `Your Hearth verification code is ${code}. It expires in ${CODE_MINUTES} minutes.`;

/** The UTC day a time falls in: [start, end). */
const dayOf = (t: number) => {
  const start = Math.floor(t / DAY_MS) * DAY_MS;
  return { start, end: start + DAY_MS };
};

async function sentToday(db: Db, account: string, now: number): Promise<number> {
  const row = await db
    .select({ n: count() })
    .from(smsMessages)
    .where(and(eq(smsMessages.account, account), eq(smsMessages.direction, "out"), ne(smsMessages.status, "failed"), gte(smsMessages.at, dayOf(now).start)))
    .get();
  return row?.n ?? 0;
}

async function assertUnderCap(db: Db, account: string, now: number, config: Readonly<Record<string, string>>) {
  const cap = dailyCap(config);
  if ((await sentToday(db, account, now)) < cap) return;
  const resets = dayOf(now).end;
  throw new HearthError("rate_limited", `the daily cap of ${cap} text${cap === 1 ? "" : "s"} is reached; it resets at ${new Date(resets).toISOString()} (midnight UTC)`, {
    headers: { "Retry-After": String(Math.ceil((resets - now) / 1000)) },
    extra: { resets_at: new Date(resets).toISOString() },
  });
}

async function assertNotStopped(db: Db, number: string) {
  if (await db.select({ n: smsOptOuts.number }).from(smsOptOuts).where(eq(smsOptOuts.number, number)).get())
    throw forbidden(`${number} replied STOP, so it is not texted again until it replies START`);
}

const codeHash = (account: string, number: string, code: string) => createHash("sha256").update(`${account}\n${number}\n${code}`).digest();

type Row = typeof smsMessages.$inferSelect;
const shape = (m: Row) => ({
  id: m.id,
  direction: m.direction,
  number: m.number,
  text: m.body,
  segments: m.segments,
  encoding: m.encoding,
  status: m.status,
  at: new Date(m.at).toISOString(),
});

/**
 * Texts one number for an account: holds a place against the day's cap
 * before Twilio is asked, so concurrent sends cannot pass it, and gives the
 * place back when Twilio refuses.
 */
async function text(
  ctx: BaseCtx & { writes: <R>(fn: (db: Db) => R | Promise<R>) => Promise<R>; lock: (key: string) => Promise<void> },
  to: string,
  body: string,
  stored: string,
  kind: "text" | "verify",
  before?: (db: Db) => Promise<unknown>,
) {
  const tw = twilioConfig(ctx.config);
  const account = ctx.account.id;
  const seg = segmentsOf(body);
  const now = ctx.clock.now().getTime();
  const id = Bun.randomUUIDv7();
  await ctx.writes(async (db) => {
    // The day's count and the place held against it are one step: a send at once waits for this one's place.
    await ctx.lock(`cap:${account}`);
    await assertNotStopped(db, to);
    await assertUnderCap(db, account, now, ctx.config);
    await before?.(db);
    await db.insert(smsMessages).values({ id, account, direction: "out", number: to, body: stored, segments: seg.segments, encoding: seg.encoding, status: "sending", kind, at: now }).run();
  });
  try {
    const created = await createMessage(tw, to, body);
    return await ctx.writes(async (db) => (await db.update(smsMessages).set({ sid: created.sid, status: created.status }).where(eq(smsMessages.id, id)).returning().get())!);
  } catch (e) {
    await ctx.writes(async (db) => {
      await db.delete(smsMessages).where(eq(smsMessages.id, id)).run();
      if (kind === "verify") await db.delete(smsCodes).where(and(eq(smsCodes.account, account), eq(smsCodes.number, to))).run();
      if ((e as HearthError).extra?.unsubscribed) await db.insert(smsOptOuts).values({ number: to, at: now }).onConflictDoNothing().run();
    });
    throw e;
  }
}

export default definePlugin({
  name: "sms",
  description: "Texts from the instance's number through Twilio: send (charged per segment, capped per day, STOP honoured), history both ways, and verified numbers whose texts reach the account.",
  needs: ["db", "writes", "lock"],
  integration: { label: "Text messages (SMS)", settings: ["TWILIO_ACCOUNT_SID", "TWILIO_AUTH_TOKEN", "TWILIO_FROM"] },
  config: {
    TWILIO_ACCOUNT_SID: { default: "", description: "Twilio account SID (AC...); texts answer 501 until it, TWILIO_AUTH_TOKEN and TWILIO_FROM are set." },
    TWILIO_AUTH_TOKEN: { default: "", description: "Twilio auth token: authenticates sends and validates the inbound webhook's X-Twilio-Signature." },
    TWILIO_FROM: { default: "", description: "The Twilio number texts are sent from (E.164). Point its incoming-message webhook at <HEARTH_PUBLIC_URL>/sms/inbound (POST)." },
    TWILIO_URL: { default: "", description: "Base URL of Twilio's REST API (https://api.twilio.com when empty)." },
    SMS_DAILY_CAP: { default: "20", description: "Texts one account may send per UTC day, verification codes included." },
    SMS_SEGMENT_CREDITS: { default: "2", description: "Credits per SMS segment (160 GSM-7 characters, 70 when the text needs UCS-2; 153/67 per part of a longer text)." },
  },
  methods: {
    send: write({
      description:
        "Texts someone from the instance's number. `to` is an international (E.164) number. Charged per segment, as the carrier bills it: a text in the GSM alphabet is one segment up to 160 characters and parts of 153 beyond (each of ^ { } [ ] ~ \\ | € counts as two); a text with any other character (emoji, most non-Latin scripts) is one segment up to 70 and parts of 67 beyond. The answer gives `segments`, `encoding` and the credits `charged`. Capped per account per day (429 says when it resets). A number that replied STOP is not texted (403) until it replies START.",
      args: T.Object({ to: Number_("Who to text"), text: T.String({ minLength: 1, maxLength: 1600, description: "The text; up to 1600 characters (Twilio's limit)." }) }),
      access: "account",
      outbound: true,
      recipient: "to",
      openWorld: true,
      transaction: false,
      // A text sent cannot be called back.
      irreversible: true,
      price: (args: { text: string }, ctx: BaseCtx) => segmentsOf(args.text).segments * perSegment(ctx.config),
      async run(args, ctx) {
        twilioConfig(ctx.config);
        const to = e164(args.to, "to");
        const row = await text(ctx, to, args.text, args.text, "text");
        return { ...shape(row), charged: ctx.price };
      },
    }),
    history: read({
      description: "Texts you sent and received, newest first.",
      args: T.Object({ limit: T.Optional(T.Integer({ minimum: 1, maximum: 200, default: 50, description: "How many (default 50, max 200)." })) }),
      access: "account",
      untrusted: true,
      async run({ limit }, ctx) {
        twilioConfig(ctx.config);
        const rows = await ctx.db
          .select()
          .from(smsMessages)
          .where(eq(smsMessages.account, ctx.account.id))
          .orderBy(desc(smsMessages.at), desc(smsMessages.id))
          .limit(limit ?? 50)
          .all();
        return rows.map(shape);
      },
    }),
    number: read({
      description: "The number texts are sent from, the numbers verified as yours, and how many texts you may still send today.",
      args: T.Object({}),
      access: "account",
      async run(_args, ctx) {
        const tw = twilioConfig(ctx.config);
        const now = ctx.clock.now().getTime();
        const cap = dailyCap(ctx.config);
        const used = await sentToday(ctx.db, ctx.account.id, now);
        const verified = await ctx.db.select({ number: smsNumbers.number }).from(smsNumbers).where(eq(smsNumbers.account, ctx.account.id)).orderBy(smsNumbers.at).all();
        return {
          from: tw.from,
          verified: verified.map((v) => v.number),
          daily_cap: cap,
          sent_today: used,
          remaining_today: Math.max(0, cap - used),
          resets_at: new Date(dayOf(now).end).toISOString(),
        };
      },
    }),
    verify: write({
      description: `Claims a number as yours, so texts from it reach you. Call with \`number\` alone and a 6-digit code is texted there (it counts as a text today and costs one segment); call again with \`number\` and \`code\`. A code lasts ${CODE_MINUTES} minutes and ${CODE_TRIES} wrong tries void it.`,
      args: T.Object({
        number: Number_("The number to claim"),
        code: T.Optional(T.String({ minLength: 1, maxLength: 16, description: "The 6-digit code texted to the number." })),
      }),
      access: "account",
      outbound: true,
      openWorld: true,
      transaction: false,
      // The code is texted: a text sent cannot be called back.
      irreversible: true,
      price: (args: { code?: string }, ctx: BaseCtx) => (args.code ? 0 : segmentsOf(codeText("000000")).segments * perSegment(ctx.config)),
      async run(args, ctx) {
        twilioConfig(ctx.config);
        const number = e164(args.number, "number");
        const account = ctx.account.id;
        const now = ctx.clock.now().getTime();
        if (args.code === undefined) {
          const code = String(randomInt(0, 1_000_000)).padStart(6, "0");
          const expires = now + CODE_MINUTES * 60_000;
          await text(ctx, number, codeText(code), codeText("••••••"), "verify", (db) =>
            db
              .insert(smsCodes)
              .values({ account, number, hash: codeHash(account, number, code).toString("hex"), expires, wrong: 0 })
              .onConflictDoUpdate({ target: [smsCodes.account, smsCodes.number], set: { hash: codeHash(account, number, code).toString("hex"), expires, wrong: 0 } })
              .run(),
          );
          return { number, code_sent: true, expires_at: new Date(expires).toISOString(), verified: false, charged: ctx.price };
        }
        const code = args.code.trim();
        // Wrong tries must be counted even though the call then fails, so this is its own transaction and the refusal comes after it.
        const outcome = await ctx.writes(async (db): Promise<HearthError | null> => {
          // Tries at once are counted one after another: none is lost, and a code is used at most once.
          await ctx.lock(`code:${account}:${number}`);
          const row = await db.select().from(smsCodes).where(and(eq(smsCodes.account, account), eq(smsCodes.number, number))).get();
          const forget = () => db.delete(smsCodes).where(and(eq(smsCodes.account, account), eq(smsCodes.number, number))).run();
          if (!row) return invalid("code", `no code is waiting for ${number}: call sms/verify with the number alone to have one texted`);
          if (row.expires <= now) {
            await forget();
            return invalid("code", `the code for ${number} has expired (codes last ${CODE_MINUTES} minutes): ask for a new one`);
          }
          const want = Buffer.from(row.hash, "hex");
          if (!timingSafeEqual(want, codeHash(account, number, code))) {
            const wrong = row.wrong + 1;
            if (wrong >= CODE_TRIES) {
              await forget();
              return invalid("code", `wrong code; that was the ${CODE_TRIES}th wrong try, so the code is void: ask for a new one`);
            }
            await db.update(smsCodes).set({ wrong }).where(and(eq(smsCodes.account, account), eq(smsCodes.number, number))).run();
            return invalid("code", `wrong code: ${CODE_TRIES - wrong} ${CODE_TRIES - wrong === 1 ? "try" : "tries"} left`);
          }
          await forget();
          await db.insert(smsNumbers).values({ number, account, at: now }).onConflictDoUpdate({ target: smsNumbers.number, set: { account, at: now } }).run();
          return null;
        });
        if (outcome) throw outcome;
        return { number, verified: true };
      },
    }),
  },
  routes: [
    {
      // Twilio's "a message comes in" webhook: form-encoded, signed with the auth token.
      method: "POST",
      path: "/sms/inbound",
      async run(req, ctx) {
        const tw = twilioConfig(ctx.config);
        const params = new URLSearchParams(await req.text());
        const u = new URL(req.url);
        const url = `${ctx.baseUrl.replace(/\/+$/, "")}${u.pathname}${u.search}`;
        if (!validSignature(tw.token, url, params, req.headers.get("x-twilio-signature")))
          throw forbidden(`the request does not carry a valid X-Twilio-Signature for ${url} from this instance's Twilio account`);
        if (params.get("AccountSid") !== tw.sid) throw forbidden("the message is for another Twilio account");
        const from = params.get("From") ?? "";
        const body = params.get("Body") ?? "";
        const sid = params.get("MessageSid") ?? params.get("SmsSid");
        const now = ctx.clock.now().getTime();
        const word = body.trim().toUpperCase();
        if (STOP_WORDS.has(word)) await ctx.db.insert(smsOptOuts).values({ number: from, at: now }).onConflictDoNothing().run();
        if (START_WORDS.has(word)) await ctx.db.delete(smsOptOuts).where(eq(smsOptOuts.number, from)).run();
        // A verified number's texts reach its owner; otherwise a reply reaches whoever texted that number last.
        const owner =
          (await ctx.db.select({ account: smsNumbers.account }).from(smsNumbers).where(eq(smsNumbers.number, from)).get())?.account ??
          (
            await ctx.db
              .select({ account: smsMessages.account })
              .from(smsMessages)
              .where(and(eq(smsMessages.number, from), eq(smsMessages.direction, "out"), eq(smsMessages.kind, "text")))
              .orderBy(desc(smsMessages.at))
              .limit(1)
              .get()
          )?.account ??
          null;
        const seg = segmentsOf(body);
        await ctx.db
          .insert(smsMessages)
          .values({ id: Bun.randomUUIDv7(), account: owner, direction: "in", number: from, body, segments: seg.segments, encoding: seg.encoding, sid, status: "received", kind: "text", at: now })
          .onConflictDoNothing()
          .run();
        return new Response('<?xml version="1.0" encoding="UTF-8"?><Response></Response>', { headers: { "content-type": "text/xml; charset=utf-8" } });
      },
    },
  ],
});
