// Reading a method's answer into a view, and keeping it current: it loads on
// mount and again whenever the live stream says one of `services` changed.
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { call } from "./call.ts";
import { pageAnswer } from "./first.ts";
import { isLive, live, onceLive } from "./live.ts";

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
  // The page may carry this read's answer (a screen's `reads`): then the view draws it at once, asking nothing.
  const fromPage = useRef<boolean | undefined>(undefined);
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>(() => {
    const hit = o.skip ? null : pageAnswer(method, o.all ? { ...args, limit: PAGE } : args);
    const page = hit && o.all ? (hit.value as { items?: T; cursor?: string } | null) : null;
    // A paged list with more after its first page is read to its end as any other.
    const data = !hit ? undefined : o.all ? (page && Array.isArray(page.items) && !page.cursor ? page.items : undefined) : (hit.value as T);
    fromPage.current = data !== undefined;
    return data !== undefined ? { data, error: null, loading: false } : { data: undefined, error: null, loading: !o.skip };
  });
  const key = JSON.stringify([method, args]);
  const seq = useRef(0);
  const read = async () => (o.all ? ((await callAll(method, args)) as T) : await call<T>(method, args));
  // The first read is sent as the view is first drawn rather than from its effect, which runs only once the page
  // is painted: on a screen's first load that paint is the slowest of all, and the answer can be on its way meanwhile.
  const early = useRef<{ key: string; answer: Promise<T> } | null | undefined>(undefined);
  if (early.current === undefined) {
    early.current = o.skip || fromPage.current ? null : { key, answer: read() };
    early.current?.answer.catch(() => {}); // told by reload, which takes it up
  }
  const reload = useCallback(
    async (again?: boolean) => {
      if (o.skip) return;
      const mine = ++seq.current;
      const sent = early.current?.key === key ? early.current.answer : null;
      early.current = null;
      if (!sent && !again) setState((s) => ({ ...s, loading: true }));
      try {
        const data = await (sent ?? read());
        // Read again only to be sure nothing was missed: the same answer draws nothing anew.
        if (mine === seq.current) setState((s) => (again && s.data !== undefined && !s.error && JSON.stringify(s.data) === JSON.stringify(data) ? s : { data, error: null, loading: false }));
      } catch (error) {
        if (mine === seq.current) setState((s) => ({ data: s.data, error, loading: false }));
      }
    },
    [key, o.skip, o.all],
  );
  useEffect(() => {
    const stop = live(() => void reload(), o.services ?? [method.split("/")[0]]);
    const paged = fromPage.current;
    fromPage.current = false;
    if (!paged) void reload();
    // The page's answer is as of the page, and a read sent before the live stream opened (it opens once the view is
    // drawn) may miss a change told before then: either is read once more when the stream opens (and drawn only if
    // it differs).
    if (!paged && isLive()) return stop;
    const cancel = onceLive(() => void reload(true));
    return () => {
      cancel();
      stop();
    };
  }, [reload]);
  return { ...state, reload: useCallback(() => reload(), [reload]) };
}
