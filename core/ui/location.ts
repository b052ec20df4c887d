// A view's own state in its address (?open=Shopping), so a reload, a link or
// the back button lands where the person was. Changes push history entries.
import { useEffect, useState } from "preact/hooks";

const watchers = new Set<() => void>();
if (typeof window !== "undefined") window.addEventListener("popstate", () => watchers.forEach((fn) => fn()));

/** The page's query parameters, updated when navigate() or the back button changes them. */
export function useParams(): URLSearchParams {
  const [params, setParams] = useState(() => new URLSearchParams(location.search));
  useEffect(() => {
    const fn = () => setParams(new URLSearchParams(location.search));
    watchers.add(fn);
    return () => void watchers.delete(fn);
  }, []);
  return params;
}

/** Sets the query parameters (null removes one); `replace` rewrites the current history entry instead. */
export function navigate(params: Record<string, string | null>, o: { replace?: boolean } = {}) {
  const next = new URLSearchParams(location.search);
  for (const [k, v] of Object.entries(params)) v === null ? next.delete(k) : next.set(k, v);
  const q = next.toString();
  const url = location.pathname + (q ? `?${q}` : "");
  if (o.replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  watchers.forEach((fn) => fn());
}
