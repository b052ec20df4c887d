// The person's calendar: a month, a week or a day in their own time zone
// (the browser's), repeats drawn where they fall, an event made by clicking a
// day, edited or moved by dragging it to another day, and what the agent, a
// phone or another tab changed shown as it happens (the live stream reloads
// events/list). An edit or a move is events/create given the event's id,
// which changes that event in place, as a calendar app syncing does.
import { call, Empty, Failure, formatDate, html, Loading, navigate, prepareDates, toast, undoable, useEffect, useKeys, useParams, useQuery, useRef, useState } from "hearth/ui";
import { addDays, dayKey, daysOf, occurrencesIn, parseDay, type CalEvent, type Occurrence, type Repeat, type Span, withOffset } from "./dates.ts";

const REPEATS: { value: Repeat | ""; label: string }[] = [
  { value: "", label: "Does not repeat" },
  { value: "daily", label: "Every day" },
  { value: "weekly", label: "Every week" },
  { value: "monthly", label: "Every month" },
  { value: "hourly", label: "Every hour" },
];
const repeatName = (r: Repeat | null) => REPEATS.find((x) => x.value === (r ?? ""))!.label;
// Every date and time the calendar shows, in the person's language: each formatter is made once (hearth/ui keeps
// them), and those the month always shows are made while events/list is on its way rather than as it is drawn.
const TIME: Intl.DateTimeFormatOptions = { hour: "2-digit", minute: "2-digit" };
const LONG_DAY: Intl.DateTimeFormatOptions = { weekday: "long", day: "numeric", month: "long", year: "numeric" };
const MONTH: Intl.DateTimeFormatOptions = { month: "long", year: "numeric" };
const WEEKDAY: Intl.DateTimeFormatOptions = { weekday: "short" };
const SHORT_DAY: Intl.DateTimeFormatOptions = { day: "numeric", month: "short" };
/** What toLocaleString() shows with no options: the date and the time to the second. */
const HISTORY: Intl.DateTimeFormatOptions = { year: "numeric", month: "numeric", day: "numeric", hour: "numeric", minute: "numeric", second: "numeric" };
const time = (d: Date) => formatDate(d, TIME);
const longDay = (d: Date) => formatDate(d, LONG_DAY);
const WEEKDAYS = Array.from({ length: 7 }, (_, i) => addDays(new Date(2024, 0, 1), i)); // a Monday, then the week
prepareDates(MONTH, LONG_DAY, WEEKDAY, TIME);

