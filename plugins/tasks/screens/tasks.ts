// Tasks for the person: three columns by status (todo, doing, done), a card
// dragged from one to another (or moved with its "Move to" menu, from the
// keyboard or on a phone), due times with what is overdue marked, and tasks
// given to the agent with what it answered; a card's Edit changes its title,
// due time and who does it. It calls only tasks/list, tasks/create,
// tasks/update and tasks/delete, as any client would.
import { call, Empty, Failure, formatDate, html, Loading, navigate, toast, undoable, useKeys, useParams, useQuery, useRef, useState } from "hearth/ui";

export interface Task {
  id: string;
  title: string;
  detail: string;
  assignee: "me" | "agent";
  due: string | null;
  status: Status;
  result: string;
  created: string;
  updated: string;
  done: string | null;
}
type Status = "todo" | "doing" | "done";

const COLUMNS: { status: Status; title: string; empty: string }[] = [
  { status: "todo", title: "To do", empty: "Nothing waiting." },
  { status: "doing", title: "Doing", empty: "Nothing under way." },
  { status: "done", title: "Done", empty: "Nothing finished yet." },
];
const name = (s: Status) => COLUMNS.find((c) => c.status === s)!.title;
const WHEN: Intl.DateTimeFormatOptions = { weekday: "short", day: "numeric", month: "short", hour: "2-digit", minute: "2-digit" };
const when = (iso: string) => formatDate(iso, WHEN);

/** A datetime-local value ("2026-11-21T09:00"), in the person's own offset, as RFC 3339: tasks/create reads a bare time as UTC. */
export function withOffset(local: string): string {
  const d = new Date(local);
  const m = -d.getTimezoneOffset();
  const p = (n: number) => String(Math.floor(Math.abs(n))).padStart(2, "0");
  return `${local.length === 16 ? `${local}:00` : local}${m < 0 ? "-" : "+"}${p(m / 60)}:${p(m % 60)}`;
}

