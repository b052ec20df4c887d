// The providers routes reaches besides those osrm.ts and google.ts define:
// OSRM's demo server (one request a second) and Nominatim to find places. A
// provider another plugin defines the same way is shared: the first
// definition holds, so its limits stay instance-wide.
import { defineProvider, perSecond } from "hearth";


defineProvider({
  name: "NOMINATIM",
  label: "OpenStreetMap Nominatim",
  url: "https://nominatim.openstreetmap.org",
  attribution: "© OpenStreetMap contributors, ODbL",
  concurrency: 1,
  rate: perSecond(1),
});
defineProvider({
  name: "OSRM",
  label: "OSRM",
  url: "https://router.project-osrm.org",
  attribution: "Routes © OpenStreetMap contributors, ODbL",
  concurrency: 1,
  rate: perSecond(1),
});
