// The person's address book: a searchable list beside the open contact, its
// name, every email and phone (each with its kind) and note edited and saved
// (Ctrl+S), deleted with an Undo, and vCards imported and exported. It calls
// only contacts/list, contacts/add and contacts/delete, as any client would.
// A card synced from an address book app keeps every other line it holds
// (photo, address…): contacts/add rewrites only the lines that changed.
import { call, CallError, confirm, Empty, Failure, formatDate, html, Loading, navigate, SearchList, toast, undoable, useEffect, useKeys, useParams, useQuery, useRef, useState } from "hearth/ui";
import { parseCards, writeCards, type Contact } from "./vcard.ts";

const when = (iso: string) => formatDate(iso, { dateStyle: "medium", timeStyle: "short" });
/** The contact last saved here: its editor opens saying so, though the save renamed it or gave it an id. */
let lastSaved: string | null = null;
const extras = (c: Contact) => (c.emails?.length ?? 0) > 1 || (c.phones?.length ?? 0) > 1;

/** An email or phone as the editor holds it. */
type Entry = { value: string; type: string };
/** A contact's emails or phones, the primary first, with their kinds. */
function entriesOf(c: Contact | null, kind: "email" | "phone"): Entry[] {
  if (!c) return [{ value: "", type: "" }];
  const values = (kind === "email" ? c.emails : c.phones) ?? [(kind === "email" ? c.email : c.phone) ?? ""];
  const types = (kind === "email" ? c.email_types : c.phone_types) ?? [];
  const list = values.map((value, i) => ({ value, type: types[i] ?? "" }));
  return list.length ? list : [{ value: "", type: "" }];
}
/** What contacts/add takes: the rows with something in them, trimmed. */
const sent = (list: Entry[]) => list.filter((e) => e.value.trim()).map((e) => ({ value: e.value.trim(), ...(e.type ? { type: e.type } : {}) }));
const KINDS = { email: ["home", "work", "other"], phone: ["cell", "home", "work", "other"] };

const STYLE = `
.contact form { display: grid; gap: .25rem; max-width: 36rem; }
.contact .field-error { color: var(--bad); margin: 0 0 .5rem; }
.contact fieldset { border: 0; margin: 0 0 .5rem; padding: 0; min-width: 0; }
.contact legend { font-weight: 600; padding: 0; margin: 0 0 .25rem; }
.contact .entry { display: grid; grid-template-columns: minmax(0, 1fr) 7.5rem auto; gap: .4rem; align-items: center; margin: 0 0 .4rem; max-width: 36rem; }
.contact .entry select { min-height: 2.75rem; font: inherit; padding: .4rem; border: 1px solid var(--muted); border-radius: .4rem; background: var(--field); color: var(--fg); }
.contact .entry button { padding: .4rem .7rem; }
@media (max-width: 30rem) { .contact .entry { grid-template-columns: minmax(0, 1fr) auto; } .contact .entry input { grid-column: 1 / -1; } }
.contacts-tools { gap: .5rem; }
.contact input[type=email], .contact input[type=tel] { width: 100%; max-width: 28rem; font: inherit; padding: .6rem .7rem; border: 1px solid var(--muted); border-radius: .4rem; background: var(--field); color: var(--fg); }
.contact input[readonly] { border-style: dashed; }
.contacts-tools .file-button { position: relative; display: inline-flex; align-items: center; min-height: 2.75rem; padding: .6rem 1.1rem; border: 1px solid var(--accent); border-radius: .4rem; color: var(--accent); font-weight: 600; }
.contacts-tools input[type=file] { position: absolute; inset: 0; opacity: 0; width: 100%; cursor: pointer; }
.contacts-tools .file-button:focus-within { outline: 3px solid var(--accent); outline-offset: 2px; }
`;

