// Changing a client's iCalendar or vCard text in the properties a service
// keeps, content line by content line: every other line stays as the client
// wrote it, byte for byte. Re-serialising the whole object through a parser
// would re-case groups, re-quote parameters, re-type values and re-fold
// lines, and a client comparing what it sent would see changes nobody made.
// What a line means is read with ical.js by the services; this file only
// finds, replaces, removes and adds lines.

interface Line {
  /** The logical line as it stands in the text, folds included, without its line end. */
  raw: string;
  /** The property name, upper case, without a vCard group ("ITEM1.EMAIL" is EMAIL). */
  name: string;
  /** Everything before the value's colon, as written: the name, its group and parameters. */
  head: string;
  /** The value, unfolded, still escaped. */
  value: string;
}

/** Where a logical line's value starts: the first colon outside a quoted parameter value. */
function colonOf(s: string): number {
  let quoted = false;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    if (ch === '"') quoted = !quoted;
    else if (ch === ":" && !quoted) return i;
  }
  return -1;
}

function lineOf(raw: string, eol: string): Line {
  const text = raw.split(eol).map((l, i) => (i === 0 ? l : l.slice(1))).join("");
  const colon = colonOf(text);
  const head = colon < 0 ? text : text.slice(0, colon);
  const name = (head.split(";")[0] ?? "").replace(/^.*\./, "").toUpperCase();
  return { raw, name, head, value: colon < 0 ? "" : text.slice(colon + 1) };
}

/** Folds a content line at 75 octets without splitting a UTF-8 character (RFC 5545 3.1, RFC 6350 3.2). */
export function fold(line: string, eol = "\r\n"): string {
  const enc = new TextEncoder();
  if (enc.encode(line).length <= 75) return line;
  const parts: string[] = [];
  let cur = "";
  let size = 0;
  for (const ch of line) {
    const n = enc.encode(ch).length;
    if (size + n > (parts.length === 0 ? 75 : 74)) {
      parts.push(cur);
      cur = "";
      size = 0;
    }
    cur += ch;
    size += n;
  }
  parts.push(cur);
  return parts.join(`${eol} `);
}

/** A TEXT value escaped (RFC 5545 3.3.11, RFC 6350 3.4). */
export const escapeText = (s: string) => s.replace(/\\/g, "\\\\").replace(/;/g, "\\;").replace(/,/g, "\\,").replace(/\r?\n|\r/g, "\\n");

/** A UTC date-time as iCalendar and vCard write it: 20260301T090000Z. */
export const utcStamp = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, "Z").replace(/[-:]/g, "");

export class ContentPatch {
  private content: Line[];
  private readonly eol: string;
  private readonly end: string;

  /** `component`: the first component of that name (VCARD, VEVENT, VTODO) is the one changed. */
  constructor(
    text: string,
    private readonly component: string,
  ) {
    this.eol = text.includes("\r\n") ? "\r\n" : "\n";
    const physical = text.split(/\r\n|\n/);
    // What follows the last line end (usually nothing) is kept as it was.
    this.end = physical.length > 1 && physical[physical.length - 1] === "" ? this.eol : "";
    if (this.end) physical.pop();
    const groups: string[] = [];
    for (const p of physical) {
      if ((p.startsWith(" ") || p.startsWith("\t")) && groups.length) groups[groups.length - 1] += this.eol + p;
      else groups.push(p);
    }
    this.content = groups.map((g) => lineOf(g, this.eol));
  }

  /**
   * The changed component's bounds: its BEGIN line and its END line. Of a
   * series written as several (RFC 5545 RECURRENCE-ID), the series itself:
   * the first without a RECURRENCE-ID of its own; its overrides stay as sent.
   */
  private bounds(): { begin: number; end: number } {
    let first: { begin: number; end: number } | null = null;
    for (let begin = 0; begin < this.content.length; begin++) {
      const b = this.content[begin];
      if (b.name !== "BEGIN" || b.value.trim().toUpperCase() !== this.component) continue;
      let depth = 0;
      let override = false;
      let end = -1;
      for (let i = begin; i < this.content.length; i++) {
        const l = this.content[i];
        if (l.name === "BEGIN") depth++;
        else if (l.name === "END" && --depth === 0) {
          end = i;
          break;
        } else if (depth === 1 && l.name === "RECURRENCE-ID") override = true;
      }
      if (end < 0) throw new Error(`the ${this.component} is not closed`);
      if (!override) return { begin, end };
      first ??= { begin, end };
      begin = end;
    }
    if (first) return first;
    throw new Error(`no ${this.component} to change`);
  }

