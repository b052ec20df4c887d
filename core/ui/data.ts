// Reading a method's answer into a view, and keeping it current: it loads on
// mount and again whenever the live stream says one of `services` changed.
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { call } from "./call.ts";
import { live } from "./live.ts";

export interface Query<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  /** Loads again now (after a write of the view's own, or "Try again"). */
  reload: () => Promise<void>;
}

/** The most a list gives in one page (core/paging.ts). */
const PAGE = 1000;

/**
 * Every item of a list read in pages (`limit`/`cursor`): a list answered
 * without them stops at its first thousand, and a screen must show all that a
 * person has, not the first thousand of it.
 */
export async function callAll<T>(method: string, args: Record<string, unknown> = {}): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  do {
    const page = await call<{ items: T[]; cursor?: string }>(method, { ...args, limit: PAGE, ...(cursor && { cursor }) });
    items.push(...page.items);
    cursor = page.cursor;
  } while (cursor);
  return items;
}

/**
 * `useQuery("notes/list", {})`: the answer of a read method, reloaded on each
 * change to the method's service (or to `o.services`). A reload keeps what is
 * shown until the new answer arrives, so a list never blinks. `o.all` reads a
 * paged list to its end (`callAll`).
 */
export function useQuery<T = any>(method: string, args: Record<string, unknown> = {}, o: { services?: string[]; skip?: boolean; all?: boolean } = {}): Query<T> {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({ data: undefined, error: null, loading: !o.skip });
  const key = JSON.stringify([method, args]);
  const seq = useRef(0);
  const read = async () => (o.all ? ((await callAll(method, args)) as T) : await call<T>(method, args));
  // The first read is sent as the view is first drawn rather than from its effect, which runs only once the page
  // is painted: on a screen's first load that paint is the slowest of all, and the answer can be on its way meanwhile.
  const early = useRef<{ key: string; answer: Promise<T> } | null | undefined>(undefined);
  if (early.current === undefined) {
    early.current = o.skip ? null : { key, answer: read() };
    early.current?.answer.catch(() => {}); // told by reload, which takes it up
  }
  const reload = useCallback(async () => {
    if (o.skip) return;
    const mine = ++seq.current;
    const sent = early.current?.key === key ? early.current.answer : null;
    early.current = null;
    if (!sent) setState((s) => ({ ...s, loading: true }));
    try {
      const data = await (sent ?? read());
      if (mine === seq.current) setState({ data, error: null, loading: false });
    } catch (error) {
      if (mine === seq.current) setState((s) => ({ data: s.data, error, loading: false }));
    }
  }, [key, o.skip, o.all]);
  useEffect(() => {
    void reload();
    return live(() => void reload(), o.services ?? [method.split("/")[0]]);
  }, [reload]);
  return { ...state, reload };
}