export default function Contacts() {
  const params = useParams();
  const open = params.get("open");
  const creating = params.has("new");
  const contacts = useQuery<Contact[]>("contacts/list", {}, { all: true });
  useKeys([
    { key: "n", does: "New contact", run: () => navigate({ new: "1", open: null }) },
    { key: "Escape", does: "Back to the list (on a phone)", run: () => navigate({ open: null, new: null }) },
  ]);
  if (contacts.data === undefined)
    return contacts.error ? html`<${Failure} error=${contacts.error} retry=${contacts.reload} />` : html`<${Loading} label="Loading your contacts…" />`;
  const list = contacts.data;
  const current = open === null ? null : (list.find((c) => c.id === open) ?? null);
  const editing = creating || open !== null;
  return html`<style>${STYLE}</style>
  <div class=${`split${editing ? " editing" : ""}`}>
    <section class="pane list" aria-label="Your contacts">
      <${Tools} list=${list} reload=${contacts.reload} />
      <${SearchList}
        items=${list}
        label="Search contacts"
        searchId="contact-search"
        keyOf=${(c: Contact) => c.id}
        title=${(c: Contact) => c.name}
        detail=${(c: Contact) => [c.email, c.phone].filter(Boolean).join(" · ")}
        text=${(c: Contact) => [c.name, ...(c.emails ?? [c.email ?? ""]), ...(c.phones ?? [c.phone ?? ""]), c.note ?? ""].join(" ")}
        selected=${open}
        onOpen=${(c: Contact) => navigate({ open: c.id, new: null })}
        empty=${html`<${Empty} title="No contacts yet"><p>Add one with <strong>New contact</strong> (or press <kbd>n</kbd>), or import a vCard file.</p></${Empty}>`}
      />
    </section>
    <section class="pane editor" aria-label="Contact">
      ${
        creating || current
          ? html`<${Editor} key=${current?.id ?? "new"} contact=${current} all=${list} reload=${contacts.reload} />`
          : open !== null
            ? html`<${Empty} title="This contact is gone"><p>It was deleted or renamed elsewhere.</p></${Empty}>`
            : html`<${Empty} title="No contact open"><p>Pick someone from the list, or add a new contact.</p></${Empty}>`
      }
    </section>
  </div>`;
}

/** New contact, import and export. */
function Tools({ list, reload }: { list: Contact[]; reload: () => Promise<void> }) {
  const [busy, setBusy] = useState("");
  const importFile = async (e: Event) => {
    const input = e.target as HTMLInputElement;
    const file = input.files?.[0];
    input.value = "";
    if (!file) return;
    const cards = parseCards(await file.text());
    if (!cards.length) return void toast(`No contacts found in ${file.name}`, { kind: "error" });
    let done = 0;
    const failed: string[] = [];
    for (const c of cards) {
      setBusy(`Importing ${done + failed.length + 1} of ${cards.length}…`);
      try {
        await call("contacts/add", { name: c.name, emails: c.emails.map((value) => ({ value })), phones: c.phones.map((value) => ({ value })), ...(c.note && { note: c.note }) });
        done++;
      } catch (err) {
        failed.push(`${c.name}: ${(err as Error).message}`);
      }
    }
    setBusy("");
    await reload();
    toast(`Imported ${done} contact${done === 1 ? "" : "s"}${failed.length ? `; ${failed.length} refused: ${failed.slice(0, 3).join("; ")}` : ""}`, failed.length ? { kind: "error" } : {});
  };
  const exportAll = () => {
    const url = URL.createObjectURL(new Blob([writeCards(list)], { type: "text/vcard" }));
    const a = document.createElement("a");
    a.href = url;
    a.download = "contacts.vcf";
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  };
  return html`<div class="row contacts-tools">
    <button type="button" onClick=${() => navigate({ new: "1", open: null })} aria-keyshortcuts="n">New contact</button>
    <span class="file-button"><span aria-hidden="true">Import vCard</span>
      <input type="file" accept=".vcf,text/vcard,text/x-vcard" aria-label="Import vCard" onChange=${importFile} disabled=${!!busy} /></span>
    <button type="button" class="quiet" onClick=${exportAll} disabled=${!list.length}>Export vCard</button>
    ${busy && html`<span role="status" class="hint">${busy}</span>`}
  </div>`;
}

type Fields = { name: string; emails: Entry[]; phones: Entry[]; note: string };
type Errors = Partial<Record<"name" | "emails" | "phones" | "note" | "form", string>>;
const same = (a: Fields, b: Fields) => JSON.stringify(a) === JSON.stringify(b);

