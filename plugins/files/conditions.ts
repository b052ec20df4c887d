// The conditions a write may carry, so a stale writer is refused rather than
// overwriting what it has not seen: If-Match and If-None-Match (RFC 9110 §13)
// and WebDAV's If header (RFC 4918 §10.4), whose lists name lock tokens and
// entity tags, untagged (the request's resource) or tagged with the resource
// they are about, each condition perhaps negated with Not.

/** What a condition is checked against: a resource's current entity tag (none when it is not there or has none) and the tokens of the locks on it. */
export interface State {
  exists: boolean;
  etag?: string;
  tokens: Set<string>;
}

type Condition = { not: boolean; token: string } | { not: boolean; etag: string };
/** One list of an If header: every condition must hold; `tag` is the resource it is about (absent: the request's). */
export interface IfList {
  tag?: string;
  conditions: Condition[];
}

/** A malformed If header: the caller answers 400 with the reason. */
export class BadIf extends Error {}

/** Parses an If header into its lists. */
export function parseIf(header: string): IfList[] {
  const s = header;
  let i = 0;
  const space = () => {
    while (i < s.length && /[ \t]/.test(s[i])) i++;
  };
  const until = (close: string, what: string) => {
    const end = s.indexOf(close, i);
    if (end < 0) throw new BadIf(`the If header has a ${what} without its closing ${close}`);
    const v = s.slice(i, end);
    i = end + 1;
    return v;
  };
  const lists: IfList[] = [];
  let tag: string | undefined;
  let tagged: boolean | undefined;
  space();
  while (i < s.length) {
    if (s[i] === "<") {
      if (tagged === false) throw new BadIf("the If header mixes tagged and untagged lists");
      tagged = true;
      i++;
      tag = until(">", "resource tag");
      space();
      if (s[i] !== "(") throw new BadIf("a resource tag in the If header must be followed by a list in parentheses");
      continue;
    }
    if (s[i] !== "(") throw new BadIf(`the If header has ${JSON.stringify(s.slice(i, i + 20))} where a list in parentheses belongs`);
    if (tagged === undefined) tagged = false;
    i++;
    const conditions: Condition[] = [];
    for (;;) {
      space();
      if (s[i] === ")") {
        i++;
        break;
      }
      let not = false;
      if (s.slice(i, i + 3).toLowerCase() === "not") {
        not = true;
        i += 3;
        space();
      }
      if (s[i] === "<") {
        i++;
        conditions.push({ not, token: until(">", "state token") });
      } else if (s[i] === "[") {
        i++;
        conditions.push({ not, etag: until("]", "entity tag") });
      } else throw new BadIf(i >= s.length ? "the If header has a list without its closing )" : `the If header has ${JSON.stringify(s.slice(i, i + 20))} where a state token <...> or an entity tag [...] belongs`);
    }
    if (conditions.length === 0) throw new BadIf("a list in the If header must hold at least one condition");
    lists.push({ tag, conditions });
    space();
  }
  if (lists.length === 0) throw new BadIf("the If header holds no list");
  return lists;
}

/** Entity tags are compared strongly (RFC 9110 §8.8.3.2): a weak one matches nothing we write. */
const sameTag = (a: string, b: string | undefined) => b !== undefined && !a.startsWith("W/") && a.trim() === b;

function holds(c: Condition, st: State): boolean {
  const v = "token" in c ? st.tokens.has(c.token) : sameTag(c.etag, st.etag);
  return c.not ? !v : v;
}

/**
 * Whether the If header holds: for each resource it names (untagged lists
 * name the request's), at least one of its lists has every condition true.
 */
export function ifHolds(lists: IfList[], stateOf: (tag: string | undefined) => State): boolean {
  const byTag = new Map<string | undefined, IfList[]>();
  for (const l of lists) byTag.set(l.tag, [...(byTag.get(l.tag) ?? []), l]);
  for (const [tag, group] of byTag) {
    const st = stateOf(tag);
    if (!group.some((l) => l.conditions.every((c) => holds(c, st)))) return false;
  }
  return true;
}

/** The lock tokens an If header submits: every one it names, whether the list holds or not (RFC 4918 §10.4.1). */
export const submittedTokens = (lists: IfList[]) => new Set(lists.flatMap((l) => l.conditions.flatMap((c) => ("token" in c && !c.not ? [c.token] : []))));

/** The entity tags of an If-Match or If-None-Match header, or "*". */
function tagsOf(header: string): string[] | "*" {
  if (header.trim() === "*") return "*";
  return [...header.matchAll(/(W\/)?"[^"]*"/g)].map((m) => m[0]);
}

/** Why If-Match or If-None-Match refuses a write to this resource (RFC 9110 §13.1.1, §13.1.2), or null when they allow it. */
export function matchRefusal(req: Request, st: State): string | null {
  const ifMatch = req.headers.get("if-match");
  if (ifMatch !== null) {
    const tags = tagsOf(ifMatch);
    if (tags === "*" ? !st.exists : !tags.some((t) => sameTag(t, st.etag)))
      return st.exists ? `If-Match: the resource has changed (its entity tag is now ${st.etag ?? "none"})` : "If-Match: there is nothing at this address";
  }
  const ifNone = req.headers.get("if-none-match");
  if (ifNone !== null) {
    const tags = tagsOf(ifNone);
    // If-None-Match compares weakly.
    const weak = (t: string) => t.replace(/^W\//, "");
    if (tags === "*" ? st.exists : st.etag !== undefined && tags.some((t) => weak(t) === st.etag)) return tags === "*" ? "If-None-Match: * and something is already at this address" : `If-None-Match: the resource still has the entity tag ${st.etag}`;
  }
  return null;
}
