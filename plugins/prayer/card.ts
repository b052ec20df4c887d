// The home page's card, for those who turn it on: today's prayer times at
// their place, in their time zone, by the convention they chose.
import { obj, str, type CardDef } from "hearth";

const name = (k: string) => k[0].toUpperCase() + k.slice(1);

export const prayerCard: CardDef = {
  title: "Prayer times",
  method: "times",
  order: 50,
  optIn: "Show today's prayer times",
  choice: { arg: "method", label: "Prayer time convention", hint: "How dawn and nightfall are reckoned." },
  needsZone: true,
  args: ({ place, zone }) => (place ? { lat: place.lat, lon: place.lon, ...(zone ? { tz: zone } : {}) } : null),
  render: (r) => {
    const o = obj(r);
    const times = obj(o?.times);
    if (!times) return null;
    const next = obj(o?.next);
    return {
      lead: next && str(next.prayer) ? `Next: ${name(String(next.prayer))} at ${next.time}${next.tomorrow ? " tomorrow" : ""}.` : undefined,
      lines: Object.entries(times).map(([k, v]) => ({ text: name(k), detail: String(v) })),
    };
  },
};
