// Keyboard shortcuts for the common acts of a view: single keys that do not
// fire while the person types in a field (Escape and modified keys do), and
// that `?` lists in a dialog.
import { useEffect, useRef } from "preact/hooks";

export interface Shortcut {
  /** KeyboardEvent.key, with "Ctrl+"/"Meta+"/"Mod+" (Ctrl, or Cmd on a Mac) before it: "n", "/", "Escape", "Mod+s". */
  key: string;
  /** What it does, for the list `?` shows. */
  does: string;
  run: (ev: KeyboardEvent) => void;
}

const active = new Set<Shortcut[]>();

/** The shortcuts of every mounted view, for the help list. */
export function shortcuts(): Shortcut[] {
  return [...active].flat();
}

const typing = (t: EventTarget | null) => t instanceof HTMLElement && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));
const isMac = () => /Mac|iPhone|iPad/.test(navigator.platform);

function matches(s: string, ev: KeyboardEvent): boolean {
  const parts = s.split("+");
  const key = parts.pop()!;
  const mods = new Set(parts.map((p) => (p === "Mod" ? (isMac() ? "Meta" : "Ctrl") : p)));
  if (mods.has("Ctrl") !== ev.ctrlKey || mods.has("Meta") !== ev.metaKey || mods.has("Alt") !== ev.altKey) return false;
  return ev.key === key || ev.key.toLowerCase() === key.toLowerCase();
}

/** Binds shortcuts while the component is mounted. */
export function useKeys(list: Shortcut[]) {
  const ref = useRef(list);
  ref.current = list;
  useEffect(() => {
    const mine = ref.current;
    active.add(mine);
    const onKey = (ev: KeyboardEvent) => {
      if (ev.defaultPrevented) return;
      for (const s of ref.current) {
        const plain = !s.key.includes("+") && s.key !== "Escape";
        if (plain && typing(ev.target)) continue;
        if (matches(s.key, ev)) {
          ev.preventDefault();
          s.run(ev);
          return;
        }
      }
    };
    document.addEventListener("keydown", onKey);
    return () => {
      document.removeEventListener("keydown", onKey);
      active.delete(mine);
    };
  }, []);
}