const STYLE = `
.cal-bar{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;justify-content:space-between;margin:0 0 .75rem}
.cal-bar h2{margin:0;font-size:1.25rem;min-width:12rem}
.cal-nav,.cal-views{display:flex;gap:.25rem}
.cal-nav button,.cal-views button{padding:.4rem .8rem}
.cal-views button[aria-pressed=true]{background:var(--accent);color:var(--bg)}
.month{list-style:none;margin:0;padding:0;display:grid;grid-template-columns:repeat(7,minmax(0,1fr));border-top:1px solid var(--line);border-left:1px solid var(--line)}
.weekdays{display:grid;grid-template-columns:repeat(7,minmax(0,1fr));margin:0;padding:0;list-style:none;color:var(--muted);font-size:.85rem;text-align:center}
.day{border-right:1px solid var(--line);border-bottom:1px solid var(--line);min-height:7rem;padding:.15rem;display:flex;flex-direction:column;gap:.15rem;min-width:0;cursor:pointer}
.day.other{background:color-mix(in srgb,var(--fg) 4%,transparent)}
.day.over{box-shadow:inset 0 0 0 3px var(--accent)}
.day-add{align-self:stretch;display:flex;justify-content:flex-start;background:transparent;color:var(--fg);border:0;padding:.2rem .35rem;min-height:2.75rem;font-weight:600;border-radius:.3rem}
.day-add:hover{background:color-mix(in srgb,var(--accent) 10%,transparent)}
.day.today .day-head>span{background:var(--accent);color:var(--bg);border-radius:1rem;padding:0 .45rem}
.day.other .day-add{color:var(--muted);font-weight:400}
.chips{list-style:none;margin:0;padding:0;display:flex;flex-direction:column;gap:.15rem}
.chip{display:block;width:100%;text-align:left;font-size:.85rem;font-weight:400;line-height:1.25;padding:.25rem .35rem;min-height:2.75rem;border-radius:.3rem;border:1px solid color-mix(in srgb,var(--accent) 45%,transparent);background:color-mix(in srgb,var(--accent) 12%,var(--bg));color:var(--fg);overflow:hidden;cursor:grab}
.chip .t{color:var(--muted);font-variant-numeric:tabular-nums;margin-right:.3rem}
.chip.dragging{opacity:.5}
.week,.dayview{list-style:none;margin:0;padding:0}
.week{display:grid;grid-template-columns:1fr;gap:.5rem}
@media (min-width:48rem){.week{grid-template-columns:repeat(7,minmax(0,1fr))}}
.week .day,.dayview .day{border:1px solid var(--line);border-radius:.5rem;min-height:9rem}
.day-head{display:flex;gap:.4rem;align-items:baseline}
@media (min-width:48rem){.week .day-head{flex-direction:column;gap:0}}
.dayview .chip{font-size:1rem;padding:.6rem .8rem}
.more{font-size:.8rem;color:var(--muted);padding:0 .3rem}
@media (max-width:47.99rem){.week .day{min-height:4rem}.month .day{min-height:4.5rem}.month .chip{font-size:.75rem;padding:.2rem}.month .chip .t{display:none}}
.agenda{display:none}
.agenda ul{list-style:none;margin:.75rem 0 0;padding:0}
.agenda button{display:flex;gap:.75rem;width:100%;text-align:left;border:0;border-bottom:1px solid var(--line);border-radius:0;color:var(--fg);font-weight:400;padding:.5rem .25rem}
.agenda .when{color:var(--muted);min-width:7.5rem;font-variant-numeric:tabular-nums}
.agenda .what{font-weight:600;overflow-wrap:anywhere}
@media (max-width:47.99rem){.agenda{display:block}.month .chip{padding:.15rem;white-space:nowrap;text-overflow:clip}}
dialog.event{border:1px solid var(--line);border-radius:.6rem;background:var(--bg);color:var(--fg);padding:1rem 1.25rem;width:min(34rem,calc(100% - 1.5rem));max-height:calc(100% - 2rem)}
dialog.event h2{margin:.25rem 0 .75rem;font-size:1.2rem}
dialog.event label{display:block;font-weight:600;margin:.6rem 0 .2rem}
dialog.event input,dialog.event select,dialog.event textarea{width:100%;max-width:none;min-height:2.75rem;font:inherit;padding:.6rem .7rem;border:1px solid var(--muted);border-radius:.4rem;background:var(--field);color:var(--fg)}
dialog.event textarea{font:inherit}
dialog.event .pair{display:grid;grid-template-columns:1fr 1fr;gap:0 .75rem}
dialog.event .acts{margin-top:1rem}
dialog.event .history{font-size:.9rem;color:var(--muted);margin:.75rem 0 0;padding-left:1.2rem}
.field-error{color:var(--bad);margin:.2rem 0 0;font-size:.93rem}
`;

type View = "month" | "week" | "day";

/** The days a view shows around its date: six weeks from the Monday before the 1st, the week from its Monday, or the day. */
function spanOf(view: View, at: Date): Span {
  if (view === "day") return { from: at, to: addDays(at, 1) };
  const monday = (d: Date) => addDays(d, -((d.getDay() + 6) % 7));
  if (view === "week") return { from: monday(at), to: addDays(monday(at), 7) };
  const first = monday(new Date(at.getFullYear(), at.getMonth(), 1));
  return { from: first, to: addDays(first, 42) };
}

function step(view: View, at: Date, by: number): Date {
  if (view === "month") return new Date(at.getFullYear(), at.getMonth() + by, 1);
  return addDays(at, view === "week" ? 7 * by : by);
}

