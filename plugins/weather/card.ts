// The home page's card: conditions now and the next three days at the person's
// place; its answer names their time zone for the other cards.
import { dayName, listIn, num, obj, str, type CardDef } from "hearth";

export const weatherCard: CardDef = {
  title: "Weather",
  method: "forecast",
  order: 40,
  view: true,
  args: ({ place }) => (place ? { lat: place.lat, lon: place.lon } : null),
  zone: (r) => str(obj(obj(r)?.location)?.timezone),
  render: (r) => {
    const o = obj(r);
    const now = obj(o?.current);
    if (!now) return null;
    const days = listIn({ d: o?.days });
    const t = num(now.temperature_c);
    const lead = [str(now.conditions), t !== null ? `${Math.round(t)}°C` : null, num(now.feels_like_c) !== null ? `feels like ${Math.round(num(now.feels_like_c)!)}°C` : null]
      .filter(Boolean)
      .join(", ");
    return {
      lead: lead ? `Now: ${lead}.` : undefined,
      lines: days.slice(0, 3).map((d) => ({
        text: dayName(str(d.date), str(now.time)),
        detail: [str(d.conditions), num(d.high_c) !== null && num(d.low_c) !== null ? `${Math.round(num(d.low_c)!)}–${Math.round(num(d.high_c)!)}°C` : null, num(d.precipitation_chance_pct) ? `${d.precipitation_chance_pct}% rain` : null]
          .filter(Boolean)
          .join(", "),
      })),
    };
  },
};
