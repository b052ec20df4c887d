// All of one person's data as one zip: for every service, its records in the
// open formats it declares (`exports`: Markdown, the files as they are), the
// iCalendar or vCard of its calendar or contacts collection (`dav`), and the
// JSON of every row it keeps for them, found the same way for every service:
// its tables (named for it, "<service>" or "<service>_…"), the rows whose
// owner, account, author or creator is theirs. So a drop-in's records are in the export with no core edit.
import { sql } from "drizzle-orm";
import { Zip, ZipDeflate } from "fflate";
import { newCall } from "../call.ts";
import { isPg } from "../db/store.ts";
import type { Account, ExportFile } from "../plugin.ts";
import type { Runtime } from "../runtime.ts";
import { itemsOf, rawStands } from "../dav/state.ts";
import { fileName } from "./names.ts";

/** A row as a plain object by column name (the PostgreSQL store's raw rows are arrays that also answer by name). */
function plain(row: unknown): Record<string, unknown> {
  if (!Array.isArray(row)) return row as Record<string, unknown>;
  const names = Object.getOwnPropertyNames(row).filter((k) => k !== "length" && !/^\d+$/.test(k));
  return Object.fromEntries(names.map((k) => [k, (row as unknown as Record<string, unknown>)[k]]));
}

/** Tables and their columns, from the database itself: what a plugin's migrations made is what there is. */
async function tablesOf(rt: Runtime): Promise<Map<string, string[]>> {
  const rows = (
    isPg(rt.store)
      ? await rt.store.rdb.all(sql`SELECT table_name AS t, column_name AS c FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`)
      : await rt.store.rdb.all(sql`SELECT m.name AS t, p.name AS c FROM sqlite_master m JOIN pragma_table_info(m.name) p WHERE m.type = 'table' ORDER BY m.name, p.cid`)
  ).map(plain) as { t: string; c: string }[];
  const out = new Map<string, string[]>();
  for (const r of rows) out.set(r.t, [...(out.get(r.t) ?? []), r.c]);
  return out;
}

/** Columns that name the account a row is someone's by: who owns it, whose it is, who wrote or made it. */
const PERSON_COLUMNS = ["owner", "account", "author", "creator"];

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Writes the archive's entries through `add`; names are made unique as they come. */
async function entries(rt: Runtime, account: Account, add: (path: string, data: string | Uint8Array) => Promise<void>) {
  const taken = new Set<string>();
  const put = async (path: string, data: ExportFile["data"]) => {
    let p = path;
    for (let n = 2; taken.has(p); n++) p = path.replace(/(\.[^./]+)?$/, (ext) => ` (${n})${ext}`);
    taken.add(p);
    // A file's bytes are read when its turn comes, so a person's whole drive is never in memory at once.
    await add(p, typeof data === "function" ? await data() : data);
  };
  const tables = await tablesOf(rt);
  const services = [...rt.registry.plugins.values()].sort((a, b) => a.def.name.localeCompare(b.def.name));
  const call = newCall({ account, scopes: "*", via: "local" }, { id: `export-${crypto.randomUUID()}` });
  const origin = rt.config.HEARTH_PUBLIC_URL || "";
  await put("account.json", JSON.stringify({ username: account.username, admin: account.admin, exported: rt.clock.now().toISOString() }, null, 2));
  for (const p of services) {
    const name = p.def.name;
    if (p.def.exports) {
      const files: ExportFile[] = await p.def.exports(rt.makeCtx(name, "read", call, "export", origin));
      for (const f of files) await put(`${name}/${f.path}`, f.data);
    }
    const dav = p.def.dav;
    if (dav) {
      const ctx = rt.makeCtx(name, "write", call, "export", origin);
      const records = await dav.list(ctx);
      // The text a phone last sent stands where it is still the record; otherwise the record is rendered under the UID the phone knows it by.
      const items = new Map((await itemsOf(rt.store.rdb, account.id, name)).filter((i) => i.ref).map((i) => [i.ref!, i]));
      const texts = records.map((r) => {
        const item = items.get(r.id);
        if (item && rawStands(item)) return { id: r.id, text: item.raw! };
        return { id: r.id, text: dav.render(r, { uid: item?.uid ?? r.id }) };
      });
      // vCards follow one another in one file; an iCalendar object is a whole calendar, so each is a file of its own.
      if (dav.type === "addressbook") await put(`${name}/${name}.vcf`, texts.map((t) => t.text.replace(/\r?\n?$/, "\r\n")).join(""));
      else for (const t of texts) await put(`${name}/${fileName(t.id, ".ics")}`, t.text);
    }
    for (const [table, columns] of tables) {
      if (table !== name && !table.startsWith(`${name}_`)) continue;
      const keys = columns.filter((c) => PERSON_COLUMNS.includes(c));
      if (!keys.length) continue;
      const mine = sql.join(keys.map((k) => sql`${sql.raw(ident(k))} = ${account.id}`), sql` OR `);
      const rows = (await rt.store.rdb.all(sql`SELECT * FROM ${sql.raw(ident(table))} WHERE ${mine}`)).map(plain);
      if (rows.length) await put(`${name}/${table}.json`, JSON.stringify(rows, null, 2));
    }
  }
}

/** Bytes of the archive waiting to be read before it makes more: a slow download holds back the reading, not memory. */
const BUFFERED = 4 << 20;

/** The archive of everything `account` keeps here, as a stream of zip bytes. */
export function exportArchive(rt: Runtime, account: Account): ReadableStream<Uint8Array> {
  const mtime = rt.clock.now();
  let wake: (() => void) | null = null;
  let gone = false;
  const go = () => {
    wake?.();
    wake = null;
  };
  return new ReadableStream<Uint8Array>(
    {
      start(ctl) {
        const zip = new Zip((err, chunk, final) => {
          if (gone) return;
          if (err) return ctl.error(err);
          ctl.enqueue(chunk);
          if (final) ctl.close();
        });
        const room = async () => {
          while (!gone && (ctl.desiredSize ?? 1) <= 0) await new Promise<void>((r) => (wake = r));
          // The reader went away (a cancelled download): nothing more is read.
          if (gone) throw new Error("the export was cancelled");
        };
        entries(rt, account, async (path, data) => {
          const f = new ZipDeflate(path, { level: 6 });
          f.mtime = mtime;
          zip.add(f);
          f.push(typeof data === "string" ? new TextEncoder().encode(data) : data, true);
          await room();
        })
          .then(() => zip.end())
          .catch((e) => {
            zip.terminate();
            if (!gone) ctl.error(e);
          });
      },
      pull: go,
      cancel() {
        gone = true;
        go();
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: BUFFERED }),
  );
}
