// The instance's icon: a flame on the pages' accent colour, written here as
// SVG so the single binary carries it. Browsers ask for /favicon.ico on their
// own; the pages link /favicon.svg. Both answer the same image, cached a day.
const SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#8a3b12"/><path d="M16 4c1 5 8 8 8 16a8 8 0 0 1-16 0c0-4 2-7 4-9 0 3 1 5 3 6 0-5-1-9 1-13z" fill="#fbfaf7"/></svg>`;

export const FAVICON_PATHS = ["/favicon.ico", "/favicon.svg"];

export function favicon(): Response {
  return new Response(SVG, { headers: { "content-type": "image/svg+xml", "cache-control": "public, max-age=86400" } });
}
