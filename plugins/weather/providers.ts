// The providers the weather reaches. Open-Meteo serves each dataset from its own host.
import { defineProvider, perMinute, perSecond } from "hearth";

const openMeteo = { label: "Open-Meteo", attribution: "Weather data by Open-Meteo.com (CC BY 4.0)", concurrency: 4, rate: perMinute(500) };

defineProvider({ name: "OPEN_METEO", url: "https://api.open-meteo.com", ...openMeteo });
defineProvider({ name: "OPEN_METEO_AIR", url: "https://air-quality-api.open-meteo.com", ...openMeteo });
defineProvider({ name: "OPEN_METEO_MARINE", url: "https://marine-api.open-meteo.com", ...openMeteo });
defineProvider({ name: "OPEN_METEO_ARCHIVE", url: "https://archive-api.open-meteo.com", ...openMeteo });
