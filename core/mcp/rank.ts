// Ranking tools for a need said in a person's words ("upload a file", "text
// my sister"). A request is mostly a verb and an object: the verb says which
// of a service's methods (put, not delete), the object which service (files,
// not notes). Both sides are read the same way: words cut to their stems and
// mapped through a table of everyday synonyms to shared senses, so "upload"
// meets a tool named put and "sister" meets one that "texts someone". Tools
// are read from the registry only (their service, method name and
// descriptions), so a drop-in plugin's tools rank by their own words.

/** Senses of verbs, as a request's leading word or a method's name says them. */
const VERBS: Record<string, string[]> = {
  add: ["create"],
  create: ["create"],
  make: ["create"],
  write: ["create"],
  compose: ["create"],
  draft: ["create"],
  start: ["create"],
  publish: ["create"],
  record: ["create"],
  jot: ["create", "note"],
  note: ["create", "note"],
  build: ["create", "build"],
  generate: ["create", "generate"],
  draw: ["generate", "image"],
  paint: ["generate", "image"],
  save: ["create", "store"],
  put: ["store"],
  store: ["store"],
  upload: ["store", "file"],
  keep: ["store"],
  delete: ["delete"],
  remove: ["delete"],
  erase: ["delete"],
  cancel: ["delete"],
  drop: ["delete"],
  discard: ["delete"],
  clear: ["delete"],
  trash: ["delete"],
  forget: ["delete"],
  edit: ["update"],
  update: ["update"],
  change: ["update"],
  modify: ["update"],
  rename: ["update"],
  mark: ["update"],
  tick: ["update"],
  complete: ["update"],
  finish: ["update"],
  fix: ["update"],
  revise: ["update"],
  get: ["read"],
  read: ["read"],
  open: ["read"],
  view: ["read"],
  see: ["read"],
  display: ["read"],
  fetch: ["read"],
  download: ["read", "file"],
  look: ["read", "find"],
  check: ["read", "list"],
  give: ["read"],
  show: ["read", "list"],
  list: ["list"],
  browse: ["list"],
  find: ["find"],
  search: ["find"],
  lookup: ["find"],
  locate: ["find"],
  seek: ["find"],
  send: ["send"],
  text: ["send", "sms"],
  sms: ["send", "sms"],
  email: ["send", "mail"],
  mail: ["send", "mail"],
  message: ["send"],
  tell: ["send"],
  notify: ["send"],
  reply: ["send"],
  forward: ["send"],
  post: ["send", "create"],
  ask: ["ask"],
  convert: ["convert"],
  exchange: ["convert"],
  translate: ["translate"],
  summarise: ["summarise"],
  summarize: ["summarise"],
  shorten: ["summarise"],
  classify: ["classify"],
  categorise: ["classify"],
  categorize: ["classify"],
  label: ["classify"],
  extract: ["extract"],
  pull: ["extract"],
  parse: ["extract"],
  schedule: ["create", "event"],
  book: ["create", "event"],
  plan: ["create", "event"],
  remind: ["create", "event"],
  verify: ["verify"],
  confirm: ["verify"],
  claim: ["verify"],
  pay: ["pay"],
  buy: ["pay"],
  purchase: ["pay"],
  topup: ["pay"],
  roll: ["roll"],
  throw: ["roll"],
  toss: ["roll"],
};

