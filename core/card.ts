// Helpers for a plugin's home card (the manifest's `card`): reading an answer
// defensively, since a service's shape may grow, and writing times the way
// the home page shows them. Exported to plugins by the "hearth" module.
type O = Record<string, unknown>;

export const obj = (v: unknown): O | null => (v && typeof v === "object" && !Array.isArray(v) ? (v as O) : null);
export const str = (v: unknown): string | null => (typeof v === "string" && v.trim() ? v : null);
export const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

/** The list in an answer: the answer itself, or its first array member (items, messages, headlines...). */
export function listIn(result: unknown): O[] {
  if (Array.isArray(result)) return result.filter((x): x is O => !!obj(x));
  const o = obj(result);
  if (!o) return [];
  for (const v of Object.values(o)) if (Array.isArray(v)) return v.filter((x): x is O => !!obj(x));
  return [];
}

/** How many lines a card shows at most. */
export const CARD_LINES = 5;

/**
 * "Sat 21 Nov, 15:00" in the person's time zone when it is known; otherwise
 * at the offset the time carries, and in UTC (said so) when it carries none.
 */
export function when(iso: string | null, zone: string | null): string | undefined {
  if (!iso) return undefined;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const style = { weekday: "short", day: "numeric", month: "short", hour: "2-digit", minute: "2-digit" } as const;
  if (zone) {
    try {
      return new Intl.DateTimeFormat("en-GB", { ...style, timeZone: zone }).format(d);
    } catch {
      // An unknown zone name: fall through to the time's own offset.
    }
  }
  const offset = /([+-])(\d\d):(\d\d)$/.exec(iso);
  const shift = offset ? (offset[1] === "-" ? -1 : 1) * (Number(offset[2]) * 60 + Number(offset[3])) * 60_000 : 0;
  const text = new Intl.DateTimeFormat("en-GB", { ...style, timeZone: "UTC" }).format(new Date(d.getTime() + shift));
  return offset ? text : `${text} UTC`;
}

/** "Today", "Tomorrow" or the weekday of a local date, against the place's own local time now. */
export function dayName(date: string | null, localNow: string | null): string {
  if (!date) return "";
  const today = localNow?.slice(0, 10);
  if (date === today) return "Today";
  if (today && Date.parse(`${date}T00:00:00Z`) - Date.parse(`${today}T00:00:00Z`) === 86_400_000) return "Tomorrow";
  const d = new Date(`${date}T12:00:00Z`);
  return Number.isNaN(d.getTime()) ? date : new Intl.DateTimeFormat("en-GB", { weekday: "long", timeZone: "UTC" }).format(d);
}
