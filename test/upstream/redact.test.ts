import { expect, test } from "bun:test";
import { redactUrl } from "../../core/upstream/index.ts";

test("credentials in a provider URL are blanked before it is stored or logged", () => {
  expect(redactUrl("https://data.bus-data.dft.gov.uk/api/v1/datafeed/?boundingBox=1,2,3,4&api_key=abc123")).toBe(
    "https://data.bus-data.dft.gov.uk/api/v1/datafeed/?boundingBox=1,2,3,4&api_key=REDACTED",
  );
  expect(redactUrl("https://x/y?app_key=k&q=tea&accessToken=t#f")).toBe("https://x/y?app_key=REDACTED&q=tea&accessToken=REDACTED#f");
  expect(redactUrl("https://x/y?q=key")).toBe("https://x/y?q=key");
});
