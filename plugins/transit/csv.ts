// RFC 4180 CSV as GTFS and the feed catalogue publish it: quoted fields may
// hold commas, doubled quotes and line breaks; a byte-order mark may lead.

/** Rows of a CSV text as objects keyed by the header row (trimmed). */
export function* csvRecords(text: string): Generator<Record<string, string>> {
  let header: string[] | null = null;
  for (const row of csvRows(text)) {
    if (!header) {
      header = row.map((h) => h.trim());
      continue;
    }
    if (row.length === 1 && row[0] === "") continue;
    const rec: Record<string, string> = {};
    for (let i = 0; i < header.length; i++) rec[header[i]] = (row[i] ?? "").trim();
    yield rec;
  }
}

export function* csvRows(text: string): Generator<string[]> {
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const n = text.length;
  let row: string[] = [];
  let field = "";
  while (i < n) {
    const c = text[i];
    if (c === '"' && field === "") {
      // A quoted field: runs to the next lone quote.
      i++;
      let start = i;
      for (;;) {
        const q = text.indexOf('"', i);
        if (q === -1) {
          field += text.slice(start);
          i = n;
          break;
        }
        if (text[q + 1] === '"') {
          field += text.slice(start, q + 1);
          i = q + 2;
          start = i;
          continue;
        }
        field += text.slice(start, q);
        i = q + 1;
        break;
      }
      continue;
    }
    if (c === ",") {
      row.push(field);
      field = "";
      i++;
      continue;
    }
    if (c === "\n" || c === "\r") {
      row.push(field);
      field = "";
      yield row;
      row = [];
      i += c === "\r" && text[i + 1] === "\n" ? 2 : 1;
      continue;
    }
    // An unquoted run up to the next separator.
    let j = i;
    while (j < n) {
      const d = text.charCodeAt(j);
      if (d === 44 || d === 10 || d === 13) break;
      j++;
    }
    field += text.slice(i, j);
    i = j;
  }
  if (field !== "" || row.length) {
    row.push(field);
    yield row;
  }
}