function Editor({ contact, all, reload }: { contact: Contact | null; all: Contact[]; reload: () => Promise<void> }) {
  const start: Fields = { name: contact?.name ?? "", emails: entriesOf(contact, "email"), phones: entriesOf(contact, "phone"), note: contact?.note ?? "" };
  const [f, setF] = useState<Fields>(start);
  const [errors, setErrors] = useState<Errors>({});
  const [status, setStatus] = useState(contact && lastSaved === contact.id ? "Saved" : "");
  const typed = useRef(f);
  typed.current = f;
  const dirty = !same(f, start);
  // A card with more emails or phones than one keeps its name: contacts/add finds a contact by name, so a rename here would be another contact, without the rest of a synced card.
  const fixedName = contact !== null && extras(contact);
  const change = (next: Partial<Fields>) => {
    setF({ ...typed.current, ...next });
    setStatus("");
  };
  // A change made elsewhere (the app syncing, another tab) shows here when nothing typed is waiting to be saved.
  const seen = useRef(start);
  useEffect(() => {
    const was = seen.current;
    seen.current = start;
    if (same(typed.current, was)) setF(start);
  }, [contact?.updated]);

  const save = async () => {
    const v = typed.current;
    const name = v.name.trim().replace(/\s+/g, " ");
    if (!name) return setErrors({ name: "Give the contact a name." });
    const renamed = contact !== null && name.toLowerCase() !== contact.name.toLowerCase();
    const clash = all.find((c) => c.id !== contact?.id && c.name.toLowerCase() === name.toLowerCase());
    if (clash) return setErrors({ name: `“${clash.name}” is already in your contacts: choose another name, or open that contact.` });
    setErrors({});
    setStatus("Saving…");
    try {
      const saved = await call<Contact>("contacts/add", { name, emails: sent(v.emails), phones: sent(v.phones), note: v.note });
      // A rename: the contact is under its new name before the old one goes, so nothing is lost if this fails.
      if (renamed) await call("contacts/delete", { id: contact!.id });
      lastSaved = saved.id;
      // "Saved" only once the list and the address show the saved contact: a new one opens as itself then, and what is
      // typed after the word appears is typed into it, not into a form about to be replaced.
      await reload();
      navigate({ open: saved.id, new: null }, { replace: true });
      setStatus("Saved");
    } catch (e) {
      const err = e as CallError;
      setStatus(`Not saved: ${err.message}`);
      const field = err.field === "email" ? "emails" : err.field === "phone" ? "phones" : err.field;
      setErrors(field && ["name", "emails", "phones", "note"].includes(field) ? { [field]: err.message } : { form: err.message });
    }
  };

  const remove = async () => {
    if (!contact) return navigate({ new: null });
    const held = contact;
    if (!(await confirm({ title: `Delete “${held.name}”?`, message: "You can undo this for a few seconds after.", confirm: "Delete", danger: true }))) return;
    try {
      await call("contacts/delete", { id: held.id });
    } catch (e) {
      return void toast(`Not deleted: ${(e as Error).message}`, { kind: "error" });
    }
    navigate({ open: null });
    undoable(`Deleted “${held.name}”`, async () => {
      const back = await call<Contact>("contacts/add", { name: held.name, emails: sent(entriesOf(held, "email")), phones: sent(entriesOf(held, "phone")), note: held.note ?? "" });
      await reload();
      navigate({ open: back.id });
    });
  };
  useKeys([{ key: "Mod+s", does: "Save the contact", run: () => void save() }]);

  const err = (k: keyof Errors, id = `contact-${k}-error`) => errors[k] && html`<p class="field-error" id=${id}>${errors[k]}</p>`;
  return html`<div class="contact">
    <div class="row spread toolbar">
      <button type="button" class="quiet back" onClick=${() => navigate({ open: null, new: null })}>← All contacts</button>
      <span class=${`save-status${status.startsWith("Not saved:") ? " bad" : ""}`} role="status">${status || (dirty ? "Not saved yet" : "")}</span>
      <button type="button" class="quiet" onClick=${remove}>${contact ? "Delete" : "Discard"}</button>
    </div>
    <form onSubmit=${(e: Event) => (e.preventDefault(), void save())} novalidate>
      <label for="contact-name">Name</label>
      <input id="contact-name" type="text" value=${f.name} onInput=${(e: Event) => change({ name: (e.target as HTMLInputElement).value })} autoFocus=${contact === null} readOnly=${fixedName}
        aria-invalid=${errors.name ? "true" : undefined} aria-describedby=${errors.name ? "contact-name-error" : fixedName ? "contact-name-hint" : undefined} autocomplete="off" />
      ${fixedName && html`<p class="hint" id="contact-name-hint">Renamed in your address book app, which keeps all of this card.</p>`}
      ${err("name")}
      <${Entries} kind="email" label="Email" list=${f.emails} error=${errors.emails} onChange=${(emails: Entry[]) => change({ emails })} />
      <${Entries} kind="phone" label="Phone" list=${f.phones} error=${errors.phones} onChange=${(phones: Entry[]) => change({ phones })} />
      <label for="contact-note">Note</label>
      <textarea id="contact-note" rows="5" value=${f.note} onInput=${(e: Event) => change({ note: (e.target as HTMLTextAreaElement).value })} aria-describedby=${errors.note ? "contact-note-error" : undefined}></textarea>
      ${err("note")}
      ${errors.form && html`<p class="alert">${errors.form}</p>`}
      <div class="row"><button type="submit" aria-keyshortcuts="Control+S">Save</button></div>
    </form>
    ${contact && html`<p class="hint">Added ${when(contact.created)}; changed ${when(contact.updated)}.</p>`}
  </div>`;
}

