// What the API adds to an event whose series a calendar app wrote (events.rule):
// optional fields beside the spec's, so a caller sees the same series the phone does.
import ICAL from "ical.js";
import { seriesOf } from "hearth";

export function ruleSummary(text: string): { rule: string | null; excluded: number; changed: number; cancelled?: true } {
  const s = seriesOf(new ICAL.Component(ICAL.parse(text) as unknown[]));
  if (!s) return { rule: null, excluded: 0, changed: 0 };
  const rrule = s.master.getFirstPropertyValue("rrule") as InstanceType<typeof ICAL.Recur> | null;
  const excluded = s.master.getAllProperties("exdate").reduce((n, p) => n + p.getValues().length, 0);
  const out: ReturnType<typeof ruleSummary> = { rule: rrule ? rrule.toString() : null, excluded, changed: s.overrides.length };
  if (String(s.master.getFirstPropertyValue("status") ?? "").toUpperCase() === "CANCELLED") out.cancelled = true;
  return out;
}
