// Large JSON a package ships (the Quran text, airport lists) is embedded as a
// file, not as code: in the single binary a JSON import becomes part of the
// script every start parses, which cost ~9 MB resident and tens of
// milliseconds before the first request. A file import is only a path.

/** Reads and parses a JSON file imported with `with { type: "file" }`. */
export async function readShippedJson<T>(path: unknown): Promise<T> {
  return JSON.parse(await Bun.file(path as string).text()) as T;
}
