// The providers food reaches, each with the policy it asks of its users.
import { defineProvider, perMinute, perSecond } from "hearth";


defineProvider({
  name: "OPEN_FOOD_FACTS",
  label: "Open Food Facts",
  url: "https://world.openfoodfacts.org",
  attribution: "Open Food Facts, under the Open Database License",
  concurrency: 2,
  // Its published limits: 100 product reads and 10 searches a minute.
  rate: perMinute(100),
  lanes: { "/cgi/search.pl": perMinute(10), "/api/v2/search": perMinute(10) },
});
defineProvider({
  name: "FSA",
  label: "Food Standards Agency food hygiene ratings",
  url: "https://api.ratings.food.gov.uk",
  attribution: "Food Standards Agency, Open Government Licence",
  concurrency: 2,
  rate: perSecond(2),
  headers: { "x-api-version": "2", accept: "application/json" },
});
