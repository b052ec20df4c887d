// Open slots: working hours (in the offset of `from`) minus every booked
// occurrence, repeats included, kept where at least `minutes` long.
const MIN = 60_000;
const HOUR = 60 * MIN;

export interface Interval {
  start: number;
  end: number;
}

/** Sorts and merges overlapping or touching intervals. */
export function merge(list: Interval[]): Interval[] {
  const sorted = [...list].sort((a, b) => a.start - b.start);
  const out: Interval[] = [];
  for (const iv of sorted) {
    const last = out[out.length - 1];
    if (last && iv.start <= last.end) last.end = Math.max(last.end, iv.end);
    else out.push({ ...iv });
  }
  return out;
}

export function freeSlots(busy: Interval[], o: { from: number; to: number; minutes: number; dayStart: number; dayEnd: number; offset: number }): Interval[] {
  const taken = merge(busy);
  const need = o.minutes * MIN;
  const shift = o.offset * MIN;
  const first = new Date(o.from + shift);
  const out: Interval[] = [];
  let i = 0;
  // Local midnights of each day the window touches, in the offset of `from`.
  for (let day = Date.UTC(first.getUTCFullYear(), first.getUTCMonth(), first.getUTCDate()) - shift; day < o.to; day += 24 * HOUR) {
    const open = Math.max(o.from, day + o.dayStart * HOUR);
    const close = Math.min(o.to, day + o.dayEnd * HOUR);
    if (close - open < need) continue;
    let cursor = open;
    while (i < taken.length && taken[i].end <= open) i++;
    let j = i;
    for (; j < taken.length && taken[j].start < close; j++) {
      if (taken[j].start - cursor >= need) out.push({ start: cursor, end: taken[j].start });
      cursor = Math.max(cursor, taken[j].end);
    }
    if (close - cursor >= need) out.push({ start: cursor, end: close });
  }
  return out;
}