/** Senses of other words: things asked about, and the words for them. */
const SENSES: Record<string, string[]> = {
  file: ["file"],
  upload: ["file"],
  attachment: ["file"],
  download: ["file"],
  byte: ["file"],
  note: ["note"],
  memo: ["note"],
  calendar: ["event"],
  event: ["event"],
  appointment: ["event"],
  meeting: ["event"],
  reminder: ["event"],
  remind: ["event"],
  diary: ["event"],
  agenda: ["event"],
  schedule: ["event"],
  busy: ["event", "free"],
  free: ["free"],
  slot: ["free"],
  available: ["free"],
  contact: ["contact", "person"],
  address: ["address"],
  person: ["person"],
  people: ["person"],
  someone: ["person"],
  somebody: ["person"],
  friend: ["person"],
  sister: ["person"],
  brother: ["person"],
  mum: ["person"],
  mom: ["person"],
  mother: ["person"],
  dad: ["person"],
  father: ["person"],
  wife: ["person"],
  husband: ["person"],
  partner: ["person"],
  son: ["person"],
  daughter: ["person"],
  colleague: ["person"],
  boss: ["person"],
  neighbour: ["person"],
  phone: ["phone"],
  mobile: ["phone"],
  text: ["text", "sms"],
  sms: ["sms"],
  mail: ["mail"],
  email: ["mail"],
  inbox: ["mail"],
  message: ["mail", "sms", "chat"],
  weather: ["weather"],
  forecast: ["weather", "future"],
  rain: ["weather"],
  snow: ["weather"],
  sunny: ["weather"],
  wind: ["weather"],
  temperature: ["weather"],
  umbrella: ["weather"],
  air: ["air"],
  pollution: ["air"],
  polluted: ["air"],
  pollen: ["air"],
  smog: ["air"],
  wave: ["sea"],
  surf: ["sea"],
  sea: ["sea"],
  swell: ["sea"],
  beach: ["sea"],
  tide: ["sea"],
  marine: ["sea"],
  last: ["past"],
  past: ["past"],
  ago: ["past"],
  yesterday: ["past"],
  was: ["past"],
  history: ["past"],
  actual: ["past"],
  news: ["news"],
  headline: ["news"],
  article: ["article"],
  story: ["article"],
  place: ["place"],
  cafe: ["place"],
  shop: ["place"],
  restaurant: ["place"],
  pub: ["place"],
  pharmacy: ["place"],
  near: ["near"],
  nearby: ["near"],
  around: ["near"],
  here: ["near"],
  coordinate: ["coordinates"],
  latitude: ["coordinates"],
  longitude: ["coordinates"],
  gps: ["coordinates"],
  geocode: ["coordinates"],
  street: ["address"],
  postcode: ["address"],
  height: ["elevation"],
  high: ["elevation"],
  elevation: ["elevation"],
  altitude: ["elevation"],
  level: ["elevation"],
  tall: ["elevation"],
  drive: ["travel"],
  walk: ["travel"],
  cycle: ["travel"],
  travel: ["travel"],
  journey: ["travel"],
  eta: ["travel"],
  transit: ["transit"],
  market: ["market"],
  tomorrow: ["future"],
  tonight: ["future"],
  weekend: ["future"],
  ahead: ["future"],
  next: ["soon"],
  soon: ["soon"],
  soonest: ["soon"],
  much: ["balance"],
  many: ["balance"],
  far: ["travel"],
  distance: ["travel"],
  direction: ["route"],
  route: ["route"],
  turn: ["route"],
  navigate: ["route"],
  quick: ["nearest"],
  quickest: ["nearest"],
  fastest: ["nearest"],
  nearest: ["nearest"],
  closest: ["nearest"],
  bus: ["bus", "transit"],
  tube: ["transit"],
  underground: ["transit"],
  metro: ["transit"],
  tram: ["transit"],
  train: ["train", "transit"],
  rail: ["train", "transit"],
  railway: ["train", "transit"],
  station: ["transit"],
  stop: ["transit"],
  departure: ["transit"],
  arrival: ["transit"],
  due: ["transit", "soon"],
  delay: ["status"],
  disruption: ["status"],
  status: ["status"],
  flight: ["flight"],
  plane: ["flight", "aircraft"],
  aircraft: ["flight", "aircraft"],
  airplane: ["flight", "aircraft"],
  jet: ["flight", "aircraft"],
  fly: ["flight", "aircraft"],
  overhead: ["overhead"],
  above: ["overhead"],
  sky: ["overhead"],
  language: ["translate"],
  french: ["translate"],
  spanish: ["translate"],
  german: ["translate"],
  english: ["translate"],
  summary: ["summarise"],
  gist: ["summarise"],
  positive: ["classify"],
  negative: ["classify"],
  sentiment: ["classify"],
  json: ["extract"],
  picture: ["image"],
  image: ["image"],
  photo: ["image"],
  drawing: ["image"],
  illustration: ["image"],
  web: ["web"],
  internet: ["web"],
  online: ["web"],
  website: ["web"],
  page: ["web", "page"],
  site: ["web"],
  url: ["web"],
  task: ["task"],
  todo: ["task"],
  chore: ["task"],
  done: ["task"],
  credit: ["credit"],
  left: ["balance"],
  balance: ["balance"],
  remaining: ["balance"],
  wallet: ["wallet"],
  usdc: ["wallet"],
  crypto: ["market", "crypto"],
  money: ["wallet", "currency"],
  receive: ["address"],
  currency: ["currency"],
  dollar: ["currency"],
  euro: ["currency"],
  pound: ["currency"],
  yen: ["currency"],
  bitcoin: ["market", "crypto"],
  ethereum: ["market", "crypto"],
  stock: ["market"],
  share: ["market"],
  price: ["market"],
  blog: ["blog"],
  post: ["blog"],
  chat: ["chat"],
  room: ["chat"],
  prayer: ["prayer"],
  pray: ["prayer"],
  qibla: ["prayer", "qibla"],
  mecca: ["prayer", "qibla"],
  kaaba: ["prayer", "qibla"],
  quran: ["prayer", "quran"],
  verse: ["quran"],
  hadith: ["prayer"],
  earthquake: ["quake"],
  quake: ["quake"],
  tremor: ["quake"],
  flood: ["flood"],
  flooding: ["flood"],
  disaster: ["hazard"],
  hazard: ["hazard"],
  cyclone: ["hazard"],
  volcano: ["hazard"],
  wildfire: ["hazard"],
  food: ["food"],
  barcode: ["food", "barcode"],
  ingredient: ["food"],
  allergen: ["food"],
  nutrition: ["food"],
  healthy: ["food"],
  hygiene: ["hygiene"],
  takeaway: ["hygiene", "place"],
  inspection: ["hygiene"],
  rating: ["hygiene"],
  app: ["app"],
  tracker: ["app"],
  agent: ["agent"],
  assistant: ["agent"],
  bot: ["agent"],
  conversation: ["recall"],
  talk: ["recall"],
  recall: ["recall"],
  remember: ["recall"],
  document: ["doc"],
  doc: ["doc"],
  video: ["video"],
  youtube: ["video"],
  clip: ["video"],
  channel: ["video"],
  map: ["tile"],
  tile: ["tile"],
  dice: ["dice"],
  die: ["dice"],
};