  /** Indices of the component's own lines named `name`, in order (a nested VALARM's are not its own). */
  private own(name: string): number[] {
    const { begin, end } = this.bounds();
    const out: number[] = [];
    let depth = 0;
    for (let i = begin + 1; i < end; i++) {
      const l = this.content[i];
      if (l.name === "BEGIN") depth++;
      else if (l.name === "END") depth--;
      else if (depth === 0 && l.name === name) out.push(i);
    }
    return out;
  }

  has(name: string): boolean {
    return this.own(name.toUpperCase()).length > 0;
  }

  /** The escaped values of the component's own lines named `name`, in order. */
  values(name: string): string[] {
    return this.own(name.toUpperCase()).map((i) => this.content[i].value);
  }

  /** The component's own lines named `name`, unfolded, as written. */
  lines(name: string): string[] {
    return this.own(name.toUpperCase()).map((i) => `${this.content[i].head}:${this.content[i].value}`);
  }

  /** Every line, unfolded, of the first component named `component` anywhere in the text (with `tzid`: the VTIMEZONE of that TZID); none when there is none. */
  block(component: string, tzid?: string): string[] {
    for (let i = 0; i < this.content.length; i++) {
      const l = this.content[i];
      if (l.name !== "BEGIN" || l.value.trim().toUpperCase() !== component) continue;
      let depth = 0;
      let j = i;
      for (; j < this.content.length; j++) {
        if (this.content[j].name === "BEGIN") depth++;
        else if (this.content[j].name === "END" && --depth === 0) break;
      }
      const out = this.content.slice(i, j + 1);
      if (tzid === undefined || out.some((x) => x.name === "TZID" && x.value === tzid)) return out.map((x) => `${x.head}:${x.value}`);
    }
    return [];
  }

  /** The head (name and parameters, as written) of the nth own line named `name`. */
  head(name: string, nth = 0): string | undefined {
    const i = this.own(name.toUpperCase())[nth];
    return i === undefined ? undefined : this.content[i].head;
  }

  /** Gives the nth line named `name` a new (escaped) value, keeping its head as written; adds `NAME:value` when there is none. */
  setValue(name: string, value: string, nth = 0) {
    const i = this.own(name.toUpperCase())[nth];
    if (i === undefined) return this.add(`${name.toUpperCase()}:${value}`);
    this.content[i] = lineOf(fold(`${this.content[i].head}:${value}`, this.eol), this.eol);
  }

  /** Puts a whole line in place of the nth named `name`, or adds it when there is no nth. */
  replaceLine(name: string, line: string, nth: number) {
    const i = this.own(name.toUpperCase())[nth];
    if (i === undefined) return this.add(line);
    this.content[i] = lineOf(fold(line, this.eol), this.eol);
  }

  /** Puts a whole line in place of the first named `name` (dropping the others of that name), or adds it. */
  setLine(name: string, line: string) {
    const [first, ...rest] = this.own(name.toUpperCase());
    if (first === undefined) return this.add(line);
    this.content[first] = lineOf(fold(line, this.eol), this.eol);
    this.drop(rest);
  }

  /** Removes the nth line named `name`, or every one of them when nth is not given. */
  remove(name: string, nth?: number) {
    const all = this.own(name.toUpperCase());
    this.drop(nth === undefined ? all : all.slice(nth, nth + 1));
  }

  private drop(indices: number[]) {
    const gone = new Set(indices);
    this.content = this.content.filter((_l, i) => !gone.has(i));
  }

  /** Adds a line after the component's own properties, before any component nested in it. */
  add(line: string) {
    const { begin, end } = this.bounds();
    let at = end;
    for (let i = begin + 1; i < end; i++)
      if (this.content[i].name === "BEGIN") {
        at = i;
        break;
      }
    this.content.splice(at, 0, lineOf(fold(line, this.eol), this.eol));
  }

  /** Adds whole lines (a VTIMEZONE) just before the changed component begins. */
  addBefore(lines: string[]) {
    const { begin } = this.bounds();
    this.content.splice(begin, 0, ...lines.map((l) => lineOf(fold(l, this.eol), this.eol)));
  }

  toString(): string {
    return this.content.map((l) => l.raw).join(this.eol) + this.end;
  }
}
