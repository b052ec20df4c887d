// National Rail's live departure boards (Darwin LDBWS) through the Rail Data
// Marketplace's JSON interface, which needs a key (LDBWS_TOKEN).
import { upstream, type Ctx, type Fetched, defineProvider } from "hearth";

defineProvider({
  name: "LDBWS",
  label: "National Rail Enquiries live departure boards (Darwin)",
  url: "https://api1.raildata.org.uk/1010-live-arrival-and-departure-boards-arr-and-dep1_1",
  attribution: "Powered by National Rail Enquiries",
  concurrency: 4,
  rate: { count: 5, perMs: 1000 },
});

export interface Board {
  station: string;
  crs: string;
  generated_at: string | null;
  platforms_known: boolean;
  services: {
    scheduled: string | null;
    expected: string | null;
    platform: string | null;
    operator: string | null;
    origin: string | null;
    destination: string | null;
    via: string | null;
    cancelled: boolean;
    reason: string | null;
    kind: string;
  }[];
  messages: string[];
}

type Loc = { locationName?: string; via?: string | null };
const names = (v: unknown) => (Array.isArray(v) && v.length ? (v as Loc[]).map((l) => l.locationName).filter(Boolean).join(" & ") : null);
const vias = (v: unknown) => (Array.isArray(v) ? ((v as Loc[]).map((l) => l.via).filter(Boolean).join(", ") || null) : null);
// Messages come as HTML fragments with links; the answer carries their text.
const plain = (html: string) =>
  html
    .replace(/<[^>]*>/g, "")
    .replace(/&amp;/g, "&")
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/\s+/g, " ")
    .trim();

export function parseBoard(b: Record<string, unknown>, arrivals: boolean): Board {
  if (!b || typeof b !== "object" || typeof b.crs !== "string") throw new Error("not a station board");
  const services: Board["services"] = [];
  for (const [kind, list] of [
    ["train", b.trainServices],
    ["bus", b.busServices],
    ["ferry", b.ferryServices],
  ] as const) {
    if (!Array.isArray(list)) continue;
    for (const s of list as Record<string, unknown>[]) {
      const scheduled = (arrivals ? s.sta : s.std) as string | undefined;
      const expected = (arrivals ? s.eta : s.etd) as string | undefined;
      services.push({
        scheduled: scheduled ?? null,
        expected: expected ?? null,
        platform: typeof s.platform === "string" ? s.platform : null,
        operator: typeof s.operator === "string" ? s.operator : null,
        origin: names(s.origin),
        destination: names(s.destination),
        via: vias(s.destination),
        cancelled: s.isCancelled === true,
        reason: (typeof s.cancelReason === "string" && s.cancelReason) || (typeof s.delayReason === "string" && s.delayReason) || null,
        kind,
      });
    }
  }
  const msgs = Array.isArray(b.nrccMessages) ? (b.nrccMessages as Record<string, unknown>[]) : [];
  return {
    station: String(b.locationName ?? b.crs),
    crs: b.crs,
    generated_at: typeof b.generatedAt === "string" ? new Date(b.generatedAt).toISOString() : null,
    platforms_known: b.platformAvailable === true,
    services,
    messages: msgs.map((m) => plain(String(m.Value ?? m.value ?? ""))).filter(Boolean),
  };
}

export function board(ctx: Ctx, crs: string, rows: number, arrivals: boolean): Promise<Fetched<Board>> {
  const op = arrivals ? "GetArrivalBoard" : "GetDepartureBoard";
  return ctx.http.get("LDBWS", `/LDBWS/api/20220120/${op}/${crs}`, {
    query: { numRows: rows },
    headers: { "x-apikey": ctx.config.LDBWS_TOKEN },
    ttl: 30,
    keep: 120,
    // Read as text so a refusal, which is not JSON, can be named for what it is.
    as: "text",
    accept: [401, 403],
    parse: (body: string, status) => {
      if (status === 401 || status === 403)
        throw upstream("upstream_failed", `the Rail Data Marketplace refused LDBWS_TOKEN (HTTP ${status}): check the key and its subscription to the Live Arrival and Departure Boards product`);
      return parseBoard(JSON.parse(body), arrivals);
    },
  });
}
