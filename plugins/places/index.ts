import "./providers.ts";
import { Type as T } from "@sinclair/typebox";
import { invalid, notFound, definePlugin, read, type Ctx, freeWhenHeld } from "hearth";
import { elevationAt } from "./elevation.ts";
import { reverse, searchPlaces } from "./nominatim.ts";
import { around, peekAround } from "./overpass.ts";
import { coordinates, locate } from "./where.ts";

const Lat = T.Number({ minimum: -90, maximum: 90, description: "Latitude in decimal degrees." });
const Lon = T.Number({ minimum: -180, maximum: 180, description: "Longitude in decimal degrees." });
const PlaceName = (what: string) => T.String({ minLength: 1, maxLength: 300, description: what });
const LIMIT = 25;
const NEAR = { name: "near", lat: "lat", lon: "lon" };

const NEARBY_PRICE = 4;
const SEARCH_PRICE = 5;

// A priced answer already in the cache costs nothing; only a point given as
// coordinates can be checked before the call (a name needs its geocode first).
function cachedAround(ctx: unknown, a: { lat?: number; lon?: number; near?: string; radius: number }, text: string | undefined): boolean | Promise<boolean> {
  const named = a.near === undefined ? null : coordinates(a.near);
  const at = named && named !== "off-earth" ? named : a.near === undefined && a.lat !== undefined && a.lon !== undefined ? { lat: a.lat, lon: a.lon } : null;
  return !!at && peekAround(ctx as Ctx, at.lat, at.lon, a.radius, text);
}

