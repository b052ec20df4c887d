// The Food Standards Agency's ratings API (https://api.ratings.food.gov.uk/help),
// version 2: establishments with a rating, from national inspections. England,
// Wales and Northern Ireland rate 0-5 (FHRS); Scotland rates Pass or
// Improvement Required (FHIS).

const MILE_KM = 1.609344;
const text = (v: unknown): string | null => (typeof v === "string" && v.trim() ? v.trim() : null);

export function establishments(body: any) {
  if (!body || !Array.isArray(body.establishments)) throw new Error("not an FSA ratings answer");
  return {
    total: typeof body.meta?.totalCount === "number" ? (body.meta.totalCount as number) : body.establishments.length,
    places: body.establishments.map((e: any) => {
      const lat = Number(e.geocode?.latitude);
      const lon = Number(e.geocode?.longitude);
      const located = e.geocode?.latitude != null && e.geocode?.longitude != null && Number.isFinite(lat) && Number.isFinite(lon);
      return {
        id: e.FHRSID,
        name: String(e.BusinessName ?? ""),
        type: text(e.BusinessType),
        address: [e.AddressLine1, e.AddressLine2, e.AddressLine3, e.AddressLine4].map(text).filter(Boolean).join(", ") || null,
        postcode: text(e.PostCode),
        rating: text(e.RatingValue),
        scheme: e.SchemeType === "FHIS" ? "FHIS (Scotland: Pass or Improvement Required)" : "FHRS (0 to 5)",
        rated_on: typeof e.RatingDate === "string" && /^\d{4}-\d{2}-\d{2}/.test(e.RatingDate) ? e.RatingDate.slice(0, 10) : null,
        new_rating_pending: e.NewRatingPending === true || e.NewRatingPending === "True",
        authority: text(e.LocalAuthorityName),
        lat: located ? lat : null,
        lon: located ? lon : null,
        distance_km: typeof e.Distance === "number" ? Math.round(e.Distance * MILE_KM * 100) / 100 : null,
      };
    }),
  };
}

export { MILE_KM };
