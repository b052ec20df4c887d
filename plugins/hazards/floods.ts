// The Environment Agency's flood-monitoring API: warnings and alerts in
// force in England (https://environment.data.gov.uk/flood-monitoring/doc/reference).
// severityLevel 1 severe flood warning, 2 flood warning, 3 flood alert,
// 4 no longer in force (kept a day after it lifts).

export interface Flood {
  id: string;
  area: string;
  severity: string;
  level: number;
  county: string | null;
  river_or_sea: string | null;
  tidal: boolean | null;
  message: string;
  raised: string | null;
  changed: string | null;
}

const names: Record<number, string> = { 1: "severe flood warning", 2: "flood warning", 3: "flood alert", 4: "no longer in force" };
// EA times carry no offset; they are UTC.
const utc = (s: unknown) => (typeof s === "string" && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(s) ? `${s.length === 16 ? `${s}:00` : s}Z` : null);

export function floods(body: any): Flood[] {
  if (!body || !Array.isArray(body.items)) throw new Error("not a flood-monitoring answer");
  return body.items
    .filter((i: any) => typeof i?.severityLevel === "number")
    .map((i: any) => ({
      id: String(i.floodAreaID ?? i["@id"] ?? ""),
      area: String(i.description ?? i.eaAreaName ?? ""),
      severity: names[i.severityLevel] ?? String(i.severity ?? "").toLowerCase(),
      level: i.severityLevel,
      county: typeof i.floodArea?.county === "string" ? i.floodArea.county : null,
      river_or_sea: typeof i.floodArea?.riverOrSea === "string" ? i.floodArea.riverOrSea : null,
      tidal: typeof i.isTidal === "boolean" ? i.isTidal : null,
      message: String(i.message ?? ""),
      raised: utc(i.timeRaised),
      changed: utc(i.timeSeverityChanged),
    }));
}