export default function Calendar() {
  const params = useParams();
  const view = (["month", "week", "day"].includes(params.get("view") ?? "") ? params.get("view") : "month") as View;
  const at = parseDay(params.get("date")) ?? parseDay(dayKey(new Date()))!;
  const adding = parseDay(params.get("new"));
  const editing = params.get("edit");
  const events = useQuery<CalEvent[]>("events/list");
  const dragged = useRef<{ id: string; day: string } | null>(null);
  // The day a chip is dragged over, and the chip being dragged ("<day> <event id>").
  const [over, setOver] = useState<string | null>(null);
  const [dragging, setDragging] = useState<string | null>(null);
  const go = (p: Record<string, string | null>) => navigate(p);
  useKeys([
    { key: "n", does: "New event on the day shown", run: () => go({ new: dayKey(at), edit: null }) },
    { key: "t", does: "Go to today", run: () => go({ date: null }) },
    { key: "ArrowLeft", does: "Previous month, week or day", run: () => go({ date: dayKey(step(view, at, -1)) }) },
    { key: "ArrowRight", does: "Next month, week or day", run: () => go({ date: dayKey(step(view, at, 1)) }) },
    { key: "m", does: "Month view", run: () => go({ view: null }) },
    { key: "w", does: "Week view", run: () => go({ view: "week" }) },
    { key: "d", does: "Day view", run: () => go({ view: "day" }) },
  ]);
  if (events.data === undefined)
    return events.error ? html`<${Failure} error=${events.error} retry=${events.reload} />` : html`<${Loading} label="Loading your calendar…" />`;
  const list = events.data;
  const span = spanOf(view, at);
  const byDay = new Map<string, Occurrence[]>();
  for (const o of occurrencesIn(list, span)) {
    const k = dayKey(o.start);
    byDay.set(k, [...(byDay.get(k) ?? []), o]);
  }
  const move = async (id: string, from: string, to: string) => {
    const e = list.find((x) => x.id === id);
    if (!e || from === to) return;
    const days = Math.round((parseDay(to)!.getTime() - parseDay(from)!.getTime()) / 86_400_000);
    const start = new Date(Date.parse(e.when));
    try {
      await replace(e, { ...fieldsOf(e), when: withOffset(addDays(start, days)) });
      toast(`“${e.title}” moved to ${longDay(parseDay(to)!)}`);
    } catch (err) {
      toast(`Not moved: ${(err as Error).message}`, { kind: "error" });
    }
    await events.reload();
  };
  const todayKey = dayKey(new Date());
  const dayCell = (d: Date, o: { other?: boolean; cap?: number } = {}) => {
    const k = dayKey(d);
    const mine = byDay.get(k) ?? [];
    const shown = o.cap ? mine.slice(0, o.cap) : mine;
    return dayItem({ day: d, dayKey: k, today: k === todayKey, other: o.other, view, occurrences: shown, more: mine.length - shown.length, over: over === k, dragging });
  };
  // One listener of each kind on the grid, rather than five on each of its days: the day or chip an event concerns
  // is the one it happened in.
  const dayOf = (ev: Event) => (ev.target as Element).closest?.<HTMLElement>("[data-day]") ?? null;
  const chipOf = (ev: Event) => (ev.target as Element).closest?.<HTMLElement>(".chip") ?? null;
  const grid = {
    onClick: (ev: MouseEvent) => {
      const chip = chipOf(ev);
      const day = dayOf(ev);
      if (chip) go({ edit: chip.dataset.id!, new: null });
      else if (day) go({ new: day.dataset.day!, edit: null });
    },
    onDragStart: (ev: DragEvent) => {
      const chip = chipOf(ev);
      const day = dayOf(ev);
      if (!chip || !day) return;
      const from = { id: chip.dataset.id!, day: day.dataset.day! };
      ev.dataTransfer?.setData("application/x-hearth-event", JSON.stringify(from));
      if (ev.dataTransfer) ev.dataTransfer.effectAllowed = "move";
      dragged.current = from;
      setDragging(`${from.day} ${from.id}`);
    },
    onDragEnd: () => setDragging(null),
    onDragOver: (ev: DragEvent) => {
      const day = dayOf(ev);
      if (!day) return;
      ev.preventDefault();
      if (ev.dataTransfer) ev.dataTransfer.dropEffect = "move";
      setOver(day.dataset.day!);
    },
    onDragLeave: (ev: DragEvent) => {
      const day = dayOf(ev);
      if (day && !day.contains(ev.relatedTarget as Node)) setOver((o) => (o === day.dataset.day ? null : o));
    },
    onDrop: (ev: DragEvent) => {
      const day = dayOf(ev);
      if (!day) return;
      ev.preventDefault();
      setOver(null);
      const raw = ev.dataTransfer?.getData("application/x-hearth-event");
      const from = raw ? (JSON.parse(raw) as { id: string; day: string }) : dragged.current;
      dragged.current = null;
      if (from) void move(from.id, from.day, day.dataset.day!);
    },
  };
  const title =
    view === "month"
      ? formatDate(at, MONTH)
      : view === "week"
        ? `${formatDate(span.from, SHORT_DAY)} – ${formatDate(addDays(span.to, -1), { ...SHORT_DAY, year: "numeric" })}`
        : longDay(at);
  const editedEvent = editing ? list.find((e) => e.id === editing) : undefined;
  return html`<style>${STYLE}</style>
    <div class="cal-bar">
      <h2 id="cal-title" aria-live="polite">${title}</h2>
      <div class="cal-nav">
        <button type="button" class="quiet" aria-label=${`Previous ${view}`} aria-keyshortcuts="ArrowLeft" onClick=${() => go({ date: dayKey(step(view, at, -1)) })}>←</button>
        <button type="button" class="quiet" aria-keyshortcuts="t" onClick=${() => go({ date: null })}>Today</button>
        <button type="button" class="quiet" aria-label=${`Next ${view}`} aria-keyshortcuts="ArrowRight" onClick=${() => go({ date: dayKey(step(view, at, 1)) })}>→</button>
      </div>
      <div class="cal-views" role="group" aria-label="View">
        ${(["month", "week", "day"] as View[]).map(
          (v) => html`<button type="button" class="quiet" aria-pressed=${v === view ? "true" : "false"} aria-keyshortcuts=${v[0]} onClick=${() => go({ view: v === "month" ? null : v })}>${v[0].toUpperCase() + v.slice(1)}</button>`,
        )}
      </div>
    </div>
    ${list.length === 0 && html`<${Empty} title="No events coming up"><p>Click a day (or press <kbd>n</kbd>) to add one: a reminder, a meeting, or a prompt the agent runs when it comes.</p></${Empty}>`}
    ${view === "month"
      ? html`<ul class="weekdays" aria-hidden="true">${WEEKDAYS.map((d) => html`<li>${formatDate(d, WEEKDAY)}</li>`)}</ul>
          <ol class="month" aria-labelledby="cal-title" ...${grid}>${daysOf(span).map((d) => dayCell(d, { other: d.getMonth() !== at.getMonth(), cap: 3 }))}</ol>
          <${Agenda} list=${list} month=${at} open=${(id: string) => go({ edit: id, new: null })} />`
      : view === "week"
        ? html`<ol class="week" aria-labelledby="cal-title" ...${grid}>${daysOf(span).map((d) => dayCell(d))}</ol>`
        : html`<ol class="dayview" aria-labelledby="cal-title" ...${grid}>${dayCell(at)}</ol>`}
    ${adding && html`<${EventForm} key=${`new-${dayKey(adding)}`} day=${adding} close=${() => go({ new: null })} saved=${events.reload} />`}
    ${editing && editedEvent && html`<${EventForm} key=${editing} event=${editedEvent} close=${() => go({ edit: null })} saved=${events.reload} />`}
    ${editing && !editedEvent && !events.loading && html`<p class="alert" role="status">That event is no longer in your calendar: it was moved, changed elsewhere or cancelled.</p>`}`;
}