export default definePlugin({
  name: "places",
  // The home page finds the place a person types here.
  geocoder: {
    method: "geocode",
    arg: "address",
    read: (r) => {
      const found = (r as { places?: { name?: string; display_name?: string; lat?: number; lon?: number }[] } | null)?.places?.find((p) => typeof p.lat === "number" && typeof p.lon === "number");
      return found ? { name: found.display_name ?? found.name ?? "", lat: found.lat!, lon: found.lon! } : null;
    },
  },
  description: "Places from OpenStreetMap: names to coordinates and back (Nominatim), height above sea level (Open-Meteo), and points of interest around a location (Overpass).",
  needs: ["http"],
  providers: ["NOMINATIM", "OPEN_METEO", "OPEN_METEO_GEOCODING", "OVERPASS"],
  config: {
    NOMINATIM_URL: { default: "", description: "Base URL of a Nominatim geocoder (https://nominatim.openstreetmap.org when empty; its policy allows one request a second)." },
    OVERPASS_URL: { default: "", description: "Base URL of an Overpass API server (https://overpass-api.de when empty)." },
    OPEN_METEO_URL: { default: "", description: "Base URL of the Open-Meteo API, used here for elevation (https://api.open-meteo.com when empty)." },
  },
  methods: {
    geocode: read({
      description: "Resolves a place name or address to coordinates: the best matches first, each with its full name, kind and address parts. Cached a week.",
      args: T.Object({ address: T.Optional(PlaceName("A place name or street address, e.g. \"10 Downing Street, London\".")) }),
      access: "public",
      untrusted: true,
      openWorld: true,
      async run({ address }, ctx) {
        if (address === undefined || address.trim() === "") throw invalid("address", "address is required: a place name or street address");
        const f = await searchPlaces(ctx, address, 5);
        if (f.data.length === 0) throw notFound(`no place found for "${address}"`);
        return { query: address, places: f.data, ...f.about };
      },
    }),

    address: read({
      description: "Names the place at coordinates (reverse geocoding): the nearest address OpenStreetMap knows, with its parts. Cached a week.",
      args: T.Object({ lat: Lat, lon: Lon }),
      access: "public",
      untrusted: true,
      openWorld: true,
      async run({ lat, lon }, ctx) {
        const f = await reverse(ctx, lat, lon);
        if (!f.data) throw notFound(`OpenStreetMap has no address near ${lat}, ${lon}`);
        return { lat, lon, place: f.data, ...f.about };
      },
    }),

    elevation: read({
      description:
        "Height above sea level in metres and feet at a place (geocoded first) or at lat and lon, sampled from a 90-metre global model, so a summit reads slightly under its surveyed height.",
      args: T.Object({ place: T.Optional(PlaceName("A place name or address.")), lat: T.Optional(Lat), lon: T.Optional(Lon) }),
      access: "public",
      openWorld: true,
      async run({ place, lat, lon }, ctx) {
        const at = (await locate(ctx, { name: place, lat, lon }, { name: "place", lat: "lat", lon: "lon" }, true))!;
        const e = await elevationAt(ctx, at.lat, at.lon);
        return {
          lat: at.lat,
          lon: at.lon,
          ...(at.place ? { place: at.place.display_name } : {}),
          metres: e.metres,
          feet: e.feet,
          model: e.model,
          ...e.about,
        };
      },
    }),

    nearby: read({
      description: `Points of interest near a place (geocoded) or lat and lon, nearest first: shops, cafés, services, sights. \`query\` narrows to a kind or name ("pharmacy", "coffee"). \`radius\` in metres, default 1000, at most 5000. At most ${LIMIT} places. Cached a day.`,
      args: T.Object({
        near: T.Optional(PlaceName("A place name or address to search around.")),
        lat: T.Optional(Lat),
        lon: T.Optional(Lon),
        query: T.Optional(T.String({ minLength: 1, maxLength: 100, description: "A kind of place or a name to keep to." })),
        radius: T.Number({ minimum: 10, maximum: 5000, default: 1000, description: "Metres around the location (default 1000, at most 5000)." }),
      }),
      access: "public",
      untrusted: true,
      openWorld: true,
      price: (a, ctx) => freeWhenHeld(cachedAround(ctx, a, a.query), NEARBY_PRICE),
      async run({ near, lat, lon, query, radius }, ctx) {
        const at = (await locate(ctx, { name: near, lat, lon }, NEAR, true))!;
        const r = await around(ctx, at, radius, query, LIMIT);
        return {
          center: { lat: at.lat, lon: at.lon, ...(at.place ? { place: at.place.display_name } : {}) },
          radius_m: radius,
          ...(query ? { query } : {}),
          count: r.places.length,
          places: r.places,
          ...(r.note ? { note: r.note } : {}),
          ...r.fetched.about,
          ...(r.fetched.data.as_of ? { data_as_of: r.fetched.data.as_of } : {}),
        };
      },
    }),

    search: read({
      description: `Places by name or kind. Near a place or lat and lon (within \`radius\` metres, default 2000, at most 10000), from OpenStreetMap's points of interest, nearest best matches first; with no location, the best matches anywhere from the geocoder. At most ${LIMIT}.`,
      args: T.Object({
        query: T.String({ minLength: 1, maxLength: 200, description: "A name or kind of place: \"British Museum\", \"vegan restaurant\"." }),
        near: T.Optional(PlaceName("A place name or address to search around.")),
        lat: T.Optional(Lat),
        lon: T.Optional(Lon),
        radius: T.Number({ minimum: 10, maximum: 10000, default: 2000, description: "Metres around the location (default 2000, at most 10000)." }),
      }),
      access: "public",
      untrusted: true,
      openWorld: true,
      price: (a, ctx) => freeWhenHeld(cachedAround(ctx, a, a.query), SEARCH_PRICE),
      async run({ query, near, lat, lon, radius }, ctx) {
        const at = await locate(ctx, { name: near, lat, lon }, NEAR, false);
        if (!at) {
          const f = await searchPlaces(ctx, query, 10);
          return { query, count: f.data.length, places: f.data, ...f.about };
        }
        const r = await around(ctx, at, radius, query, LIMIT);
        return {
          query,
          center: { lat: at.lat, lon: at.lon, ...(at.place ? { place: at.place.display_name } : {}) },
          radius_m: radius,
          count: r.places.length,
          places: r.places,
          ...(r.note ? { note: r.note } : {}),
          ...r.fetched.about,
          ...(r.fetched.data.as_of ? { data_as_of: r.fetched.data.as_of } : {}),
        };
      },
    }),
  },
});