/** An instant as a datetime-local value in the person's own time ("2026-11-21T09:00"). */
export function localInput(iso: string): string {
  const d = new Date(iso);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

const STYLE = `
.board{display:grid;gap:1rem;grid-template-columns:1fr}
@media (min-width:48rem){.board{grid-template-columns:repeat(3,minmax(0,1fr))}}
.lanes{display:none}
@media (max-width:47.99rem){.lanes{display:grid;grid-template-columns:repeat(3,1fr);gap:.25rem;margin:0 0 .75rem}.lanes button{padding:.4rem .3rem}.lanes button[aria-pressed=true]{background:var(--accent);color:var(--bg)}.lanes button.over{box-shadow:0 0 0 3px var(--accent)}.lanes .count{font-weight:400}.column:not(.shown){display:none}}
.column{border:1px solid var(--line);border-radius:.6rem;padding:.5rem .75rem .75rem;min-height:8rem;background:color-mix(in srgb,var(--fg) 2%,transparent)}
.column.over{border-color:var(--accent);box-shadow:inset 0 0 0 2px var(--accent)}
.column h2{font-size:1.05rem;margin:.25rem 0 .5rem;display:flex;justify-content:space-between}
.column h2 .count{color:var(--muted);font-weight:400}
.cards{list-style:none;margin:0;padding:0;display:flex;flex-direction:column;gap:.5rem}
.card{border:1px solid var(--line);border-radius:.5rem;background:var(--field);padding:.5rem .6rem;cursor:grab}
.card.dragging{opacity:.5}
.card-title{font-weight:600;overflow-wrap:anywhere;margin:0}
.card.is-done .card-title{text-decoration:line-through;color:var(--muted)}
.card .meta{display:flex;flex-wrap:wrap;gap:.25rem .75rem;font-size:.9rem;color:var(--muted);margin:.2rem 0}
.card .overdue{color:var(--bad);font-weight:600}
.card .agent{color:var(--accent)}
.card .result{border-left:3px solid var(--accent);padding:.2rem .5rem;margin:.3rem 0;font-size:.93rem;white-space:pre-wrap;overflow-wrap:anywhere}
.card .detail{margin:.2rem 0;white-space:pre-wrap;overflow-wrap:anywhere;font-size:.95rem}
.card .acts{display:flex;gap:.5rem;align-items:center;margin-top:.3rem}
.card .acts select{flex:1;min-height:2.75rem;max-width:none}
.card .acts button{padding:.4rem .8rem}
form.new-task{border:1px solid var(--line);border-radius:.6rem;padding:.75rem 1rem;margin:0 0 1rem}
form.new-task .fields{display:grid;gap:.5rem 1rem;grid-template-columns:1fr}
@media (min-width:48rem){form.new-task .fields{grid-template-columns:2fr 1fr 1fr}}
form.new-task label{display:block;font-weight:600;margin:0 0 .2rem}
form.new-task input,form.new-task select,form.new-task textarea{width:100%;max-width:none;min-height:2.75rem;font:inherit;padding:.6rem .7rem;border:1px solid var(--muted);border-radius:.4rem;background:var(--field);color:var(--fg)}
form.new-task textarea{font:inherit;min-height:4rem}
.field-error{color:var(--bad);margin:.2rem 0 0;font-size:.93rem}
form.edit-task{display:grid;gap:.4rem;margin:.4rem 0 0}
form.edit-task label{font-weight:600;font-size:.93rem}
form.edit-task input,form.edit-task select{width:100%;max-width:none;min-height:2.75rem;font:inherit;padding:.5rem .6rem;border:1px solid var(--muted);border-radius:.4rem;background:var(--bg);color:var(--fg)}
`;

export default function Tasks() {
  const tasks = useQuery<Task[]>("tasks/list", {}, { all: true });
  const params = useParams();
  const adding = params.has("new");
  // On a phone one column shows at a time; its switches take a dragged card too.
  const lane = (COLUMNS.find((c) => c.status === params.get("lane"))?.status ?? "todo") as Status;
  const [over, setOver] = useState<Status | null>(null);
  const dragged = useRef<string | null>(null);
  useKeys([
    { key: "n", does: "New task", run: () => navigate({ new: "1" }) },
    { key: "Escape", does: "Close the new task form", run: () => navigate({ new: null }) },
  ]);
  if (tasks.data === undefined)
    return tasks.error ? html`<${Failure} error=${tasks.error} retry=${tasks.reload} />` : html`<${Loading} label="Loading your tasks…" />`;
  const all = tasks.data;
  const move = async (t: Task, status: Status) => {
    if (t.status === status) return;
    try {
      await call("tasks/update", { id: t.id, status });
      toast(`“${t.title}” moved to ${name(status)}`, { undo: () => void call("tasks/update", { id: t.id, status: t.status }).then(tasks.reload) });
    } catch (e) {
      toast(`Not moved: ${(e as Error).message}`, { kind: "error" });
    }
    await tasks.reload();
  };
  const remove = async (t: Task) => {
    try {
      await call("tasks/delete", { id: t.id });
    } catch (e) {
      return void toast(`Not deleted: ${(e as Error).message}`, { kind: "error" });
    }
    await tasks.reload();
    undoable(`Deleted “${t.title}”`, async () => {
      // The API has no restore: the task is made again from the copy held here (its status and result too).
      const back = await call<Task>("tasks/create", { title: t.title, detail: t.detail, assignee: t.assignee, ...(t.due ? { due: t.due } : {}) });
      if (t.status !== "todo" || t.result) await call("tasks/update", { id: back.id, status: t.status, ...(t.result ? { result: t.result } : {}) });
      await tasks.reload();
    });
  };
  const drop = (status: Status) => (ev: DragEvent) => {
    ev.preventDefault();
    setOver(null);
    const id = ev.dataTransfer?.getData("text/plain") || dragged.current;
    dragged.current = null;
    const t = all.find((x) => x.id === id);
    if (t) void move(t, status);
  };
  return html`<style>${STYLE}</style>
    <div class="row spread toolbar">
      <p class="hint">Drag a task to another column (on a phone, onto its name above), or use its <strong>Move to</strong> menu.</p>
      ${!adding && html`<button type="button" onClick=${() => navigate({ new: "1" })} aria-keyshortcuts="n">New task</button>`}
    </div>
    ${adding && html`<${NewTask} done=${async () => { navigate({ new: null }); await tasks.reload(); }} />`}
    ${all.length === 0 && !adding && html`<${Empty} title="No tasks yet"><p>Add one with <strong>New task</strong> (or press <kbd>n</kbd>). Give it to the agent and its answer shows here.</p></${Empty}>`}
    <div class="lanes" role="group" aria-label="Show">
      ${COLUMNS.map(
        (c) => html`<button type="button" class=${`quiet${over === c.status ? " over" : ""}`} data-drop=${c.status} aria-pressed=${lane === c.status ? "true" : "false"}
          onClick=${() => navigate({ lane: c.status === "todo" ? null : c.status }, { replace: true })}
          onDragOver=${(ev: DragEvent) => { ev.preventDefault(); setOver(c.status); }}
          onDragLeave=${() => setOver(null)}
          onDrop=${drop(c.status)}>${c.title} <span class="count">${all.filter((t) => t.status === c.status).length}</span></button>`,
      )}
    </div>
    <div class="board">
      ${COLUMNS.map((c) => {
        const mine = all.filter((t) => t.status === c.status);
        return html`<section class=${`column${over === c.status ? " over" : ""}${lane === c.status ? " shown" : ""}`} aria-labelledby=${`col-${c.status}`} data-status=${c.status}
          onDragOver=${(ev: DragEvent) => { ev.preventDefault(); if (ev.dataTransfer) ev.dataTransfer.dropEffect = "move"; setOver(c.status); }}
          onDragLeave=${(ev: DragEvent) => { if (!(ev.currentTarget as HTMLElement).contains(ev.relatedTarget as Node)) setOver(null); }}
          onDrop=${drop(c.status)}>
          <h2 id=${`col-${c.status}`}>${c.title} <span class="count">${mine.length}</span></h2>
          ${mine.length === 0
            ? html`<p class="hint">${c.empty}</p>`
            : html`<ul class="cards">${mine.map((t) => html`<${Card} key=${t.id} task=${t} move=${move} remove=${remove} dragged=${dragged} />`)}</ul>`}
        </section>`;
      })}
    </div>`;
}

function Card({ task: t, move, remove, dragged }: { task: Task; move: (t: Task, s: Status) => Promise<void>; remove: (t: Task) => Promise<void>; dragged: { current: string | null } }) {
  const [dragging, setDragging] = useState(false);
  const [editing, setEditing] = useState(false);
  const overdue = t.status !== "done" && t.due !== null && Date.parse(t.due) < Date.now();
  const id = `task-${t.id}`;
  return html`<li class=${`card${dragging ? " dragging" : ""}${t.status === "done" ? " is-done" : ""}`} draggable="true" data-task=${t.title} aria-labelledby=${id}
    onDragStart=${(ev: DragEvent) => { ev.dataTransfer?.setData("text/plain", t.id); if (ev.dataTransfer) ev.dataTransfer.effectAllowed = "move"; dragged.current = t.id; setDragging(true); }}
    onDragEnd=${() => setDragging(false)}>
    <p class="card-title" id=${id}>${t.title}</p>
    ${(t.due || t.assignee === "agent" || t.done) && html`<p class="meta">
      ${t.due && html`<span class=${overdue ? "overdue" : ""}>${overdue ? "Overdue: " : "Due "}${when(t.due)}</span>`}
      ${t.assignee === "agent" && html`<span class="agent">For the agent</span>`}
      ${t.status === "done" && t.done && html`<span>Done ${when(t.done)}</span>`}
    </p>`}
    ${t.detail && html`<p class="detail">${t.detail}</p>`}
    ${t.result && html`<p class="result"><span class="visually-hidden">Result: </span>${t.result}</p>`}
    ${editing
      ? html`<${EditTask} task=${t} close=${() => setEditing(false)} />`
      : html`<div class="acts">
      <label class="visually-hidden" for=${`${id}-move`}>Move “${t.title}” to</label>
      <select id=${`${id}-move`} value=${t.status} onChange=${(ev: Event) => void move(t, (ev.target as HTMLSelectElement).value as Status)}>
        ${COLUMNS.map((c) => html`<option value=${c.status}>${c.status === t.status ? c.title : `Move to ${c.title}`}</option>`)}
      </select>
      <button type="button" class="quiet" aria-label=${`Edit “${t.title}”`} onClick=${() => setEditing(true)}>Edit</button>
      <button type="button" class="quiet" aria-label=${`Delete “${t.title}”`} onClick=${() => void remove(t)}>Delete</button>
    </div>`}
  </li>`;
}

/** A card's title, due time and who does it, changed in place; the list reloads on its own once tasks/update goes through. */
function EditTask({ task: t, close }: { task: Task; close: () => void }) {
  const [error, setError] = useState<{ field: string; message: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const id = `edit-${t.id}`;
  const submit = async (ev: Event) => {
    ev.preventDefault();
    const f = new FormData(ev.target as HTMLFormElement);
    const due = String(f.get("due") ?? "");
    setBusy(true);
    try {
      await call("tasks/update", {
        id: t.id,
        title: String(f.get("title") ?? "").trim(),
        due: due ? withOffset(due) : "",
        assignee: f.get("assignee") === "agent" ? "agent" : "me",
      });
      toast(`Saved “${String(f.get("title") ?? "").trim()}”`);
      close();
    } catch (e) {
      setError({ field: (e as { field?: string }).field ?? "", message: (e as Error).message });
    } finally {
      setBusy(false);
    }
  };
  return html`<form class="edit-task" onSubmit=${submit} aria-label=${`Edit “${t.title}”`}>
    <label for=${`${id}-title`}>Title</label>
    <input id=${`${id}-title`} name="title" type="text" required maxLength="500" value=${t.title} autoFocus />
    <label for=${`${id}-due`}>Due (optional)</label>
    <input id=${`${id}-due`} name="due" type="datetime-local" value=${t.due ? localInput(t.due) : ""} />
    <label for=${`${id}-assignee`}>For</label>
    <select id=${`${id}-assignee`} name="assignee" value=${t.assignee}><option value="me">Me</option><option value="agent">The agent</option></select>
    ${error && html`<p class="field-error" role="alert">${error.message}</p>`}
    <div class="row end">
      <button type="button" class="quiet" onClick=${close}>Cancel</button>
      <button type="submit" disabled=${busy}>Save</button>
    </div>
  </form>`;
}

function NewTask({ done }: { done: () => Promise<void> }) {
  const [error, setError] = useState<{ field: string; message: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (ev: Event) => {
    ev.preventDefault();
    const f = new FormData(ev.target as HTMLFormElement);
    const due = String(f.get("due") ?? "");
    const detail = String(f.get("detail") ?? "").trim();
    setBusy(true);
    try {
      await call("tasks/create", {
        title: String(f.get("title") ?? "").trim(),
        assignee: f.get("assignee") === "agent" ? "agent" : "me",
        ...(due ? { due: withOffset(due) } : {}),
        ...(detail ? { detail } : {}),
      });
      await done();
    } catch (e) {
      setError({ field: (e as { field?: string }).field ?? "", message: (e as Error).message });
    } finally {
      setBusy(false);
    }
  };
  const err = (field: string) => error && (error.field === field || (field === "title" && !["due", "detail", "assignee"].includes(error.field))) ? html`<p class="field-error" id=${`new-${field}-error`}>${error.message}</p>` : null;
  return html`<form class="new-task" onSubmit=${submit} aria-labelledby="new-task-title">
    <h2 id="new-task-title" class="pane-title">New task</h2>
    <div class="fields">
      <div><label for="new-title">Title</label><input id="new-title" name="title" type="text" required maxLength="500" autoFocus aria-describedby=${error ? "new-title-error" : undefined} />${err("title")}</div>
      <div><label for="new-due">Due (optional)</label><input id="new-due" name="due" type="datetime-local" />${err("due")}</div>
      <div><label for="new-assignee">For</label><select id="new-assignee" name="assignee"><option value="me">Me</option><option value="agent">The agent</option></select></div>
    </div>
    <label for="new-detail">Detail (optional; what the agent should do)</label>
    <textarea id="new-detail" name="detail" rows="2" maxLength="20000"></textarea>
    ${err("detail")}
    <div class="row end">
      <button type="button" class="quiet" onClick=${() => navigate({ new: null })}>Cancel</button>
      <button type="submit" disabled=${busy}>Add task</button>
    </div>
  </form>`;
}