/** Where the agenda shows: a wide screen hides it (the month's cells have room for titles there). */
const NARROW = "(max-width: 47.99rem)";

/**
 * On a phone the month's cells are too narrow for titles: the month's events are listed under it too. Drawn once
 * the month is on the screen (it is below it, and a month of hourly repeats is hundreds of lines), and only where it
 * shows: on a wide screen it is never drawn, unless the window narrows.
 */
function Agenda({ list, month, open }: { list: CalEvent[]; month: Date; open: (id: string) => void }) {
  const [shown, setShown] = useState(false);
  useEffect(() => {
    const narrow = matchMedia(NARROW);
    const follow = () => setShown(narrow.matches);
    follow();
    narrow.addEventListener("change", follow);
    return () => narrow.removeEventListener("change", follow);
  }, []);
  if (!shown || list.length === 0) return null;
  const occurrences = occurrencesIn(list, { from: new Date(month.getFullYear(), month.getMonth(), 1), to: new Date(month.getFullYear(), month.getMonth() + 1, 1) });
  if (occurrences.length === 0) return null;
  return html`<section class="agenda" aria-labelledby="agenda-title">
    <h3 id="agenda-title" class="visually-hidden">This month's events</h3>
    <ul>${occurrences.map(
      (o) => html`<li key=${`${o.event.id}-${o.start.getTime()}`}><button type="button" class="quiet" onClick=${() => open(o.event.id)}>
        <span class="when">${formatDate(o.start, { weekday: "short", day: "numeric" })} · ${o.hourly ? "every hour" : time(o.start)}</span>
        <span class="what">${o.event.title}${o.event.repeat && !o.hourly ? html` <span class="hint">(${repeatName(o.event.repeat).toLowerCase()})</span>` : ""}</span></button></li>`,
    )}</ul>
  </section>`;
}