/** Words that say nothing about which tool is wanted. */
const STOP = new Set(
  "a an the to of in on at for and or with from into by as my me i you your our we us it its is are was were be been am do does did can could will would should this that these those there here some any please just now today s d ll ve re m about like up out so want need first".split(
    " ",
  ),
);
/** Words that make a request a question: the answer is read, not made. */
const QUESTION = new Set(["what", "which", "when", "where", "who", "how", "whats", "is", "are", "will", "do", "does", "did", "any", "can"]);
/** Words asking for a collection rather than one thing; in a description's first sentence, words of a method that gives one. */
const LISTING = new Set(["all", "every", "everything", "everyone", "latest", "recent", "new", "newest", "lately", "most", "upcoming"]);
/** What a verb of change does is the request's point; reading, listing and finding are what most requests end in, and tell tools apart less. */
const WEAK = new Set(["#read", "#list", "#find"]);
/** The senses in VERBS that are what is done; the others there are what it is done to. */
const ACTIONS = new Set(
  ["create", "store", "delete", "update", "read", "list", "find", "send", "ask", "convert", "translate", "summarise", "classify", "extract", "generate", "build", "verify", "pay", "roll"].map((a) => `#${a}`),
);
// "was" says when, not what, in a question ("what was the weather"): kept as a sense, not as a stop word.
STOP.delete("was");

