// Web-mercator (EPSG:3857) tile arithmetic, and the part of the grid
// Ordnance Survey draws: Great Britain, from zoom 7.
export const MAX_LAT = 85.0511287798;

export const tilesAcross = (z: number) => 2 ** z;

export function tileX(lon: number, z: number): number {
  const n = tilesAcross(z);
  return Math.min(n - 1, Math.max(0, Math.floor(((lon + 180) / 360) * n)));
}

export function tileY(lat: number, z: number): number {
  const n = tilesAcross(z);
  const r = (Math.max(-MAX_LAT, Math.min(MAX_LAT, lat)) * Math.PI) / 180;
  return Math.min(n - 1, Math.max(0, Math.floor(((1 - Math.log(Math.tan(r) + 1 / Math.cos(r)) / Math.PI) / 2) * n)));
}

/** The north-west corner of a tile in degrees. */
export function corner(x: number, y: number, z: number): { lat: number; lon: number } {
  const n = tilesAcross(z);
  const lon = (x / n) * 360 - 180;
  const lat = (Math.atan(Math.sinh(Math.PI * (1 - (2 * y) / n))) * 180) / Math.PI;
  return { lat, lon };
}

// The extent of OS Maps API's ZXY EPSG:3857 layers, and the zooms they have.
export const OS_EXTENT = { west: -10.76418, south: 49.528423, east: 1.9134116, north: 61.331151 };
export const OS_MIN_ZOOM = 7;

/** Why Ordnance Survey has no such tile, or null when it does. */
export function outsideCoverage(z: number, x: number, y: number): string | null {
  if (z < OS_MIN_ZOOM) return `Ordnance Survey draws these maps from zoom ${OS_MIN_ZOOM} (all of Britain on a few tiles) to 20; zoom ${z} is not drawn`;
  const nw = corner(x, y, z);
  const se = corner(x + 1, y + 1, z);
  if (se.lon < OS_EXTENT.west || nw.lon > OS_EXTENT.east || nw.lat < OS_EXTENT.south || se.lat > OS_EXTENT.north)
    return "this tile lies outside Great Britain, which is all Ordnance Survey maps cover";
  return null;
}