/** A day of the grid: plain markup, its clicks and drags told to the grid's listeners (data-day, a chip's data-id). */
function dayItem(p: { day: Date; dayKey: string; today: boolean; other?: boolean; view: View; occurrences: Occurrence[]; more: number; over: boolean; dragging: string | null }) {
  const label = `Add an event on ${longDay(p.day)}`;
  const heading =
    p.view === "month"
      ? html`<span>${p.day.getDate()}</span>`
      : html`<strong>${formatDate(p.day, { weekday: p.view === "day" ? "long" : "short" })}</strong><span>${formatDate(p.day, SHORT_DAY)}</span>`;
  return html`<li key=${p.dayKey} class=${`day${p.other ? " other" : ""}${p.today ? " today" : ""}${p.over ? " over" : ""}`} data-day=${p.dayKey}>
    <button type="button" class="day-add" title=${label}><span aria-hidden="true" class="day-head">${heading}</span><span class="visually-hidden">${label}</span></button>
    ${p.occurrences.length > 0 && html`<ul class="chips">${p.occurrences.map((o) => html`<li key=${`${o.event.id}-${o.start.getTime()}`}>${chip(o, p.dragging === `${p.dayKey} ${o.event.id}`)}</li>`)}</ul>`}
    ${p.more > 0 && html`<span class="more">and ${p.more} more</span>`}
  </li>`;
}

function chip(o: Occurrence, dragging: boolean) {
  const e = o.event;
  const extra = `${e.repeat && !o.hourly ? `, ${repeatName(e.repeat).toLowerCase()}` : ""}${e.prompt ? ", runs a prompt" : ""}`;
  return html`<button type="button" class=${`chip${dragging ? " dragging" : ""}`} draggable="true" data-event=${e.title} data-id=${e.id}><span class="t">${o.hourly ? "hourly" : time(o.start)}</span>${e.repeat ? html`<span aria-hidden="true">↻ </span>` : ""}${e.title}<span class="visually-hidden">${extra}</span></button>`;
}

/** The fields events/create takes, from an event as events/list gives it. */
function fieldsOf(e: CalEvent): Record<string, unknown> {
  return { title: e.title, when: e.when, minutes: e.minutes, ...(e.note ? { note: e.note } : {}), ...(e.repeat ? { repeat: e.repeat } : {}), ...(e.prompt ? { prompt: e.prompt } : {}) };
}

/** An event changed in place: events/create given its id keeps the id, its firing history and what links to it. */
async function replace(old: CalEvent, fields: Record<string, unknown>): Promise<CalEvent> {
  return await call<CalEvent>("events/create", { ...fields, id: old.id });
}