/**
 * A contact's emails (or phones): one row each, the primary first, with its
 * kind and a Remove, and one more added with a button. A refusal names the
 * list and the row ("emails[1] is not an address"): that row is marked.
 */
function Entries({ kind, label, list, error, onChange }: { kind: "email" | "phone"; label: string; list: Entry[]; error?: string; onChange: (l: Entry[]) => void }) {
  const bad = error ? Number(/\[(\d+)\]/.exec(error)?.[1] ?? 0) : -1;
  const at = (i: number, e: Partial<Entry>) => onChange(list.map((x, j) => (j === i ? { ...x, ...e } : x)));
  const id = (i: number) => (i === 0 ? `contact-${kind}` : `contact-${kind}-${i}`);
  const kinds = (t: string) => (t && !KINDS[kind].includes(t) ? [t, ...KINDS[kind]] : KINDS[kind]);
  return html`<fieldset>
    <legend>${label}${list.length > 1 ? "s" : ""}</legend>
    ${list.map(
      (e, i) => html`<div class="entry">
        <label class="visually-hidden" for=${id(i)}>${i === 0 ? label : `${label} ${i + 1}`}</label>
        <input id=${id(i)} type=${kind === "email" ? "email" : "tel"} value=${e.value} autocomplete="off"
          onInput=${(ev: Event) => at(i, { value: (ev.target as HTMLInputElement).value })}
          aria-invalid=${bad === i ? "true" : undefined} aria-describedby=${bad === i ? `contact-${kind}-error` : undefined} />
        <label class="visually-hidden" for=${`${id(i)}-type`}>Kind of ${label.toLowerCase()} ${i + 1}</label>
        <select id=${`${id(i)}-type`} value=${e.type} onChange=${(ev: Event) => at(i, { type: (ev.target as HTMLSelectElement).value })}>
          <option value="">No kind</option>
          ${kinds(e.type).map((t) => html`<option value=${t}>${t[0]!.toUpperCase()}${t.slice(1)}</option>`)}
        </select>
        <button type="button" class="quiet" aria-label=${`Remove ${label.toLowerCase()} ${i + 1}`} onClick=${() => onChange(list.length > 1 ? list.filter((_x, j) => j !== i) : [{ value: "", type: "" }])}>Remove</button>
      </div>`,
    )}
    ${error && html`<p class="field-error" id=${`contact-${kind}-error`}>${error}</p>`}
    <button type="button" class="quiet" onClick=${() => onChange([...list, { value: "", type: "" }])}>Add ${label.toLowerCase()}</button>
  </fieldset>`;
}
