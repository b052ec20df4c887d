// The apps an instance starts with, so the directory is never empty and each
// shows how a page keeps its data through hearth.store.

const shell = (title: string, style: string, body: string, script: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>
:root{color-scheme:light dark}
body{font:1rem/1.5 system-ui,sans-serif;margin:0;padding:1rem;max-width:32rem}
button{font:inherit;padding:.4rem .8rem;min-height:2.5rem;border-radius:.4rem;border:1px solid #8a3b12;background:#8a3b12;color:#fff;cursor:pointer}
button.quiet{background:transparent;color:inherit;border-color:#999}
input[type=text]{font:inherit;padding:.4rem;width:100%;box-sizing:border-box}
${style}
</style>
</head>
<body>
${body}
<script>
${script}
</script>
</body>
</html>
`;

const checklist = shell(
  "Checklist",
  `ul{list-style:none;padding:0}li{display:flex;gap:.5rem;align-items:center;padding:.3rem 0;border-bottom:1px solid #ccc}li span{flex:1}li.done span{text-decoration:line-through;opacity:.6}form{display:flex;gap:.5rem}`,
  `<h1>Checklist</h1>
<form id="add"><label for="item" hidden>New item</label><input type="text" id="item" placeholder="Add an item" required><button>Add</button></form>
<ul id="list"></ul>
<p><button class="quiet" id="clear" type="button">Remove done items</button></p>`,
  `let items = [];
const list = document.getElementById("list");
function draw() {
  list.replaceChildren(...items.map((it, i) => {
    const li = document.createElement("li");
    if (it.done) li.className = "done";
    const box = document.createElement("input");
    box.type = "checkbox"; box.checked = it.done; box.setAttribute("aria-label", it.text);
    box.onchange = () => { it.done = box.checked; save(); };
    const text = document.createElement("span"); text.textContent = it.text;
    const del = document.createElement("button"); del.className = "quiet"; del.textContent = "✕"; del.setAttribute("aria-label", "Remove " + it.text);
    del.onclick = () => { items.splice(i, 1); save(); };
    li.append(box, text, del);
    return li;
  }));
}
function save() { draw(); return hearth.store.set("items", items); }
document.getElementById("add").onsubmit = (e) => {
  e.preventDefault();
  const input = document.getElementById("item");
  if (!input.value.trim()) return;
  items.push({ text: input.value.trim(), done: false });
  input.value = "";
  save();
};
document.getElementById("clear").onclick = () => { items = items.filter((i) => !i.done); save(); };
hearth.store.get("items").then((v) => { items = Array.isArray(v) ? v : []; draw(); });`,
);

const counter = shell(
  "Counter",
  `#count{font-size:4rem;font-weight:700;margin:1rem 0}.row{display:flex;gap:.5rem}`,
  `<h1>Counter</h1>
<output id="count" aria-live="polite">…</output>
<div class="row"><button id="minus" type="button" aria-label="Minus one">−1</button><button id="plus" type="button" aria-label="Plus one">+1</button><button class="quiet" id="reset" type="button">Reset</button></div>`,
  `let count = 0;
const out = document.getElementById("count");
function set(n) { count = n; out.textContent = String(count); return hearth.store.set("count", count); }
document.getElementById("plus").onclick = () => set(count + 1);
document.getElementById("minus").onclick = () => set(count - 1);
document.getElementById("reset").onclick = () => set(0);
hearth.store.get("count").then((v) => { count = typeof v === "number" ? v : 0; out.textContent = String(count); });`,
);

const habits = shell(
  "Habit tracker",
  `table{border-collapse:collapse;width:100%}th,td{padding:.3rem;text-align:center;border-bottom:1px solid #ccc}th:first-child,td:first-child{text-align:left}form{display:flex;gap:.5rem;margin-top:1rem}.streak{font-weight:600}`,
  `<h1>Habit tracker</h1>
<table><thead><tr id="head"><th>Habit</th></tr></thead><tbody id="rows"></tbody></table>
<form id="add"><label for="habit" hidden>New habit</label><input type="text" id="habit" placeholder="A new habit" required><button>Add</button></form>`,
  `const DAYS = 7;
let habits = [];
const day = (offset) => { const d = new Date(); d.setDate(d.getDate() - offset); return d.toISOString().slice(0, 10); };
function streak(h) { let n = 0; while (h.days.includes(day(n))) n++; return n; }
function draw() {
  const head = document.getElementById("head");
  head.replaceChildren(head.firstElementChild);
  for (let i = DAYS - 1; i >= 0; i--) { const th = document.createElement("th"); th.textContent = day(i).slice(5); head.append(th); }
  const streakHead = document.createElement("th"); streakHead.textContent = "Streak"; head.append(streakHead);
  document.getElementById("rows").replaceChildren(...habits.map((h, hi) => {
    const tr = document.createElement("tr");
    const name = document.createElement("td"); name.textContent = h.name; tr.append(name);
    for (let i = DAYS - 1; i >= 0; i--) {
      const td = document.createElement("td");
      const box = document.createElement("input");
      box.type = "checkbox"; box.checked = h.days.includes(day(i)); box.setAttribute("aria-label", h.name + " on " + day(i));
      box.onchange = () => { const d = day(i); h.days = box.checked ? [...h.days, d] : h.days.filter((x) => x !== d); save(); };
      td.append(box); tr.append(td);
    }
    const s = document.createElement("td"); s.className = "streak"; s.textContent = String(streak(h)); tr.append(s);
    return tr;
  }));
}
function save() { draw(); return hearth.store.set("habits", habits); }
document.getElementById("add").onsubmit = (e) => {
  e.preventDefault();
  const input = document.getElementById("habit");
  if (!input.value.trim()) return;
  habits.push({ name: input.value.trim(), days: [] });
  input.value = "";
  save();
};
hearth.store.get("habits").then((v) => { habits = Array.isArray(v) ? v : []; draw(); });`,
);

// Each element closed by a tag of its own, as sanitiseIcon writes SVG: a starter's icon is stored as it is given, so a first start need not load the sanitiser (index.ts).
const icon = (path: string) =>
  `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" fill="none" stroke="#8a3b12" stroke-width="2" stroke-linecap="round" stroke-linejoin="round">${path.replace(/<(\w+)([^>]*?)\/>/g, "<$1$2></$1>")}</svg>`;

export const STARTERS = [
  {
    slug: "checklist",
    name: "Checklist",
    description: "A list of things to do; tick them off, clear the done ones. Kept for you on this instance.",
    tags: "productivity,lists",
    icon: icon(`<path d="M9 11l3 3 8-8"/><path d="M20 12v7a2 2 0 0 1-2 2H6a2 2 0 0 1-2-2V5a2 2 0 0 1 2-2h9"/>`),
    html: checklist,
  },
  {
    slug: "counter",
    name: "Counter",
    description: "A number that goes up and down and stays where you left it.",
    tags: "tools",
    icon: icon(`<circle cx="12" cy="12" r="9"/><path d="M12 8v8M8 12h8"/>`),
    html: counter,
  },
  {
    slug: "habit-tracker",
    name: "Habit tracker",
    description: "Tick off habits day by day and watch the streaks grow over the last week.",
    tags: "productivity,health",
    icon: icon(`<rect x="3" y="4" width="18" height="17" rx="2"/><path d="M3 9h18M8 2v4M16 2v4M8 14l2 2 4-4"/>`),
    html: habits,
  },
];