function EventForm({ day, event, close, saved }: { day?: Date; event?: CalEvent; close: () => void; saved: () => Promise<void> }) {
  const ref = useRef<HTMLDialogElement>(null);
  const [error, setError] = useState<{ field: string; message: string } | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    const d = ref.current!;
    d.showModal();
    const cancel = (ev: Event) => {
      ev.preventDefault();
      close();
    };
    d.addEventListener("cancel", cancel);
    return () => {
      d.removeEventListener("cancel", cancel);
      if (d.open) d.close();
    };
  }, []);
  const start = event ? new Date(Date.parse(event.when)) : null;
  const pad = (n: number) => String(n).padStart(2, "0");
  const submit = async (ev: Event) => {
    ev.preventDefault();
    const f = new FormData(ev.target as HTMLFormElement);
    const s = (k: string) => String(f.get(k) ?? "").trim();
    const date = s("date");
    const at = s("time") || "09:00";
    if (!date) return setError({ field: "date", message: "choose the day it is on" });
    const fields = {
      title: s("title"),
      when: withOffset(new Date(`${date}T${at}`)),
      minutes: Number(s("minutes")) || 30,
      ...(s("repeat") ? { repeat: s("repeat") } : {}),
      ...(s("prompt") ? { prompt: s("prompt") } : {}),
      ...(s("note") ? { note: s("note") } : {}),
    };
    setBusy(true);
    try {
      if (event) await replace(event, fields);
      else await call("events/create", fields);
      await saved();
      toast(event ? `Saved “${fields.title}”` : `Added “${fields.title}”`);
      close();
    } catch (e) {
      const field = (e as { field?: string }).field;
      setError({ field: field === "when" ? "date" : (field ?? "title"), message: (e as Error).message });
    } finally {
      setBusy(false);
    }
  };
  const remove = async () => {
    if (!event) return;
    try {
      await call("events/delete", { id: event.id });
    } catch (e) {
      return void toast(`Not cancelled: ${(e as Error).message}`, { kind: "error" });
    }
    close();
    await saved();
    undoable(`Cancelled “${event.title}”`, async () => {
      await call("events/create", fieldsOf(event));
      await saved();
    });
  };
  const err = (field: string) => (error?.field === field ? html`<p class="field-error" id=${`ev-${field}-error`}>${error.message}</p>` : null);
  const described = (field: string) => (error?.field === field ? `ev-${field}-error` : undefined);
  const dayValue = start ? dayKey(start) : dayKey(day!);
  return html`<dialog ref=${ref} class="event" aria-labelledby="ev-heading">
    <form onSubmit=${submit}>
      <h2 id="ev-heading">${event ? `Edit “${event.title}”` : `New event on ${longDay(day!)}`}</h2>
      <label for="ev-title">Title</label>
      <input id="ev-title" name="title" type="text" required maxLength="500" value=${event?.title ?? ""} autoFocus aria-describedby=${described("title")} />
      ${err("title")}
      <div class="pair">
        <div><label for="ev-date">${event?.repeat ? "Starts on" : "Day"}</label><input id="ev-date" name="date" type="date" required value=${dayValue} aria-describedby=${described("date")} /></div>
        <div><label for="ev-time">Time</label><input id="ev-time" name="time" type="time" required value=${start ? `${pad(start.getHours())}:${pad(start.getMinutes())}` : "09:00"} /></div>
      </div>
      ${err("date")}
      <div class="pair">
        <div><label for="ev-minutes">Minutes</label><input id="ev-minutes" name="minutes" type="number" min="1" max="1440" value=${event?.minutes ?? 30} aria-describedby=${described("minutes")} /></div>
        <div><label for="ev-repeat">Repeat</label><select id="ev-repeat" name="repeat" value=${event?.repeat ?? ""}>${REPEATS.map((r) => html`<option value=${r.value}>${r.label}</option>`)}</select></div>
      </div>
      ${err("minutes")}${err("repeat")}
      <label for="ev-prompt">Prompt for the agent (optional)</label>
      <textarea id="ev-prompt" name="prompt" rows="2" maxLength="10000" placeholder="Run each time it comes; the answer is mailed to you" aria-describedby=${described("prompt")}>${event?.prompt ?? ""}</textarea>
      ${err("prompt")}
      <label for="ev-note">Note (optional)</label>
      <textarea id="ev-note" name="note" rows="2" maxLength="10000" aria-describedby=${described("note")}>${event?.note ?? ""}</textarea>
      ${err("note")}
      ${event?.history && event.history.length > 0 && html`<ul class="history" aria-label="Recent firings">${event.history.map((h) => html`<li>${formatDate(h.at, HISTORY)}: ${h.status}${h.reason ? ` (${h.reason})` : ""}</li>`)}</ul>`}
      <div class="row spread acts">
        ${event ? html`<button type="button" class="quiet" onClick=${remove}>Cancel event</button>` : html`<span></span>`}
        <div class="row">
          <button type="button" class="quiet" onClick=${close}>Close</button>
          <button type="submit" disabled=${busy}>${event ? "Save" : "Add event"}</button>
        </div>
      </div>
    </form>
  </dialog>`;
}
