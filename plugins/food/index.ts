import "./providers.ts";
import { Type as T } from "@sinclair/typebox";
import { invalid, definePlugin, read } from "hearth";
import { establishments, MILE_KM } from "./fsa.ts";
import * as off from "./openfoodfacts.ts";

const HOUR = 3600;
// Hygiene searches around a point reach this far.
const NEAR_MILES = 1;

export default definePlugin({
  name: "food",
  description:
    "Packaged foods from Open Food Facts (ingredients, allergens, nutrition, Nutri-Score, processing) and food hygiene ratings of UK businesses from the Food Standards Agency.",
  needs: ["http"],
  providers: ["FSA", "OPEN_FOOD_FACTS"],
  config: {
    OPEN_FOOD_FACTS_URL: { default: "", description: "Base URL of Open Food Facts (https://world.openfoodfacts.org when empty)." },
    FSA_URL: { default: "", description: "Base URL of the FSA food hygiene ratings API (https://api.ratings.food.gov.uk when empty)." },
  },
  methods: {
    product: read({
      description:
        "One packaged food by barcode (6 to 14 digits): name, brand, ingredients, allergens and traces, nutrition per 100 g, Nutri-Score (A-E) and NOVA processing group (1-4). Where Open Food Facts has nothing on a field the answer says so (`not_on_record`) instead of implying none. Cached a day.",
      args: T.Object({ barcode: T.String({ pattern: "^[0-9]{6,14}$", description: "6 to 14 digits" }) }),
      access: "public",
      untrusted: true,
      openWorld: true,
      async run({ barcode }, ctx) {
        const f = await ctx.http.get("OPEN_FOOD_FACTS", `/api/v2/product/${barcode}`, {
          query: { fields: off.PRODUCT_FIELDS },
          ttl: 24 * HOUR,
          accept: [404],
          parse: off.product,
        });
        return { ...f.data, ...f.about };
      },
    }),
    search: read({
      description:
        "Packaged foods by name or brand, each with its barcode, brand, quantity, Nutri-Score and NOVA group. `limit` default 10, max 25. Cached an hour.",
      args: T.Object({
        query: T.String({ minLength: 1, maxLength: 200, description: "Words of the name or brand." }),
        limit: T.Integer({ minimum: 1, maximum: 25, default: 10, description: "How many, 1 to 25 (default 10)." }),
      }),
      access: "public",
      untrusted: true,
      openWorld: true,
      async run({ query, limit }, ctx) {
        const q = query.trim().replace(/\s+/g, " ");
        if (!q) throw invalid("query", "query must have words in it");
        const f = await ctx.http.get("OPEN_FOOD_FACTS", "/cgi/search.pl", {
          query: { search_terms: q, search_simple: 1, action: "process", json: 1, page_size: limit ?? 10, fields: off.SEARCH_FIELDS },
          ttl: HOUR,
          parse: off.search,
        });
        return { query: q, total: f.data.total, products: f.data.products.slice(0, limit ?? 10), ...f.about };
      },
    }),
    hygiene: read({
      description: `Food hygiene ratings of UK businesses from national inspections, by \`name\`, \`where\` (town, street or postcode) and/or a point (\`lat\`, \`lon\`: nearest first within ${NEAR_MILES} mile, ${(NEAR_MILES * MILE_KM).toFixed(1)} km). \`limit\` default 10, max 30. Cached a day.`,
      args: T.Object({
        name: T.Optional(T.String({ minLength: 1, maxLength: 200, description: "Business name, or part of it." })),
        where: T.Optional(T.String({ minLength: 1, maxLength: 200, description: "Town, street or postcode." })),
        lat: T.Optional(T.Number({ minimum: -90, maximum: 90, description: "Latitude (with lon)." })),
        lon: T.Optional(T.Number({ minimum: -180, maximum: 180, description: "Longitude (with lat)." })),
        limit: T.Integer({ minimum: 1, maximum: 30, default: 10, description: "How many, 1 to 30 (default 10)." }),
      }),
      access: "public",
      untrusted: true,
      openWorld: true,
      async run(a, ctx) {
        if (a.lat !== undefined && a.lon === undefined) throw invalid("lon", "lon is required with lat");
        if (a.lon !== undefined && a.lat === undefined) throw invalid("lat", "lat is required with lon");
        const point = a.lat !== undefined && a.lon !== undefined;
        if (!a.name?.trim() && !a.where?.trim() && !point) throw invalid("name", "give a name, where (town, street or postcode), or lat and lon");
        const limit = a.limit ?? 10;
        const f = await ctx.http.get("FSA", "/Establishments", {
          query: {
            name: a.name?.trim() || undefined,
            address: a.where?.trim() || undefined,
            latitude: point ? a.lat : undefined,
            longitude: point ? a.lon : undefined,
            maxDistanceLimit: point ? NEAR_MILES : undefined,
            sortOptionKey: point ? "distance" : undefined,
            pageSize: limit,
            pageNumber: 1,
          },
          ttl: 24 * HOUR,
          parse: establishments,
        });
        return { total: f.data.total, places: f.data.places.slice(0, limit), ...f.about };
      },
    }),
  },
});
