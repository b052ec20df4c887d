// The providers places reaches: Open-Meteo for elevation and place names,
// OpenStreetMap's Nominatim (one request a second) and Overpass (a couple of
// slots per client). A provider another plugin defines the same way is shared:
// the first definition holds, so its limits stay instance-wide.
import { defineProvider, perMinute, perSecond } from "hearth";

const openMeteo = { label: "Open-Meteo", attribution: "Weather data by Open-Meteo.com (CC BY 4.0)", concurrency: 4, rate: perMinute(500) };

defineProvider({ name: "OPEN_METEO", url: "https://api.open-meteo.com", ...openMeteo });
defineProvider({ name: "OPEN_METEO_GEOCODING", url: "https://geocoding-api.open-meteo.com", ...openMeteo });
defineProvider({
  name: "NOMINATIM",
  label: "OpenStreetMap Nominatim",
  url: "https://nominatim.openstreetmap.org",
  attribution: "© OpenStreetMap contributors, ODbL",
  concurrency: 1,
  rate: perSecond(1),
});
defineProvider({
  name: "OVERPASS",
  label: "OpenStreetMap Overpass API",
  url: "https://overpass-api.de",
  attribution: "© OpenStreetMap contributors, ODbL",
  concurrency: 2,
  rate: perSecond(1),
  timeoutMs: 30_000,
});
