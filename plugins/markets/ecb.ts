// European Central Bank reference rates through Frankfurter
// (https://frankfurter.dev): {"amount":1.0,"base":"EUR","date":"...","rates":{...}}.
// Rates are units of each currency per euro, published on working days.

export const FIRST_DAY = "1999-01-04";

export interface EcbRates {
  date: string;
  /** Units per euro, euro included at 1. */
  perEuro: Record<string, number>;
}

export function ecbRates(body: any): EcbRates {
  if (!body || body.base !== "EUR" || typeof body.date !== "string" || !body.rates || typeof body.rates !== "object")
    throw new Error("not a Frankfurter answer");
  const perEuro: Record<string, number> = { EUR: 1 };
  for (const [code, v] of Object.entries(body.rates)) if (typeof v === "number" && v > 0) perEuro[code] = v;
  return { date: body.date, perEuro };
}

const iso = new Set(Intl.supportedValuesOf("currency"));
/** An ISO 4217 currency, as opposed to a crypto asset's ticker. */
export const isCurrency = (code: string) => iso.has(code);