/** A word cut to a stem both sides share: plurals, -ing and -ed go. */
export function stem(w: string): string {
  if (w.length > 4 && w.endsWith("ies")) return w.slice(0, -3) + "y";
  if (w.length > 4 && /(ss|x|ch|sh)es$/.test(w)) return w.slice(0, -2);
  if (w.length > 3 && w.endsWith("s") && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1);
  if (w.length > 5 && w.endsWith("ing")) w = w.slice(0, -3);
  else if (w.length > 4 && w.endsWith("ed")) w = w.slice(0, -2);
  if (/([bdglmnprt])\1$/.test(w)) w = w.slice(0, -1);
  return w;
}

/** Looks a stem up in a table, allowing the stem to have lost an "e" ("writ" for write, "schedul" for schedule). */
function lookup(table: Record<string, string[]>, raw: string, s: string): string[] | undefined {
  return table[raw] ?? table[s] ?? table[s + "e"];
}

const split = (text: string) =>
  text
    .toLowerCase()
    .replace(/to-do/g, "todo")
    .replace(/[’']s\b/g, "")
    .match(/[a-z0-9]+/g) ?? [];

/** Names in the possessive ("Tom's phone") are someone's: the request is about a person. */
const possessive = (text: string) => /\b[A-Z][a-z]+[’']s\b/.test(text);

/** A word's stem and every sense it has. */
function sensesOf(raw: string): string[] {
  const s = stem(raw);
  return [s, ...(lookup(SENSES, raw, s) ?? []).map((x) => `#${x}`)];
}

function verbOf(raw: string): string[] | undefined {
  return lookup(VERBS, raw, stem(raw))?.map((x) => `#${x}`);
}

export interface Indexed {
  /** Senses of the service's and method's names. */
  name: Set<string>;
  /** Senses of the names of its arguments: what it is given ("by barcode"). */
  args: Set<string>;
  /** What the method does, by its name's verb or its description's first word, and whether it gives a collection. */
  verbs: Set<string>;
  /** Senses of the words of the service's description. */
  about: Set<string>;
  /** Senses of the words of the method's own description. */
  text: Set<string>;
  write: boolean;
}

const plural = (w: string) => w.length > 3 && w.endsWith("s") && !w.endsWith("ss");

export function indexTool(o: { service: string; method: string; title: string; about: string; description: string; args: string[]; write: boolean }): Indexed {
  const methodWords = split(o.method);
  const verbs = new Set<string>();
  // A method's name is a verb unless it is a plural noun (chat/messages); a description opens with what the method does ("Deletes …").
  const firstSentence = o.description.trim().split(/\n|(?<=\.)\s/)[0] ?? "";
  const sentence = split(firstSentence);
  for (const w of [...methodWords.filter((w) => !plural(w)), ...sentence.slice(0, 1)]) for (const v of verbOf(w) ?? []) verbs.add(v);
  // A method whose first sentence offers many ("Every note", "newest first") gives a collection.
  if (sentence.slice(0, 3).some((w) => LISTING.has(w)) || /\b\w+est first\b/i.test(firstSentence)) verbs.add("#list");
  const name = new Set([...split(o.service), ...methodWords].flatMap((w) => [...sensesOf(w), ...(verbOf(w) ?? [])]));
  const args = new Set(o.args.flatMap(split).filter((w) => !STOP.has(w)).flatMap(sensesOf));
  const text = new Set(split(`${o.title} ${o.description}`).filter((w) => !STOP.has(w)).flatMap(sensesOf));
  const about = new Set(split(o.about).filter((w) => !STOP.has(w)).flatMap(sensesOf));
  return { name, args, verbs, about, text, write: o.write };
}

/** How rare each sense is among the tools' names and among their descriptions: a word many tools use tells them apart less. */
export interface Rarity {
  name: Map<string, number>;
  text: Map<string, number>;
}

function idf(sets: Set<string>[]): Map<string, number> {
  const df = new Map<string, number>();
  for (const set of sets) for (const s of set) df.set(s, (df.get(s) ?? 0) + 1);
  const n = sets.length;
  const out = new Map<string, number>();
  // 1 for a sense only one tool has, towards 0 for one every tool has.
  for (const [s, d] of df) out.set(s, Math.log((n + 1) / d) / Math.log(n + 1));
  return out;
}

export function rarity(index: Indexed[]): Rarity {
  return { name: idf(index.map((t) => t.name)), text: idf(index.map((t) => t.text)) };
}

interface Term {
  senses: string[];
  /** This word as the request's verb: what the tool should do. */
  verb?: string[];
  lead?: boolean;
  weight: number;
}

const PREPOSITIONS = new Set(["for", "about", "with", "from", "to", "at", "on", "in", "into", "by", "of"]);

/** A request read as its verb and the words about its object. */
export function readQuery(query: string): { terms: Term[]; question: boolean; listing: boolean } {
  const all = split(query);
  const question = all.length > 0 && QUESTION.has(all[0]!);
  const seen = new Set<string>();
  let listing = false;
  let lead = !question;
  let modifying = false;
  const terms: Term[] = [];
  const words = possessive(query) ? [...all, "someone"] : all;
  for (const w of words) {
    // What follows a preposition once the object is named qualifies it ("a new document for the meeting"): it counts less.
    if (PREPOSITIONS.has(w) && terms.some((t) => !t.lead && t.senses.some((x) => x.startsWith("#")))) modifying = true;
    if (STOP.has(w) || QUESTION.has(w) || w.length < 2 || seen.has(w)) continue;
    seen.add(w);
    const verb = verbOf(w);
    const weight = modifying ? 0.5 : 1;
    // The leading word of a request that is not a question is its verb ("text my sister"): its other senses go with it.
    if (lead) {
      lead = false;
      if (verb) {
        terms.push({ senses: verb, verb, lead: true, weight: 1 });
        continue;
      }
    }
    if (LISTING.has(w)) {
      listing = true;
      continue;
    }
    // In a question, a verb further on still says something of what is wanted ("which texts did I get"), as a verb only.
    if (verb && question && !SENSES[w] && !SENSES[stem(w)]) terms.push({ senses: [], verb, weight });
    else terms.push({ senses: sensesOf(w), verb: question ? verb : undefined, weight });
  }
  return { terms, question, listing };
}

/** How well a tool answers a request read by readQuery. */
export function score(t: Indexed, q: ReturnType<typeof readQuery>, rare: Rarity): number {
  let object = 0;
  let verb = 0;
  let hasVerb = false;
  for (const term of q.terms) {
    let best = 0;
    for (const s of term.senses) {
      // The leading verb's own senses count as its verb, below; any object it names ("upload" a file) counts here.
      if (term.lead && ACTIONS.has(s)) continue;
      let w = 0;
      if (t.name.has(s)) w = 2 + 2 * (rare.name.get(s) ?? 1);
      else if (prefixed(t.name, s)) w = 2;
      if (t.args.has(s)) w = Math.max(w, 1.5);
      if (t.text.has(s)) w = Math.max(w, 0.3 + 1.5 * (rare.text.get(s) ?? 1));
      if (t.about.has(s)) w = Math.max(w, 1);
      // What the leading verb itself names ("upload": a file; "remind": an event) is the request's object.
      best = Math.max(best, term.lead ? w * 1.5 : w);
    }
    if (term.verb) {
      hasVerb = true;
      if (term.verb.some((v) => t.verbs.has(v))) {
        const strong = term.verb.some((v) => !WEAK.has(v) && t.verbs.has(v));
        verb += term.lead ? (strong ? 4 : 1.5) : 1;
      }
    }
    object += best * term.weight;
  }
  // A verb says which of a service's tools; on its own it finds no service.
  if (object === 0) return verb > 0 ? 0.5 : 0;
  let total = object + verb;
  if (q.listing && t.verbs.has("#list")) total += 1.5;
  // A question is answered by reading; one with no verb of its own most often asks what there is.
  if (q.question && !t.write) total += 0.5;
  if (q.question && !hasVerb && t.verbs.has("#list")) total += 0.5;
  return total;
}

function prefixed(set: Set<string>, s: string): boolean {
  if (s.startsWith("#") || s.length < 4) return false;
  for (const v of set) if (!v.startsWith("#") && v.length >= 4 && (v.startsWith(s) || s.startsWith(v))) return true;
  return false;
}
