import { invalid } from "hearth";

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})$/;
const LAYOUT = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2})$/;

function checkParts(y: number, mo: number, d: number, h: number, mi: number, s = 0): boolean {
  if (mo < 1 || mo > 12 || h > 23 || mi > 59 || s > 60) return false;
  const days = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  return d >= 1 && d <= days;
}

/**
 * A task's due time: RFC3339 with an offset, or "YYYY-MM-DD HH:MM", which
 * carries no zone and is read as UTC.
 */
export function parseDue(value: string): number {
  const v = value.trim();
  let m = LAYOUT.exec(v);
  if (m) {
    const [y, mo, d, h, mi] = m.slice(1, 6).map(Number);
    if (checkParts(y, mo, d, h, mi)) return Date.UTC(y, mo - 1, d, h, mi);
  }
  m = RFC3339.exec(v);
  if (m) {
    const [y, mo, d, h, mi] = m.slice(1, 6).map(Number);
    const s = m[6] ? Number(m[6]) : 0;
    if (checkParts(y, mo, d, h, mi, s)) {
      const t = Date.parse(v.replace(" ", "T"));
      if (Number.isFinite(t)) return t;
    }
  }
  throw invalid("due", `due must be RFC3339 with an offset (2026-05-01T17:00:00+01:00) or "YYYY-MM-DD HH:MM" (got ${JSON.stringify(value)})`);
}
