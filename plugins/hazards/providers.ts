// The providers hazards reaches, each with the policy it asks of its users.
import { defineProvider, perSecond } from "hearth";


defineProvider({ name: "USGS", label: "USGS Earthquake Hazards Program", url: "https://earthquake.usgs.gov", concurrency: 2, rate: perSecond(2) });
defineProvider({
  name: "GDACS",
  label: "GDACS (Global Disaster Alert and Coordination System)",
  url: "https://www.gdacs.org",
  concurrency: 2,
  rate: perSecond(1),
});
defineProvider({
  name: "EA_FLOODS",
  label: "Environment Agency flood-monitoring",
  url: "https://environment.data.gov.uk",
  attribution: "This uses Environment Agency flood and river level data from the real-time data API (Beta)",
  concurrency: 2,
  rate: perSecond(2),
});
