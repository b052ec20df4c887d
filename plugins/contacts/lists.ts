/** A JSON list of strings as kept (a contact's other emails and phones, their kinds), or none. */
export function listOf(json: string): string[] {
  try {
    const v = JSON.parse(json) as unknown;
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
  } catch {
    return [];
  }
}
